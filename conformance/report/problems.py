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
    """The problems of a run, gathered line by line; with ``keep``, only the first ``keep`` lines of each group
    of failures and of the other problems are kept (the rest counted), so a summary of any report is small."""

    keep: int | None = None
    # surface -> most severe class -> the failing lines (kept), each group in report order
    _failures: dict[str, dict[str, list[CaseLine]]] = field(default_factory=dict)
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (surface, class) -> failing cases
    others: list[CaseLine] = field(default_factory=list)  # kept
    other_count: int = 0
    skips: Counter[tuple[str, str]] = field(default_factory=Counter)  # (surface, reason) -> cases

    @classmethod
    def of(cls, records: Iterable[CaseLine], keep: int | None = None) -> Problems:
        found = cls(keep)
        for record in records:
            found.add(record)
        return found

    def add(self, record: CaseLine) -> None:
        if record.outcome is Outcome.FAIL:
            main = most_severe(record.mismatches)
            cls = main.value if main is not None else "fail"
            self.counts[(record.surface, cls)] += 1
            group = self._failures.setdefault(record.surface, {}).setdefault(cls, [])
            if self.keep is None or len(group) < self.keep:
                group.append(record)
        elif record.outcome is Outcome.SKIP:
            self.skips[(record.surface, skip_reason(record))] += 1
        elif not record.conforms or record.stale:
            self.other_count += 1
            if self.keep is None or len(self.others) < self.keep:
                self.others.append(record)

    @property
    def failures(self) -> dict[str, dict[str, list[CaseLine]]]:
        """surface -> class -> the failing lines kept, surfaces and classes sorted."""
        return {surface: dict(sorted(groups.items())) for surface, groups in sorted(self._failures.items())}

    def failing_in(self, surface: str, cls: str) -> int:
        return self.counts[(surface, cls)]

    @property
    def failing(self) -> int:
        return sum(self.counts.values())

    @property
    def skipped(self) -> int:
        return sum(self.skips.values())

    def __bool__(self) -> bool:
        return bool(self.counts or self.other_count or self.skips)


def problems(records: Iterable[CaseLine]) -> Problems:
    return Problems.of(records)


def skip_reason(record: CaseLine) -> str:
    lines = record.detail.strip().splitlines()
    return lines[0][:200] if lines else "(no reason given)"
