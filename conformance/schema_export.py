"""Every JSON Schema the suite publishes, generated from its pydantic models."""

from __future__ import annotations

from typing import Any

from conformance.connection import protocol
from conformance.core import surfaces
from conformance.corpus.cases import CaseFile
from conformance.report import model as report_model
from conformance.report import reproducer
from conformance.run import config, replay
from conformance.run.expectations import ExpectationFile

VALUE_TAGS_NOTE = (
    "Values in case files use YAML tags: !float (decimal, inf, -inf, nan, -nan or "
    "bits:<16 hex digits>), !bytes (UTF-8 of a string), !hex (bytes by hex digits). "
    "This schema describes the file after those tags are constructed."
)


def all_schemas() -> dict[str, dict[str, Any]]:
    out = dict(protocol.schemas())
    case_file = CaseFile.model_json_schema()
    case_file["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    case_file["title"] = "harbor-conformance case file"
    case_file["description"] = VALUE_TAGS_NOTE
    out["case-file.json"] = case_file
    known = ExpectationFile.model_json_schema()
    known["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    known["title"] = "harbor-conformance expectation file"
    known["description"] = "A candidate's known divergences from the oracle, by case id (see docs/upgrade-gate.md)."
    out["expectation-file.json"] = known
    out["report-line.json"] = report_model.schema()
    out["replay.json"] = replay.schema()
    out["config.json"] = config.schema()
    out["reproducer.json"] = reproducer.schema()
    for surface in surfaces.SURFACES.values():
        schema = surface.input_model.model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["title"] = f"{surface.name} input"
        schema["description"] = f"{surface.summary}. Output: {surface.output}."
        out[f"input-{surface.name}.json"] = schema
        output = surface.output_adapter().json_schema()
        output["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        output["title"] = f"{surface.name} output"
        output["description"] = (f"The value of an answer on {surface.name}: {surface.output}. A raised exception is "
                                 f"no output (see protocol-run-reply.json).")
        out[f"output-{surface.name}.json"] = output
    return out
