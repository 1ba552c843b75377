"""result.load on the oracle's side: a result.json read back through harbor's own models.

Runs inside the oracle's virtualenv (standard library and harbor), loaded
by path by ``oracles/harbor_adapter.py``. The file is written to disk and
read as harbor reads it, ``model_validate_json(path.read_text())``, then
written again as harbor writes it, ``model_dump_json(indent=4)``.

Two values harbor draws at random while it validates are masked, so that
an answer is a function of the file alone: a trial result's ``id`` when
the file leaves it out (``uuid4``), and the ``trial_name`` of a trial
config that names none (``<task>__`` and seven ShortUUID letters): the
letters become ``<shortuuid>``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the adapter's Context and the kit's Handler, for the type check only (oracles/harbor_adapter.py)
    from conformance_kit.candidate import Handler
    from harbor_adapter import Context

GENERATED_ID = "<uuid4>"  # as conformance/surfaces/result_load/__init__.py
GENERATED_SUFFIX = "<shortuuid>"
_SUFFIX_LENGTH = 7  # TrialConfig.generate_trial_name: ShortUUID().random(length=7)


def _mask_trial(given: Any, written: dict[str, Any]) -> None:
    """Mask what harbor drew for one trial result: ``given`` is the file's own object for it (as json reads it)."""
    if not isinstance(given, dict):
        return
    if "id" not in given:
        written["id"] = GENERATED_ID
    config = given.get("config")
    if isinstance(config, dict) and not config.get("trial_name"):
        name = written["config"]["trial_name"]
        written["config"]["trial_name"] = name[:-_SUFFIX_LENGTH] + GENERATED_SUFFIX


def _mask(file: str, text: str, written: dict[str, Any]) -> None:
    try:
        given = json.loads(text)
    except ValueError:  # harbor's JSON reader took what json's refuses: nothing is known to mask
        return
    if file == "trial":
        _mask_trial(given, written)
    elif isinstance(given, dict) and isinstance(given.get("trial_results"), list):
        for given_trial, written_trial in zip(given["trial_results"], written["trial_results"], strict=False):
            _mask_trial(given_trial, written_trial)


def serve(context: Context) -> Handler:
    from harbor.models.job.result import JobResult
    from harbor.models.trial.result import TrialResult
    from pydantic import BaseModel, ValidationError

    if TYPE_CHECKING:  # the module the adapter loads under that name
        import surface_result_load_reasons as reasons
    else:
        reasons = context.load("result.load", "reasons")
    models: dict[str, type[BaseModel]] = {"job": JobResult, "trial": TrialResult}
    path = context.workdir / "result.json"

    def load(request: dict[str, Any]) -> dict[str, Any]:
        model = models[request["file"]]
        path.write_bytes(request["data"])
        text = path.read_text()  # a file that is not UTF-8 raises here, as it does in harbor
        value = model.model_validate_json(text)
        dumped = value.model_dump_json(indent=4)
        try:
            reloaded = "same" if model.model_validate_json(dumped) == value else "differs"
        except ValidationError as refused:
            reloaded = reasons.reason_code(str(refused)) or type(refused).__name__
        written = json.loads(dumped)
        _mask(request["file"], text, written)
        return {"model": model.__name__, "written": written, "reloaded": reloaded}

    return load
