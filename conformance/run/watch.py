"""What a run tells whoever watches it, as it happens: a progress display, a log, a test.

A watcher is a handler of the run's events (:mod:`conformance.run.events`),
told them as these calls, in order: ``started`` once, ``case`` for each
record as it is kept (a generated divergence included), ``generating`` and
``generated_input`` while a surface's generator runs, ``generated`` when it
ends, ``finished`` once, however the run ended. The base class ignores them
all, so a watcher overrides what it shows.
"""

from __future__ import annotations

from conformance.report.model import CaseLine, GeneratedLine
from conformance.run.events import (
    CandidateRestarted,
    CaseFinished,
    Event,
    FindingFound,
    GenerationStarted,
    InputGenerated,
    Outline,
    RunFinished,
    RunStarted,
    SurfaceFinished,
)

__all__ = ["Outline", "Watcher"]


class Watcher:
    def handle(self, event: Event) -> None:
        """One event of the run, told as the call below that shows it (the others are not shown)."""
        match event:
            case RunStarted(outline=outline):
                self.started(outline)
            case CaseFinished(line=line) | FindingFound(line=line):
                self.case(line)
            case GenerationStarted(surface=surface, budget=budget):
                self.generating(surface, budget)
            case InputGenerated(surface=surface):
                self.generated_input(surface)
            case CandidateRestarted(surface=surface, restarts=restarts):
                self.restarted(surface, restarts)
            case SurfaceFinished(line=done):
                self.generated(done)
            case RunFinished():
                self.finished()

    def started(self, outline: Outline) -> None:
        """Before the first case."""

    def case(self, record: CaseLine) -> None:
        """A record was written to the report."""

    def generating(self, surface: str, budget: int) -> None:
        """A surface's generator starts."""

    def generated_input(self, surface: str) -> None:
        """One generated input went through oracle and candidate (shrinking included)."""

    def restarted(self, surface: str, restarts: int) -> None:
        """The candidate's process was lost on a ``surface`` input and started again (``restarts`` so far)."""

    def generated(self, line: GeneratedLine) -> None:
        """A surface's generator ended."""

    def finished(self) -> None:
        """The run is over, however it ended."""
