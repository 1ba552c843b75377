"""What each page of the site shows, as typed values: built by :mod:`conformance.site.collect` from reports, drawn
by the templates through :mod:`conformance.site.render`.

Nothing here is HTML: every text is the report's (or the corpus's) own, and
the templates escape it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Literal

from conformance.core.outcomes import Outcome
from conformance.site.floatbits import BitsDiff


@dataclass(frozen=True)
class Status:
    """How a matrix cell (or a report) went, told apart by a symbol and a word as well as by colour."""

    key: str  # the CSS class suffix: status-pass, status-fail, ...
    symbol: str
    label: str


PASS = Status("pass", "✔", "pass")
FAIL = Status("fail", "✘", "fail")
ERROR = Status("error", "⚠", "error")
SKIP = Status("skip", "–", "skipped")
NOT_RUN = Status("none", "·", "not run")
WARNED = Status("warn", "!", "warnings")  # a report's verdict only: nothing diverged, and it is no evidence
STATUSES = (PASS, FAIL, ERROR, SKIP, NOT_RUN, WARNED)

# The four counts a cell shows, by outcome. An xpass (an expectation entry out of date) fails a run, so it counts
# as a failure; a candidate that crashed, timed out, broke the protocol or was given up on as an error; an xfail
# (a divergence the expectation file lists) as known, and a flaky answer (two answers to one input) as flaky,
# each beside the four.
BUCKETS: dict[Outcome, Literal["pass", "fail", "error", "skip", "known", "flaky"]] = {
    Outcome.PASS: "pass", Outcome.FAIL: "fail", Outcome.XPASS: "fail", Outcome.ERROR: "error",
    Outcome.CRASH: "error", Outcome.TIMEOUT: "error", Outcome.PROTOCOL_ERROR: "error", Outcome.BROKEN: "error",
    Outcome.SKIP: "skip", Outcome.XFAIL: "known", Outcome.FLAKY: "flaky",
}
assert set(BUCKETS) == set(Outcome), "every outcome needs a bucket"
_FIELDS = {"pass": "passed", "fail": "failed", "error": "errored", "skip": "skipped", "known": "known",
           "flaky": "flaky"}


@dataclass
class Counts:
    """A surface's cases (or a whole report's) by bucket, and its generated inputs."""

    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    known: int = 0
    flaky: int = 0  # diverged, and answered otherwise when asked again: a failure of its own kind
    generated_inputs: int = 0
    generated_divergences: int = 0  # generated inputs that diverged and no expectation lists

    def add(self, outcome: Outcome, count: int = 1) -> None:
        name = _FIELDS[BUCKETS[outcome]]
        setattr(self, name, getattr(self, name) + count)

    def __iadd__(self, other: Counts) -> Counts:
        for name in (f.name for f in fields(self)):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self

    @property
    def cases(self) -> int:
        return self.passed + self.failed + self.errored + self.skipped + self.known + self.flaky

    @property
    def conforming(self) -> int:
        return self.passed + self.known

    @property
    def percent(self) -> float:
        """The share of cases that conform, in percent (100 with no case)."""
        return 100.0 * self.conforming / self.cases if self.cases else 100.0

    @property
    def status(self) -> Status:
        """The worst of what happened: a failure, then an error, then a skip (each counts against conformance)."""
        if self.failed or self.flaky or self.generated_divergences:
            return FAIL
        if self.errored:
            return ERROR
        if self.skipped:
            return SKIP
        if self.cases or self.generated_inputs:
            return PASS
        return NOT_RUN


@dataclass(frozen=True)
class ReportFacts:
    """What a report says about its run: enough to tell two runs apart, and to run one again."""

    file: str
    candidate: str  # its spec, shown beside its name
    candidate_name: str  # its name and version (Party.display_name)
    version: str | None  # None: it never started, and is named by its spec
    language: str | None
    oracle: str
    suite_version: str
    profile: str | None
    seed: int | None
    started_at: str
    finished: bool
    truncated: bool
    conforms: bool
    expectations: str | None
    campaign: str | None = None  # "a campaign of 600s", when a campaign wrote the report
    warnings: tuple[str, ...] = ()  # the warnings' names (docs/warnings.md), each once

    @property
    def generation(self) -> str:
        drawn = f"profile {self.profile}, seed {self.seed}" if self.profile is not None else "cases only"
        return f"{self.campaign}: {drawn}" if self.campaign is not None else drawn

    @property
    def verdict(self) -> Status:
        if not self.finished:
            return ERROR
        return FAIL if not self.conforms else WARNED if self.warnings else PASS

    @property
    def verdict_text(self) -> str:
        if not self.finished:
            return "unfinished"
        if not self.conforms:
            return "does not conform"
        return "conforms, with warnings: " + ", ".join(self.warnings) if self.warnings else "conforms"


@dataclass(frozen=True)
class Link:
    href: str  # from the site's root
    label: str


@dataclass(frozen=True)
class MismatchView:
    cls: str
    text: str  # Mismatch.describe, with each side's label
    bits: BitsDiff | None


@dataclass(frozen=True)
class Entry:
    """One case (or generated finding) as a page shows it: what it checks, its input, both sides, how they differ."""

    id: str
    surface: str
    outcome: str
    group: str  # the mismatch class it is grouped under (its most severe), or its outcome
    classes: tuple[str, ...]
    tags: tuple[str, ...]
    description: str
    generated: bool
    input_text: str
    input_size: int  # the input's length as wire JSON: what "the smallest example" is measured by
    oracle_label: str
    oracle_text: str
    candidate_label: str
    candidate_text: str
    mismatches: tuple[MismatchView, ...]
    more_mismatches: int
    detail: str
    protocol_error: str | None
    reason: str | None  # the expectation entry's reason, for an xfail
    case_file: Link | None
    candidate_again_text: str | None = None  # a flaky answer: the candidate's second answer to the same input
    repro: str | None = None  # the command that writes its reproducer, for a case that does not conform
    case_page: str | None = None  # its page across candidates, for a case some candidate's latest run fails
    since: str | None = None  # since when it fails in the candidate's runs ("failing since run 3, version 1.2")

    @property
    def anchor(self) -> str:
        return "case-" + "".join(c if c.isalnum() or c in "-_." else "-" for c in self.id)


@dataclass(frozen=True)
class FailureGroup:
    surface: str
    cls: str
    count: int  # every failing case of the group; ``entries`` holds the first ones
    entries: tuple[Entry, ...]

    @property
    def more(self) -> int:
        return self.count - len(self.entries)


@dataclass(frozen=True)
class SkipRow:
    surface: str
    reason: str
    count: int


@dataclass(frozen=True)
class Filters:
    """The values the candidate page's filters offer: those of the entries it lists."""

    surfaces: tuple[str, ...]
    classes: tuple[str, ...]
    tags: tuple[str, ...]


