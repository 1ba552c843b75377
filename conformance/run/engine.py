"""The one engine of a run: inputs through the oracle and the candidate, each line decided once, as events.

An :class:`Engine` runs cases and generators on a candidate and an oracle
it is given; each line it makes is finished there (the expectation file
applied) and emitted on a :class:`Stream`, which hands each event
(:mod:`conformance.run.events`) to its tally first, then to its handlers in
order. A front end is the handlers it registers and what it feeds the
engine: ``conformance certify`` (:mod:`conformance.run.certification`: the
report file, then the progress display), the pytest plugin (each item
listens while it runs; the process that writes the report replays every
item's lines into a report file), a campaign (a worker's task, and the
merged report that replays each new finding).

The tally (:class:`~conformance.report.writer.Tally`) counts only what the
events tell (:func:`counted`); a run's footer is the tally's, emitted with
:class:`~conformance.run.events.RunFinished`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, Self

from conformance.connection.base import Connection
from conformance.core.compare import NanPolicy
from conformance.corpus.cases import LoadedCase
from conformance.report.model import CandidateLine, CaseLine, Footer, GeneratedLine
from conformance.report.writer import ReportWriter, Tally
from conformance.run import generate as generation
from conformance.run.events import (
    CandidateFailed,
    CandidateRestarted,
    CaseFinished,
    ConnectionCounts,
    Event,
    ExpectationsChecked,
    FindingFound,
    GenerationStarted,
    InputGenerated,
    RunFinished,
    RunStarted,
    SurfaceFinished,
    of_line,
)
from conformance.run.expectations import Expectations
from conformance.run.runner import Oracle, run_cases
from conformance.run.stored_inputs import InputStore

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase


class Handler(Protocol):
    def handle(self, event: Event) -> None:
        """One event of the run, as it happens."""


def counted(tally: Tally, event: Event) -> None:
    """What an event changes in the run's totals: the only way a run's events reach its tally."""
    match event:
        case RunStarted(kept=kept):
            for line in kept:  # a resumed run's lines count as the events they were
                counted(tally, of_line(line))
        case CaseFinished(line=line) | FindingFound(line=line):
            tally.add(line)
        case SurfaceFinished(line=done):
            tally.add_generated(done)
        case CandidateFailed(line=problem):
            tally.add_candidate_problem(problem)
        case ConnectionCounts(batch_fallbacks=fallbacks, cached_answers=cached, recorded_answers=recorded,
                              recorded_inputs=sequences):
            tally.add_counts(batch_fallbacks=fallbacks, cached_answers=cached, recorded_answers=recorded,
                             recorded_inputs=sequences)
        case ExpectationsChecked(stale=stale, expired=expired):
            tally.add_stale_expectations(stale)
            tally.add_expired_expectations(expired)


class Stream:
    """One run's events, each counted by its tally, then handed to each handler in the order registered."""

    def __init__(self, handlers: Iterable[Handler] = ()) -> None:
        self.tally = Tally()
        self.handlers = list(handlers)
        self.footer: Footer | None = None
        self.ended = False

    def emit(self, event: Event) -> None:
        counted(self.tally, event)
        for handler in list(self.handlers):
            handler.handle(event)

    def finish(self, finished: bool) -> Footer | None:
        """The run is over (said once, however often asked): the tally's footer when it ``finished``, none when
        it was cut short."""
        if not self.ended:
            self.ended = True
            self.footer = self.tally.footer() if finished else None
            self.emit(RunFinished(self.footer))
        return self.footer

    @contextmanager
    def listening(self, handler: Handler) -> Iterator[None]:
        """``handler`` told the events emitted meanwhile (a pytest item, while it runs)."""
        self.handlers.append(handler)
        try:
            yield
        finally:
            self.handlers.remove(handler)


class ReportFile:
    """The JSONL report, as the events tell it: the header (and kept lines) when the run starts, each line as it
    is emitted, flushed, and the footer when the run finished; closed when the run is over."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.writer: ReportWriter | None = None

    def handle(self, event: Event) -> None:
        match event:
            case RunStarted(header=header, kept=kept):
                self.writer = ReportWriter(self.path, header, kept)
            case CaseFinished(line=line) | FindingFound(line=line) | SurfaceFinished(line=line) | CandidateFailed(
                    line=line):
                self._write(line)
            case RunFinished(footer=footer):
                if footer is not None:
                    self._write(footer)
                self.close()

    def _write(self, line: CaseLine | GeneratedLine | CandidateLine | Footer) -> None:
        if self.writer is not None:
            self.writer.write(line)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


class Engine:
    """Cases and generators run on ``candidate`` and ``oracle``, each line finished once and emitted.

    ``expectations``: applied to every line as it is made (a listed divergence becomes ``xfail``).
    ``database``: the example database the generators replay and save findings to.
    ``observations``: a folder for Hypothesis's observations of the generated inputs.
    ``stored_inputs``: the inputs of earlier runs with the same seed, sent instead of drawn where they apply.
    """

    def __init__(self, candidate: Connection, oracle: Oracle, stream: Stream, *, policy: NanPolicy | None = None,
                 expectations: Expectations | None = None, database: ExampleDatabase | None = None,
                 observations: Path | None = None, stored_inputs: InputStore | None = None) -> None:
        self.candidate = candidate
        self.oracle = oracle
        self.stream = stream
        self.policy = policy
        self.expectations = expectations
        self.database = database
        self.observations = observations
        self.stored_inputs = stored_inputs
        self._restarts = candidate.restarts

    def _restarted(self, surface: str) -> None:
        """Say that the candidate's process was started again since the last input, if it was."""
        restarts = self.candidate.restarts
        if restarts > self._restarts:
            self._restarts = restarts
            self.stream.emit(CandidateRestarted(surface, restarts))

    def _input_done(self, surface: str) -> None:
        self._restarted(surface)
        self.stream.emit(InputGenerated(surface))

    def finished(self, record: CaseLine) -> CaseLine:
        """A record as the run keeps it: as the expectation file has it, if there is one."""
        return self.expectations.apply(record) if self.expectations is not None else record

    def cases(self, items: Iterable[LoadedCase]) -> Iterator[CaseLine]:
        """Each case's line, emitted as it is made, then yielded (in the cases' order)."""
        for record in run_cases(items, self.candidate, self.oracle, self.policy):
            line = self.finished(record)
            self._restarted(line.surface)
            self.stream.emit(CaseFinished(line))
            yield line

    def generate(self, surface: str, *, profile: generation.Profile, seed: int, budget: int,
                 first_only: bool = False) -> tuple[list[CaseLine], GeneratedLine]:
        """One surface's generator: its findings (each emitted), then its line (emitted last)."""
        broken = self.candidate.broken
        if broken:
            result = generation.GenerationResult(surface, profile.name, seed, budget, error=f"not run: {broken}")
        else:
            self.stream.emit(GenerationStarted(surface, budget))
            result = generation.generate(surface, self.candidate, self.oracle, profile=profile, seed=seed,
                                         max_examples=budget, policy=self.policy,
                                         on_input=self._input_done,
                                         first_only=first_only, database=self.database,
                                         observations=self.observations, stored=self.stored_inputs)
        findings = [self.finished(record) for record in result.findings]
        for line in findings:
            self.stream.emit(FindingFound(line))
        done = result.line()
        self.stream.emit(SurfaceFinished(done))
        return findings, done
