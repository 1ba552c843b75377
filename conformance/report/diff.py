"""Two reports compared by case id: what diverges now that did not, what was fixed, what changed.

A line's state is its divergence signature (outcome and mismatch classes,
see :attr:`conformance.report.model.CaseLine.signature`), or ``pass``. ``xfail``
counts as the divergence it was expected to be: an expectation file changes
whether a run passes, not what the candidate did.

B is no worse than A when it has no new divergence, none changed, every
declared case of A is in B, and both runs finished: a case B lacks, or a
run that did not finish, is one the comparison cannot vouch for. A case only
in B (the corpus grew) and a generated finding only in A (B did not find
it) are said, and fail nothing; so are reports of two comparator versions,
whose classes can differ where the candidates do not.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from conformance.report.model import CaseLine, Footer, Header, Signature, describe
from conformance.report.reader import Line, Report

KINDS = ("new-divergence", "fixed", "changed", "only-in-a", "only-in-b")
# The kinds that make `conformance diff` exit 1: B is worse than A, or different (and "only-in-a" for a
# declared case: B did not check it).
REGRESSIONS = frozenset({"new-divergence", "changed"})


@dataclass(frozen=True)
class Change:
    id: str
    surface: str
    kind: str
    before: str  # "pass", "fail [value]", ... or "-" when absent
    after: str
    generated: bool = False  # a generated finding, not a declared case

    @property
    def missing(self) -> bool:
        """A declared case of A that B has no line for."""
        return self.kind == "only-in-a" and not self.generated

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "surface": self.surface, "kind": self.kind, "a": self.before, "b": self.after}


State = tuple[str, Signature | None, bool]  # surface, signature, generated


@dataclass
class Side:
    """What a diff needs of one report: each case's state (never its whole line), and whether the run finished."""

    finished: bool = False
    states: dict[str, State] = field(default_factory=dict)
    comparator: str | None = None  # the comparator version its header names

    def add(self, line: Line) -> None:
        if isinstance(line, Header):
            self.comparator = line.comparator
        elif isinstance(line, CaseLine):  # the surface's name interned: one string for all its cases
            self.states[line.id] = (sys.intern(line.surface), line.signature, line.generated)
        elif isinstance(line, Footer):
            self.finished = True

    @classmethod
    def of(cls, report: Report | Iterable[Line]) -> Side:
        side = cls()
        lines: Iterable[Line] = report.records if isinstance(report, Report) else report
        for line in lines:
            side.add(line)
        side.finished = side.finished or (isinstance(report, Report) and report.finished)
        if isinstance(report, Report) and report.header is not None:
            side.comparator = report.header.comparator
        return side


def diff(a: Report | Side, b: Report | Side) -> list[Change]:
    """Every id whose state differs between ``a`` and ``b``, sorted by surface and id."""
    before = (a if isinstance(a, Side) else Side.of(a)).states
    after = (b if isinstance(b, Side) else Side.of(b)).states
    changes = []
    for case_id in sorted(set(before) | set(after)):
        if case_id not in after:
            surface, sig, generated = before[case_id]
            changes.append(Change(case_id, surface, "only-in-a", describe(sig), "-", generated))
            continue
        if case_id not in before:
            surface, sig, generated = after[case_id]
            changes.append(Change(case_id, surface, "only-in-b", "-", describe(sig), generated))
            continue
        surface, old, _ = before[case_id]
        _, new, generated = after[case_id]
        if old == new:
            continue
        kind = "new-divergence" if old is None else "fixed" if new is None else "changed"
        changes.append(Change(case_id, surface, kind, describe(old), describe(new), generated))
    return sorted(changes, key=lambda c: (c.surface, KINDS.index(c.kind), c.id))


def caveats(changes: list[Change], a: Side, b: Side, a_name: str = "A", b_name: str = "B") -> list[str]:
    """What keeps the comparison from vouching for B, each in a sentence: a run that did not finish, declared cases
    B lacks. Any of them makes `conformance diff` exit 1, as a regression does."""
    said = [f"{name} did not finish (no footer): the cases it did not reach cannot be compared"
            for name, side in ((a_name, a), (b_name, b)) if not side.finished]
    missing = [c.id for c in changes if c.missing]
    if missing:
        said.append(f"{b_name} has no line for {len(missing)} case(s) of {a_name}: " + ", ".join(missing[:5])
                    + (" ..." if len(missing) > 5 else ""))
    return said


def remarks(a: Side, b: Side, a_name: str = "A", b_name: str = "B") -> list[str]:
    """What a reader of the changes should know and that fails nothing: reports of two comparator versions."""
    if a.comparator is None or b.comparator is None or a.comparator == b.comparator:
        return []
    return [f"{a_name} was compared by comparator {a.comparator}, {b_name} by {b.comparator}: a class that changed "
            "may be the comparator's doing, not the candidate's (since 1.2, floats of two signs or more than 2^20 "
            "ULPs apart are float-far, not ulp)"]


def markdown(changes: list[Change], a_name: str, b_name: str, notes: Iterable[str] = ()) -> str:
    counts = {k: sum(c.kind == k for c in changes) for k in KINDS}
    lines = [f"## `{a_name}` → `{b_name}`", "",
             ", ".join(f"{n} {k}" for k, n in counts.items()) if changes else "No case changed.", ""]
    lines += [line for note in notes for line in (f"> {note}", "")]
    if changes:
        lines += ["| surface | id | change | A | B |", "|---|---|---|---|---|"]
        lines += [f"| `{c.surface}` | `{c.id}` | {c.kind} | {c.before} | {c.after} |" for c in changes]
        lines.append("")
    return "\n".join(lines)
