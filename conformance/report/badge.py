"""A report as a badge: the JSON that shields.io's endpoint badge reads.

    {"schemaVersion": 1, "label": "harbor 0.13.1", "message": "554/554 cases", "color": "brightgreen"}
"""

from __future__ import annotations

from typing import Any

from conformance.report.model import Report


def render(report: Report) -> dict[str, Any]:
    tally = report.tally()
    head = report.header or {}
    oracle = head.get("oracle", {}).get("spec", "?").replace("==", " ")
    finished = report.footer is not None
    conforming = tally.outcomes["pass"] + tally.outcomes["xfail"]
    if tally.total:
        message = f"{conforming}/{tally.total} cases"
    else:
        message = f"{sum(g['inputs_run'] for g in tally.generated.values())} inputs"
    if tally.outcomes["xfail"]:
        message += f", {tally.outcomes['xfail']} known"
    if tally.findings:
        message += f", {len(tally.findings)} generated divergence(s)"
    if not finished:
        message += ", unfinished"
    color = "brightgreen" if tally.conforms and finished and not tally.outcomes["xfail"] else (
        "yellow" if tally.conforms and finished else "red")
    return {"schemaVersion": 1, "label": f"{oracle} conformance", "message": message, "color": color}
