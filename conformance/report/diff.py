"""Two reports compared by case id: what diverges now that did not, what was fixed, what changed.

A line's state is its divergence signature (outcome and mismatch classes,
see :attr:`conformance.report.model.CaseLine.signature`), or ``pass``. ``xfail``
counts as the divergence it was expected to be: an expectation file changes
whether a run passes, not what the candidate did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.report.model import Signature, describe
from conformance.report.reader import Report

KINDS = ("new-divergence", "fixed", "changed", "only-in-a", "only-in-b")
# The kinds that make `conformance diff` exit 1: B is worse than A, or different.
REGRESSIONS = frozenset({"new-divergence", "changed"})


@dataclass(frozen=True)
class Change:
    id: str
    surface: str
    kind: str
    before: str  # "pass", "fail [value]", ... or "-" when absent
    after: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "surface": self.surface, "kind": self.kind, "a": self.before, "b": self.after}


def _states(report: Report) -> dict[str, tuple[str, Signature | None]]:
    return {r.id: (r.surface, r.signature) for r in report.records}


def diff(a: Report, b: Report) -> list[Change]:
    """Every id whose state differs between ``a`` and ``b``, sorted by surface and id."""
    before, after = _states(a), _states(b)
    changes = []
    for case_id in sorted(set(before) | set(after)):
        if case_id not in after:
            surface, sig = before[case_id]
            changes.append(Change(case_id, surface, "only-in-a", describe(sig), "-"))
            continue
        if case_id not in before:
            surface, sig = after[case_id]
            changes.append(Change(case_id, surface, "only-in-b", "-", describe(sig)))
            continue
        surface, old = before[case_id]
        _, new = after[case_id]
        if old == new:
            continue
        kind = "new-divergence" if old is None else "fixed" if new is None else "changed"
        changes.append(Change(case_id, surface, kind, describe(old), describe(new)))
    return sorted(changes, key=lambda c: (c.surface, KINDS.index(c.kind), c.id))


def markdown(changes: list[Change], a_name: str, b_name: str) -> str:
    counts = {k: sum(c.kind == k for c in changes) for k in KINDS}
    lines = [f"## `{a_name}` → `{b_name}`", "",
             ", ".join(f"{n} {k}" for k, n in counts.items()) if changes else "No case changed.", ""]
    if changes:
        lines += ["| surface | id | change | A | B |", "|---|---|---|---|---|"]
        lines += [f"| `{c.surface}` | `{c.id}` | {c.kind} | {c.before} | {c.after} |" for c in changes]
        lines.append("")
    return "\n".join(lines)