@dataclass(frozen=True)
class TrendPoint:
    facts: ReportFacts
    counts: Counts
    x: float
    y: float


@dataclass(frozen=True)
class Trend:
    """A candidate's runs in the order they started: the share of cases that conform, drawn as an inline SVG."""

    points: tuple[TrendPoint, ...]
    width: int
    height: int
    top: float  # the y of 100 %
    bottom: float  # the y of 0 %
    left: float
    right: float
    floor: float  # the percent at the bottom of the axis

    @property
    def polyline(self) -> str:
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)


@dataclass(frozen=True)
class SurfaceRow:
    surface: str
    counts: Counts


@dataclass(frozen=True)
class CandidatePage:
    name: str  # as the candidate names itself (its spec, when it never started); its runs' versions vary
    language: str | None
    path: str  # from the site's root
    facts: ReportFacts  # of its latest report
    surfaces: tuple[SurfaceRow, ...]
    totals: Counts
    groups: tuple[FailureGroup, ...]
    others: tuple[Entry, ...]
    other_count: int
    known: tuple[Entry, ...]
    skips: tuple[SkipRow, ...]
    filters: Filters
    trend: Trend | None
    problems: tuple[str, ...]  # the candidate failed to start or stop; generator errors
    ulps: tuple[Drawn, ...] = ()  # its latest run's float mismatches by ULP distance, by surface

    @property
    def failing(self) -> int:
        return sum(group.count for group in self.groups)


@dataclass(frozen=True)
class ChangeGroup:
    """A release's changes that share a reason: the expectation file's, or none (not listed: the gate fails)."""

    reason: str
    link: str | None
    listed: bool
    ids: tuple[tuple[str, tuple[str, ...]], ...]  # (surface, case ids)
    count: int
    example: Entry  # the change with the smallest input


@dataclass(frozen=True)
class ReleasePage:
    version: str
    baseline: str
    path: str
    facts: ReportFacts
    passed: bool
    surfaces: tuple[SurfaceRow, ...]
    totals: Counts
    groups: tuple[ChangeGroup, ...]  # unlisted changes first
    out_of_date: tuple[str, ...]  # listed as changed, but now agreeing (xpass)
    stale: tuple[str, ...]  # expectation entries naming no case of the run
    problems: tuple[str, ...]

    @property
    def changed(self) -> int:
        return sum(group.count for group in self.groups)


@dataclass(frozen=True)
class Cell:
    surface: str
    counts: Counts | None  # None: the report did not run the surface

    @property
    def status(self) -> Status:
        return self.counts.status if self.counts is not None else NOT_RUN


