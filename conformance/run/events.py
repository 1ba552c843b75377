"""What happens in a run, in the order it happens: the events the engine emits and every front end reads.

A certification is one sequence of these. ``conformance certify``, the
pytest plugin and ``conformance campaign`` each feed the engine
(:mod:`conformance.run.engine`) and read what it emits through handlers:
the report on disk, the progress display, a pytest item's outcome, a
campaign's merged report. The tally counts the same events, so a report's
totals follow from what happened and from nothing else.

    RunStarted          the report's header (and a resumed run's kept lines); what the run is about to do
    CandidateFailed     the candidate failed to start or to stop (a ``candidate`` line)
    CaseFinished        a case's line, decided (an expectation file applied)
    GenerationStarted   a surface's generator starts
    InputGenerated      one generated input went through oracle and candidate (shrinking included)
    CandidateRestarted  the candidate's process was lost and started again (handshake replayed) on that surface
    FindingFound        a generator's shrunk divergence, as a line (an expectation file applied)
    SurfaceFinished     a surface's generator ended (its ``generated`` line)
    ConnectionCounts    what the connections counted: batches asked again one by one, answers from the cache
    ExpectationsChecked the expectation file's entries that named nothing the run found, and those expired
    RunFinished         the run is over, however it ended: its footer, or None when it was cut short
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from conformance.report.model import CandidateLine, CaseLine, Footer, GeneratedLine, Header


@dataclass(frozen=True)
class Outline:
    """What a run is about to do."""

    cases: Counter[str]  # cases still to run, by surface (a resumed run's finished ones left out)
    generators: tuple[str, ...]  # surfaces whose generated inputs run after the cases
    budgets: dict[str, int]  # generated inputs of each surface in generators, at most
    profile: str


Kept = CaseLine | GeneratedLine | CandidateLine  # a line of an interrupted run that a resumed one keeps


@dataclass(frozen=True)
class RunStarted:
    header: Header
    outline: Outline
    kept: tuple[Kept, ...] = ()


@dataclass(frozen=True)
class CandidateFailed:
    line: CandidateLine


@dataclass(frozen=True)
class CaseFinished:
    line: CaseLine


@dataclass(frozen=True)
class GenerationStarted:
    surface: str
    budget: int


@dataclass(frozen=True)
class InputGenerated:
    surface: str


@dataclass(frozen=True)
class CandidateRestarted:
    surface: str  # where it was lost: the input it crashed, hung or broke the protocol on
    restarts: int  # how often it has been started again in this run, this one included


@dataclass(frozen=True)
class FindingFound:
    line: CaseLine


@dataclass(frozen=True)
class SurfaceFinished:
    line: GeneratedLine


@dataclass(frozen=True)
class ConnectionCounts:
    batch_fallbacks: int = 0  # batches that failed as a whole and were asked again one request at a time
    cached_answers: int = 0  # oracle answers taken from the answer cache
    recorded_answers: int = 0  # oracle answers taken from the suite's recordings
    recorded_inputs: int = 0  # generators whose inputs came from the suite's recordings


@dataclass(frozen=True)
class ExpectationsChecked:
    stale: tuple[str, ...]  # entries naming nothing the run should have found
    expired: tuple[str, ...] = ()  # entries naming a case of the run, past their date: no longer applied


@dataclass(frozen=True)
class RunFinished:
    footer: Footer | None  # None: cut short (an interrupt, -x), the report then reads as unfinished


Event = (RunStarted | CandidateFailed | CaseFinished | GenerationStarted | InputGenerated | CandidateRestarted
         | FindingFound | SurfaceFinished | ConnectionCounts | ExpectationsChecked | RunFinished)


def of_line(line: Kept) -> CaseFinished | FindingFound | SurfaceFinished | CandidateFailed:
    """The event a report line tells of: a line gathered elsewhere (a pytest worker, a campaign task) replayed."""
    if isinstance(line, CaseLine):
        return FindingFound(line) if line.generated else CaseFinished(line)
    if isinstance(line, GeneratedLine):
        return SurfaceFinished(line)
    return CandidateFailed(line)
