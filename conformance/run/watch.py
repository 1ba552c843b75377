"""What a run tells whoever watches it, as it happens: a progress display, a log, a test.

A certification calls these in order: ``started`` once, ``case`` for each
record as it is kept (a generated divergence included), ``generating`` and
``generated_input`` while a surface's generator runs, ``generated`` when it
ends. The base class ignores them all, so a watcher overrides what it shows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from conformance.report.model import CaseLine, GeneratedLine


@dataclass(frozen=True)
class Outline:
    """What a run is about to do."""

    cases: Counter[str]  # cases still to run, by surface (a resumed run's finished ones left out)
    generators: tuple[str, ...]  # surfaces whose generated inputs run after the cases
    budgets: dict[str, int]  # generated inputs of each surface in generators, at most
    profile: str


class Watcher:
    def started(self, outline: Outline) -> None:
        """Before the first case."""

    def case(self, record: CaseLine) -> None:
        """A record was written to the report."""

    def generating(self, surface: str, budget: int) -> None:
        """A surface's generator starts."""

    def generated_input(self, surface: str) -> None:
        """One generated input went through oracle and candidate (shrinking included)."""

    def generated(self, line: GeneratedLine) -> None:
        """A surface's generator ended."""

    def finished(self) -> None:
        """The run is over, however it ended."""