@dataclass(frozen=True)
class Row:
    """One line of the index's matrix: a candidate (its latest report) or a harbor release (its gate report)."""

    kind: Literal["candidate", "release"]
    title: str
    path: str
    facts: ReportFacts
    cells: tuple[Cell, ...]
    verdict: Status
    verdict_text: str


@dataclass(frozen=True)
class Stretch:
    """Consecutive runs of one candidate in which a case went the same way."""

    status: Status  # PASS (its answer agreed), FAIL (it did not, or no answer came) or NOT_RUN
    first: int  # the number of its first run, as the trend numbers them (1: the oldest)
    count: int
    version: str | None  # the candidate's version in its first run (None: it never started)


@dataclass(frozen=True)
class History:
    """A case across a candidate's runs, oldest first, repeated results collapsed:
    ``pass ×2 → fail ×2 (since run 3, version 1.3) → pass (fixed in run 5, version 1.4)``."""

    stretches: tuple[Stretch, ...]

    @property
    def runs(self) -> int:
        return sum(s.count for s in self.stretches)

    @staticmethod
    def _when(s: Stretch) -> str:
        return f"run {s.first}" + (f", version {s.version}" if s.version is not None else "")

    @property
    def text(self) -> str:
        told = []
        for before, s in zip((None, *self.stretches), self.stretches, strict=False):
            said = s.status.label + (f" ×{s.count}" if s.count > 1 else "")
            if before is not None:
                if s.status is FAIL:
                    said += f" (since {self._when(s)})"
                elif s.status is PASS and before.status is FAIL:
                    said += f" (fixed in {self._when(s)})"
                else:
                    said += f" (from {self._when(s)})"
            told.append(said)
        return " → ".join(told)

    @property
    def since(self) -> str | None:
        """The short note of a failure entry: since when the case fails; None when its latest run did not fail it,
        or there is one run only (nothing to tell)."""
        last = self.stretches[-1]
        if last.status is not FAIL or self.runs < 2:
            return None
        if len(self.stretches) == 1:
            return f"failing in every run ({last.count})"
        again = " again" if any(s.status is FAIL for s in self.stretches[:-1]) else ""
        return f"failing{again} since {self._when(last)}"


class Spread(StrEnum):
    """How a case that fails somewhere fails across the candidates that ran it."""

    ONE = "fails in exactly one candidate"  # the others that ran it agree with the oracle: likely its bug
    ALL = "fails in every candidate that ran it"  # two or more ran it: a harbor ambiguity, or a problem of the suite
    SOME = "fails in some candidates, not all"
    LONE = "fails in the only candidate that ran it"  # nothing to compare it with


@dataclass(frozen=True)
class Failing:
    """A candidate a case fails in, as an interop list names it."""

    name: str
    language: str | None
    path: str  # its page
    outcome: str
    difference: str  # the first difference, one line


@dataclass(frozen=True)
class Divergence:
    """A case that fails in some candidate's latest run, in its surface's interop lists."""

    id: str
    path: str  # its case page
    spread: Spread
    failing: tuple[Failing, ...]
    ran: int  # the candidates that ran it (answered it, rightly or not)
    not_run: tuple[str, ...]  # the candidates taking part in the surface that did not run it


@dataclass(frozen=True)
class SurfaceView:
    """One surface across the candidates (each one's latest run): the cases every one of them passes, and those that
    fail somewhere, by how they spread.

    A candidate takes part in a surface when its latest run answered at least one of its cases. A case a candidate
    taking part did not run (it declined it, its run was a shard or a subset of cases, or was cut short) is left
    out of the share and counted in ``partial``; in the lists it counts only the candidates that ran it.
    """

    surface: str
    path: str  # its surface page
    candidates: tuple[str, ...]  # taking part
    absent: tuple[str, ...]  # candidates whose latest run answered no case of the surface
    cases: int  # the case ids any candidate taking part has a line for
    common: int  # run by every candidate taking part
    agreed: int  # of the common ones, those every candidate passes
    partial: int  # not run by every candidate taking part
    divergences: tuple[Divergence, ...]

    @property
    def share(self) -> float | None:
        """The share, in percent, of the cases run by every candidate taking part that every one of them passes;
        None when no case was run by all of them."""
        return 100.0 * self.agreed / self.common if self.common else None

    def spread(self, spread: Spread) -> tuple[Divergence, ...]:
        return tuple(d for d in self.divergences if d.spread is spread)

    @property
    def one(self) -> tuple[Divergence, ...]:
        return self.spread(Spread.ONE)

    @property
    def all(self) -> tuple[Divergence, ...]:
        return self.spread(Spread.ALL)

    @property
    def some(self) -> tuple[Divergence, ...]:
        return self.spread(Spread.SOME)

    @property
    def lone(self) -> tuple[Divergence, ...]:
        return self.spread(Spread.LONE)


