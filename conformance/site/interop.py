"""The view across candidates: each case as every candidate's latest run answered it, and its history across one
candidate's runs.

Only candidates' reports are compared. A gate report's candidate is a harbor
release: what changed in it is its own page's, and a release is no
implementation whose bug a case could point at. Generated findings are left
out too: their inputs are drawn per run, so no two candidates share one.

A case line is one of three answers (:func:`answer`): it agrees with the
oracle (``pass``, and ``xpass``: the answer agreed, only the expectation
entry is out of date), it fails (every other outcome where the candidate was
asked: a result that differs, ``flaky``, an error, a crash, a timeout, a
protocol error, and ``xfail``: a listed divergence is still a divergence), or
it was not run (``skip``: the candidate declined it; ``broken``: never sent;
or no line at all).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from conformance.core.outcomes import Outcome
from conformance.report.model import CaseLine, bounded, result_text
from conformance.site.model import (
    FAIL,
    NOT_RUN,
    PASS,
    Answer,
    Divergence,
    Failing,
    History,
    ReportFacts,
    Spread,
    Status,
    Stretch,
    SurfaceView,
)

AGREEING = frozenset({Outcome.PASS, Outcome.XPASS})
NOT_ASKED = frozenset({Outcome.SKIP, Outcome.BROKEN})
SAME = "same as the oracle"  # a passing line that does not hold the candidate's result
TEXT_LIMIT = 4000  # characters of an input, a side or a detail a page shows; a longer one says how long it was


def answer(line: CaseLine | None) -> Status:
    """PASS, FAIL or NOT_RUN: how a case went in one run, for the view across candidates."""
    if line is None or line.outcome in NOT_ASKED:
        return NOT_RUN
    return PASS if line.outcome in AGREEING else FAIL


@dataclass(frozen=True)
class RunCases:
    """One run of a candidate as the view across candidates reads it."""

    facts: ReportFacts
    lines: Mapping[str, CaseLine]  # its case lines, generated findings left out, by id
    surfaces: frozenset[str]  # those its header names
    gap: str  # why a case of one of them has no line: "not in its shard 2/4", "its run did not finish", ...

    def missing(self, case_id: str, surface: str) -> str:
        """Why the run did not run the case."""
        line = self.lines.get(case_id)
        if line is not None and line.outcome is Outcome.SKIP:
            reason = line.detail.strip().splitlines()
            return "declined (skip)" + (f": {bounded(reason[0], 200)}" if reason else "")
        if line is not None:
            return "never sent: the candidate had been given up on (broken)"
        return self.gap if surface in self.surfaces else "its run did not cover the surface"


@dataclass(frozen=True)
class Candidate:
    """A candidate's runs, oldest first, numbered from 1 as its trend numbers them."""

    name: str
    language: str | None
    path: str  # its page
    runs: tuple[RunCases, ...]

    @property
    def latest(self) -> RunCases:
        return self.runs[-1]

    @cached_property
    def taking_part(self) -> frozenset[str]:
        """The surfaces its latest run answered at least one case of."""
        return frozenset(line.surface for line in self.latest.lines.values() if answer(line) is not NOT_RUN)

    def history(self, case_id: str) -> History:
        stretches: list[Stretch] = []
        for number, run in enumerate(self.runs, start=1):
            status = answer(run.lines.get(case_id))
            if stretches and stretches[-1].status is status:
                last = stretches[-1]
                stretches[-1] = Stretch(status, last.first, last.count + 1, last.version)
            else:
                stretches.append(Stretch(status, number, 1, run.facts.version))
        return History(tuple(stretches))

    def failing(self, line: CaseLine) -> Failing:
        return Failing(self.name, self.language, self.path, str(line.outcome), cut(line.first_difference()))


def cut(text: str) -> str:
    return bounded(text, TEXT_LIMIT) or ""


def diverging(candidates: Sequence[Candidate]) -> dict[str, str]:
    """The cases that fail in some candidate's latest run, by id (sorted), with their surface."""
    found = {line.id: line.surface for c in candidates for line in c.latest.lines.values() if answer(line) is FAIL}
    return dict(sorted(found.items()))


def spread(ran: int, failed: int) -> Spread:
    """How a case failing in `failed` of the `ran` candidates that ran it spreads."""
    if ran == 1:
        return Spread.LONE
    if failed == 1:
        return Spread.ONE
    return Spread.ALL if failed == ran else Spread.SOME


def views(candidates: Sequence[Candidate], surface_pages: Mapping[str, str],
          case_pages: Mapping[str, str]) -> tuple[SurfaceView, ...]:
    """Each surface some candidate takes part in, across the candidates (in the order given)."""
    surfaces = sorted({s for c in candidates for s in c.taking_part})
    return tuple(_view(surface, candidates, surface_pages[surface], case_pages) for surface in surfaces)


def _view(surface: str, candidates: Sequence[Candidate], path: str, case_pages: Mapping[str, str]) -> SurfaceView:
    taking = [c for c in candidates if surface in c.taking_part]
    ids = sorted({i for c in taking for i, line in c.latest.lines.items() if line.surface == surface})
    common = agreed = 0
    divergences = []
    for case_id in ids:
        lines = [(c, c.latest.lines.get(case_id)) for c in taking]
        ran = [(c, line) for c, line in lines if line is not None and answer(line) is not NOT_RUN]
        failed = [(c, line) for c, line in ran if answer(line) is FAIL]
        if len(ran) == len(taking):
            common += 1
            agreed += not failed
        if failed:
            divergences.append(Divergence(
                case_id, case_pages[case_id], spread(len(ran), len(failed)),
                tuple(c.failing(line) for c, line in failed), len(ran),
                tuple(c.name for c, line in lines if line is None or answer(line) is NOT_RUN)))
    return SurfaceView(surface, path, tuple(c.name for c in taking),
                       tuple(c.name for c in candidates if surface not in c.taking_part), len(ids), common, agreed,
                       len(ids) - common, tuple(divergences))


def answers(case_id: str, surface: str, candidates: Sequence[Candidate]) -> tuple[Answer, ...]:
    """Every candidate taking part in the case's surface: its latest answer beside the oracle's, and its history."""
    told = []
    for c in candidates:
        if surface not in c.taking_part:
            continue
        line = c.latest.lines.get(case_id)
        status = answer(line)
        if line is None or status is NOT_RUN:
            said, oracle, difference = c.latest.missing(case_id, surface), "", ""
        else:
            said = cut(result_text(line.candidate)) if line.candidate is not None or status is FAIL else SAME
            oracle = cut(result_text(line.oracle)) if line.oracle is not None else "(not in the report)"
            difference = cut(line.first_difference()) if status is FAIL else ""
        told.append(Answer(c.name, c.language, c.path, c.latest.facts.version, status,
                           str(line.outcome) if line is not None else NOT_RUN.label, oracle, said, difference,
                           c.history(case_id)))
    return tuple(told)
