"""A report as a badge: the JSON that shields.io's endpoint badge reads.

    {"schemaVersion": 1, "label": "harbor 0.13.1", "message": "fastsum 1.2: 567/567 cases, 2000 generated",
     "color": "brightgreen"}

It names what was certified: the candidate as its handshake names it, the oracle (and that its answers were the
corpus's recordings, when they were), the cases and generated inputs, and
whether the run covered less than the whole suite (some surfaces, some
cases, one shard). A run that covered less says "partial" whatever its
colour; a run that did not finish, or diverged, is red; one that conforms with warnings (docs/warnings.md) is
orange and names them.
"""

from __future__ import annotations

from typing import Any

from conformance import ORACLE_RELEASE
from conformance.core import surfaces
from conformance.core.outcomes import Outcome
from conformance.report.model import Header, warning_names
from conformance.report.reader import Summarised


def label(head: Header | None) -> str:
    spec = head.oracle.spec if head is not None else "?"
    if spec == "recorded":
        return f"harbor {ORACLE_RELEASE} (recorded)"
    return spec.replace("==", " ")


def partial(head: Header | None) -> str | None:
    """How a run covered less than the whole suite, in a few words; None when it covered it all."""
    if head is None:
        return "no header"
    if head.shard is not None:
        return f"shard {head.shard.index}/{head.shard.count}"
    if head.case_globs:
        return "cases " + ", ".join(head.case_globs)
    every = sorted(surfaces.SURFACES)
    run = [name for name in every if name in head.surfaces]
    if len(run) == len(every):
        return None
    return ", ".join(run) if 0 < len(run) <= 3 else f"{len(run)}/{len(every)} surfaces"


def render(report: Summarised) -> dict[str, Any]:
    tally = report.tally()
    known = tally.outcomes[Outcome.XFAIL]
    inputs = sum(g.inputs_run for g in tally.generated.values())
    parts = [f"{tally.conforming}/{tally.total} cases"] if tally.total else []
    # The candidate as it names itself; a spec is a path on some machine, which a public badge does not show.
    candidate = report.candidate
    named = candidate.display_name if candidate.implementation is not None else "never started"
    if tally.generated:
        parts.append(f"{inputs} generated")
    if known:
        parts.append(f"{known} known")
    if tally.findings:
        parts.append(f"{len(tally.findings)} generated divergence(s)")
    if (narrower := partial(report.header)) is not None:
        parts.append(f"partial: {narrower}")
    if not report.finished:
        parts.append("unfinished")
    conforms = tally.conforms and report.finished
    if warned := warning_names(tally.warnings()):
        parts.append(("conforms with warnings: " if conforms else "warnings: ") + ", ".join(warned))
    color = ("red" if not conforms else "orange" if warned else "yellow" if known else "brightgreen")
    message = f"{named}: {', '.join(parts)}" if parts else named
    return {"schemaVersion": 1, "label": label(report.header), "message": message, "color": color}