@dataclass(frozen=True)
class Bar:
    """A bin of a distribution, drawn as a bar (its place in SVG units) and as a table row."""

    key: str  # the bin as the report names it: a feature, a ULP bucket
    label: str  # as the table shows it
    shown: str  # as the chart shows it: the label, a long one cut
    count: int
    share: float  # of the distribution's whole, 0 to 1
    minimum: float | None  # the least share it must reach (a feature's, under the run's profile); None: none asked
    short: bool  # below its minimum, as the report judges it
    y: float  # the top of its row
    width: float  # the bar's length
    mark: float | None  # the x of its minimum
    text_x: float  # where its count is written, right of the bar and the mark

    @property
    def percent(self) -> str:
        return f"{100 * self.share:.1f} %"

    @property
    def minimum_percent(self) -> str:
        return f"{100 * self.minimum:.1f} %" if self.minimum is not None else "–"


@dataclass(frozen=True)
class Distribution:
    """Counts by bin, drawn as an inline SVG bar chart (bar lengths are shares of ``whole``) beside a table."""

    title: str  # the chart's title and the table's caption
    description: str  # what it shows in a sentence: the chart's description for a screen reader
    legend: str  # what the marks mean, under the chart
    whole: int
    bins: tuple[Bar, ...]
    width: int
    height: int
    left: float  # the x of 0 %
    span: float  # the length of 100 %
    row: float  # a bar's row height
    bottom: float  # the y of the axis
    ticks: tuple[tuple[float, str], ...]  # (x, label) along the axis

    @property
    def minimums(self) -> bool:
        return any(b.minimum is not None for b in self.bins)

    @property
    def short(self) -> tuple[Bar, ...]:
        return tuple(b for b in self.bins if b.short)


@dataclass(frozen=True)
class Worst:
    """A surface's float mismatch furthest apart, linked to its case's page when it has one."""

    id: str
    where: str  # ``at PATH: N ULPs``, as WorstFloat.text says it after the id
    href: str | None  # its case's page


@dataclass(frozen=True)
class Drawn:
    """One run's distribution on one surface: a candidate's on a surface page, a surface's on a candidate page;
    ``chart`` None when the run has nothing to draw, and ``none`` says so."""

    name: str  # the candidate, or the surface
    language: str | None
    path: str | None  # its page
    chart: Distribution | None
    none: str
    worst: Worst | None = None


@dataclass(frozen=True)
class SurfacePage:
    """A surface: its interop lists; and each candidate's (latest run's) generated inputs by feature and float
    mismatches by ULP distance."""

    view: SurfaceView
    shapes: tuple[Drawn, ...] = ()  # features of the generated inputs
    ulps: tuple[Drawn, ...] = ()  # ULP distances of float mismatches

    @property
    def path(self) -> str:
        return self.view.path


@dataclass(frozen=True)
class Answer:
    """One candidate's answer to a case (its latest run), beside the oracle's, on the case's page."""

    name: str
    language: str | None
    path: str  # the candidate's page
    version: str | None
    status: Status  # PASS, FAIL or NOT_RUN
    outcome: str  # the report's outcome; "not run" when the report has no line for the case
    oracle_text: str
    candidate_text: str  # its result; "same as the oracle" when a passing line does not hold it; why it did not run
    difference: str  # the first difference; "" when it agrees or did not run
    history: History


@dataclass(frozen=True)
class CasePage:
    """A case that fails in some candidate's latest run: every candidate's answer, and each one's history."""

    id: str
    surface: str
    path: str
    surface_path: str
    description: str
    tags: tuple[str, ...]
    input_text: str
    case_file: Link | None
    spread: Spread
    answers: tuple[Answer, ...]
    absent: tuple[str, ...]  # candidates whose latest run answered no case of the surface


@dataclass(frozen=True)
class IndexPage:
    surfaces: tuple[str, ...]
    rows: tuple[Row, ...]
    reports: tuple[ReportFacts, ...]  # every report the site was built from, oldest first
    interop: tuple[SurfaceView, ...] = ()  # with two candidates or more
    listed: int = 20  # the cases each interop list shows here; its surface page lists every one


@dataclass(frozen=True)
class CaseFilePage:
    """A case file of the corpus, shown with its line numbers so that a case's link lands on its line."""

    path: str  # from the site's root
    name: str  # cases/<surface>/<file>.yaml
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Site:
    index: IndexPage
    candidates: tuple[CandidatePage, ...]
    releases: tuple[ReleasePage, ...]
    case_files: tuple[CaseFilePage, ...] = field(default=())
    surface_pages: tuple[SurfacePage, ...] = field(default=())
    case_pages: tuple[CasePage, ...] = field(default=())
