"""A run's problems in the order a candidate's author fixes them, for every reader (console, Markdown).

Failures come first, grouped by surface and by their most severe mismatch
class (one bug usually fails many cases the same way); then the other
divergences (errors, crashes, timeouts, protocol errors, cases not run, out-of-date
expectations, stale recordings), one by one; skips last, counted by surface
and reason, so that a candidate answering few surfaces still sees its
failures first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from conformance.core.compare import most_severe
from conformance.core.outcomes import Outcome
from conformance.report.model import CaseLine


@dataclass
class Problems:
    # surface -> most severe class -> the failing lines, each group in report order
    failures: dict[str, dict[str, list[CaseLine]]] = field(default_factory=dict)
    others: list[CaseLine] = field(default_factory=list)
    skips: Counter[tuple[str, str]] = field(default_factory=Counter)  # (surface, reason) -> cases

    @property
    def failing(self) -> int:
        return sum(len(lines) for groups in self.failures.values() for lines in groups.values())

    @property
    def skipped(self) -> int:
        return sum(self.skips.values())

    def __bool__(self) -> bool:
        return bool(self.failures or self.others or self.skips)


def problems(records: Iterable[CaseLine]) -> Problems:
    found = Problems()
    for record in records:
        if record.outcome is Outcome.FAIL:
            main = most_severe(record.mismatches)
            group = found.failures.setdefault(record.surface, {})
            group.setdefault(main.value if main is not None else "fail", []).append(record)
        elif record.outcome is Outcome.SKIP:
            found.skips[(record.surface, skip_reason(record))] += 1
        elif not record.conforms or record.stale:
            found.others.append(record)
    found.failures = {surface: dict(sorted(groups.items())) for surface, groups in sorted(found.failures.items())}
    return found


def skip_reason(record: CaseLine) -> str:
    lines = record.detail.strip().splitlines()
    return lines[0][:200] if lines else "(no reason given)"
