"""A report as a badge: the JSON that shields.io's endpoint badge reads.

    {"schemaVersion": 1, "label": "harbor 0.13.1", "message": "554/554 cases", "color": "brightgreen"}
"""

from __future__ import annotations

from typing import Any

from conformance.core.outcomes import Outcome
from conformance.report.reader import Report


def render(report: Report) -> dict[str, Any]:
    tally = report.tally()
    oracle = report.oracle_spec.replace("==", " ")
    finished = report.finished
    known = tally.outcomes[Outcome.XFAIL]
    if tally.total:
        message = f"{tally.conforming}/{tally.total} cases"
    else:
        message = f"{sum(g.inputs_run for g in tally.generated.values())} inputs"
    if known:
        message += f", {known} known"
    if tally.findings:
        message += f", {len(tally.findings)} generated divergence(s)"
    if not finished:
        message += ", unfinished"
    color = "brightgreen" if tally.conforms and finished and not known else (
        "yellow" if tally.conforms and finished else "red")
    return {"schemaVersion": 1, "label": f"{oracle} conformance", "message": message, "color": color}
