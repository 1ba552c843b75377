"""Reports, read through :mod:`conformance.report.reader`, turned into the site's pages (:mod:`.model`).

A report whose candidate is ``harbor==VERSION`` is a gate report: that
release's page. Any other report is a candidate's; several reports of one
candidate (the name and language its handshake gives, whatever spec started
it: a spec is often a path on the machine that ran it) are its runs over
time, ordered by the time each started: its page shows the latest and the
trend. A candidate that never started is named by its spec. What a report does not carry (a case's
description, tags, input when it passed, and its file) comes from the corpus
the report was run on (its header's ``cases_root``, or the one given).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from conformance.core.compare import most_severe
from conformance.core.outcomes import Outcome
from conformance.corpus import cases as case_corpus
from conformance.corpus.files import FileProblem, read_case_file
from conformance.kit import wire
from conformance.report.commands import repro
from conformance.report.model import CaseLine, Header, Identity, UlpDistances, result_text, warning_names
from conformance.report.problems import Problems
from conformance.report.reader import Report, ReportError, read
from conformance.report.writer import Tally
from conformance.site import bars, floatbits, interop
from conformance.site.model import (
    FAIL,
    NOT_RUN,
    PASS,
    CandidatePage,
    CaseFilePage,
    CasePage,
    Cell,
    ChangeGroup,
    Counts,
    Drawn,
    Entry,
    FailureGroup,
    Filters,
    IndexPage,
    Link,
    MismatchView,
    ReleasePage,
    ReportFacts,
    Row,
    Site,
    SkipRow,
    SurfacePage,
    SurfaceRow,
    SurfaceView,
    Trend,
    TrendPoint,
    Worst,
)

GROUP_LIMIT = 100  # entries a page lists per group of failures (and of other problems); the rest are counted
UNLISTED = "not in the expectation file"
# The trend's drawing, in SVG units.
TREND_WIDTH, TREND_HEIGHT, TREND_MARGIN = 640, 200, 40
TREND_FLOORS = (0.0, 50.0, 80.0, 90.0, 95.0, 98.0, 99.0)  # where the trend's axis may start, in percent


@dataclass(frozen=True)
class Run:
    """One report read: its lines and when its run started."""

    path: Path
    report: Report
    header: Header
    started: datetime

    @property
    def release(self) -> str | None:
        return self.header.candidate.harbor_release

    @cached_property
    def tally(self) -> Tally:
        """The report's counts, made once for every page that shows them."""
        return self.report.tally()


def _started(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)  # a start time no run wrote: first
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def load(paths: Iterable[Path]) -> list[Run]:
    """Every report read whole (each line validated: a bad line is a ReportError naming file and line); a path
    given twice is read once."""
    runs, seen = [], set()
    for path in paths:
        key = path.resolve()
        if key in seen:
            continue
        seen.add(key)
        report = read(path)
        if report.header is None:
            raise ReportError(f"{path}: an empty report (no header line)")
        runs.append(Run(path, report, report.header, _started(report.header.started_at)))
    return runs


def _slug(text: str) -> str:
    kept = "".join(c if c.isalnum() or c in "_.-" else "_" for c in text).strip("_.")[:80]
    while len(kept.encode("utf-8")) > 200:  # a file name holds 255 bytes; a letter may take four
        kept = kept[:-1]
    return kept or "report"


class _Names:
    """Unique file names within one folder of the site."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def __call__(self, folder: str, text: str) -> str:
        base, n = _slug(text), 1
        name = f"{folder}/{base}.html"
        while name.lower() in self.taken:  # a case-insensitive file system holds one of two names differing in case
            n += 1
            name = f"{folder}/{base}-{n}.html"
        self.taken.add(name.lower())
        return name


@dataclass
class Corpus:
    """The corpora the reports were run on: each case by id, and the case files the pages link to."""

    override: Path | None = None
    _by_root: dict[Path, dict[str, case_corpus.LoadedCase]] = field(default_factory=dict)
    _files: dict[Path, CaseFilePage] = field(default_factory=dict)
    _names: set[str] = field(default_factory=set)

    def root(self, header: Header) -> Path:
        if self.override is not None:
            return self.override
        given = Path(header.cases_root)
        return given if given.is_dir() else case_corpus.default_root()

    def case(self, header: Header, case_id: str) -> case_corpus.LoadedCase | None:
        root = self.root(header)
        if root not in self._by_root:
            # A case file that does not load leaves its cases undescribed: the reports still make a site.
            loaded, _ = case_corpus.check_corpus(root)
            self._by_root[root] = {item.id: item for item in loaded}
        return self._by_root[root].get(case_id)

    def link(self, header: Header, item: case_corpus.LoadedCase) -> Link | None:
        """A link to the case's line in its file, shown as a page of the site (the file is copied in)."""
        page = self._files.get(item.file)
        if page is None:
            try:
                text = read_case_file(item.file).decode("utf-8", errors="replace")
            except FileProblem:
                return None
            try:
                relative = item.file.relative_to(self.root(header)).as_posix()
            except ValueError:
                relative = f"{item.file.parent.name}/{item.file.name}"
            path, n = f"cases/{relative}.html", 1
            while path.lower() in self._names:
                n += 1
                path = f"cases-{n}/{relative}.html"
            self._names.add(path.lower())
            page = CaseFilePage(path, f"cases/{relative}", tuple(text.splitlines()))
            self._files[item.file] = page
        return Link(f"{page.path}#L{item.line}", f"{page.name}:{item.line}")

    @property
    def files(self) -> tuple[CaseFilePage, ...]:
        return tuple(sorted(self._files.values(), key=lambda page: page.path))


_cut = interop.cut  # one limit for every text a page shows


def _facts(run: Run) -> ReportFacts:
    head, tally = run.header, run.tally
    generation = head.generation
    candidate = head.candidate
    return ReportFacts(
        file=str(run.path), candidate=candidate.spec, candidate_name=candidate.display_name,
        version=candidate.version, language=candidate.identity.language, oracle=head.oracle.spec,
        suite_version=head.suite_version,
        profile=generation.profile if generation is not None else None,
        seed=generation.seed if generation is not None else None, started_at=head.started_at,
        finished=run.report.finished, truncated=run.report.truncated, conforms=tally.conforms,
        expectations=head.expectations,
        campaign=f"a campaign of {head.campaign.budget_seconds:g}s" if head.campaign is not None else None,
        warnings=tuple(warning_names(tally.warnings())))


def _labels(run: Run) -> tuple[str, str]:
    """What a page calls the two sides: a gate's two releases, else the oracle and the candidate."""
    oracle, candidate = run.header.oracle, run.header.candidate
    if candidate.harbor_release is not None and oracle.harbor_release is not None:
        return f"harbor {oracle.harbor_release}", f"harbor {candidate.harbor_release}"
    return f"oracle ({oracle.spec})", f"candidate ({candidate.display_name})"


def _wire_input(record: CaseLine, item: case_corpus.LoadedCase | None) -> Any:
    """The input as a wire value: the line's own (a generated finding, a case that did not pass), else the
    corpus's; None when neither has it."""
    if record.input is not None:
        return record.input
    return wire.encode(item.case.input) if item is not None else None


@dataclass(frozen=True)
class _Described:
    """What the corpus (or the line) tells of a case: its description, tags and input."""

    item: case_corpus.LoadedCase | None
    description: str
    tags: tuple[str, ...]
    input_text: str
    input_size: int


def _described(run: Run, record: CaseLine, corpus: Corpus) -> _Described:
    item = None if record.generated else corpus.case(run.header, record.id)
    encoded = _wire_input(record, item)
    if encoded is None:
        input_text, size = "(neither the report nor the corpus holds it)", 2**63
    else:
        input_text = _cut(repr(wire.decode(encoded)))
        size = len(json.dumps(encoded, ensure_ascii=False))
    description = item.case.description if item is not None else (
        "a generated input, shrunk to a minimal one" if record.generated else "")
    tags = tuple(item.case.tags) if item is not None else (("generated",) if record.generated else ())
    return _Described(item, description, tags, input_text, size)


def entry(run: Run, record: CaseLine, corpus: Corpus, case_page: str | None = None,
          since: str | None = None) -> Entry:
    described = _described(run, record, corpus)
    item = described.item
    main = most_severe(record.mismatches)
    oracle_label, candidate_label = _labels(run)
    expected = record.expected_divergence
    return Entry(
        id=record.id, surface=record.surface, outcome=str(record.outcome),
        group=main.value if main is not None else str(record.outcome),
        classes=tuple(sorted({m.cls.value for m in record.mismatches})), tags=described.tags,
        description=described.description, generated=record.generated, input_text=described.input_text,
        input_size=described.input_size,
        oracle_label=oracle_label, oracle_text=_cut(result_text(record.oracle)),
        candidate_label=candidate_label, candidate_text=_cut(result_text(record.candidate)),
        mismatches=tuple(MismatchView(m.cls.value, m.describe(oracle_label, candidate_label, bits=False),
                                      floatbits.compare(m.expected_bits, m.actual_bits, m.ulps))
                         for m in record.mismatches),
        more_mismatches=record.more_mismatches, detail=_cut(record.detail.strip()),
        protocol_error=str(record.protocol_error) if record.protocol_error is not None else None,
        reason=expected.reason if record.outcome is Outcome.XFAIL and expected is not None else None,
        case_file=corpus.link(run.header, item) if item is not None else None,
        candidate_again_text=_cut(result_text(record.candidate_again)) if record.candidate_again else None,
        repro=repro(run.path, record.id) if record.reproducible else None, case_page=case_page, since=since)


def surface_counts(run: Run) -> dict[str, Counts]:
    """Each surface's cases by bucket (generated findings apart, as generated divergences), and its generated
    inputs; every surface the run covered is there, even one with no line."""
    counts = {surface: Counts() for surface in run.header.surfaces}
    for surface, outcomes in run.tally.by_surface.items():
        cell = counts.setdefault(surface, Counts())
        for outcome, count in outcomes.items():
            cell.add(outcome, count)
    for record in run.report.records:
        if record.generated and record.outcome not in (Outcome.XFAIL, Outcome.PASS):
            counts.setdefault(record.surface, Counts()).generated_divergences += 1
    for line in run.report.generated:
        counts.setdefault(line.surface, Counts()).generated_inputs += line.inputs_run
    return dict(sorted(counts.items()))


def _total(counts: dict[str, Counts]) -> Counts:
    total = Counts()
    for cell in counts.values():
        total += cell
    return total


def _problems(run: Run) -> tuple[str, ...]:
    tally = run.tally
    said = [f"the candidate failed to {p.stage}: {p.outcome}" + (f" ({p.protocol_error})" if p.protocol_error else "")
            + (f": {p.first_line()}" if p.first_line() else "") for p in tally.candidate_problems]
    said += [f"generator error: {_cut(error)}" for error in tally.generator_errors]
    if not run.report.finished:
        said.append("the report has no footer: the run did not finish")
    return tuple(said)


def trend(runs: Sequence[Run]) -> Trend | None:
    """The share of conforming cases of each run, oldest first; None for a single run."""
    if len(runs) < 2:
        return None
    left, right = float(TREND_MARGIN + 20), float(TREND_WIDTH - TREND_MARGIN)
    top, bottom = float(TREND_MARGIN / 2), float(TREND_HEIGHT - TREND_MARGIN)
    step = (right - left) / (len(runs) - 1)
    totals = [_total(surface_counts(run)) for run in runs]
    # The axis starts at the highest of these below every run: 98.8 % and 99.5 % drawn from 0 % look the same.
    floor = max(f for f in TREND_FLOORS if f <= min(total.percent for total in totals))
    points = tuple(TrendPoint(_facts(run), total, left + i * step,
                              bottom - (bottom - top) * (total.percent - floor) / (100 - floor))
                   for i, (run, total) in enumerate(zip(runs, totals, strict=True)))
    return Trend(points, TREND_WIDTH, TREND_HEIGHT, top, bottom, left, right, floor)


def candidate_page(who: Identity, path: str, runs: Sequence[Run], corpus: Corpus,
                   across: interop.Candidate, case_pages: Mapping[str, str],
                   surface_pages: Mapping[str, str] | None = None) -> CandidatePage:
    """A candidate's page: its latest run, and the trend of all of them (whichever versions and specs they had);
    each failure links to its case page (``case_pages``, by id) and says since when it fails (``across``); its
    float mismatches by ULP distance, a row per surface linking to its page (``surface_pages``)."""
    latest = runs[-1]
    found = Problems.of(latest.report.records, keep=GROUP_LIMIT)

    def shown(record: CaseLine) -> Entry:
        if record.generated:  # drawn for this run alone: no other run, no other candidate has it
            return entry(latest, record, corpus)
        return entry(latest, record, corpus, case_pages.get(record.id), across.history(record.id).since)

    groups = tuple(FailureGroup(surface, cls, found.failing_in(surface, cls), tuple(shown(r) for r in records))
                   for surface, by_class in found.failures.items() for cls, records in by_class.items())
    others = tuple(shown(record) for record in found.others)
    known = tuple(shown(record) for record in latest.report.records if record.outcome is Outcome.XFAIL)[:GROUP_LIMIT]
    listed = [e for group in groups for e in group.entries] + list(others)
    filters = Filters(tuple(sorted({e.surface for e in listed})), tuple(sorted({c for e in listed for c in e.classes})),
                      tuple(sorted({t for e in listed for t in e.tags})))
    counts = surface_counts(latest)
    return CandidatePage(
        name=who.name, language=who.language, path=path, facts=_facts(latest),
        surfaces=tuple(SurfaceRow(s, c) for s, c in counts.items()),
        totals=_total(counts), groups=groups, others=others, other_count=found.other_count, known=known,
        skips=tuple(SkipRow(surface, reason, n) for (surface, reason), n in sorted(found.skips.items())),
        filters=filters, trend=trend(runs), problems=_problems(latest),
        ulps=tuple(_floats(surface, (surface_pages or {}).get(surface), None, floats.summary(), case_pages)
                   for surface, floats in sorted(latest.tally.distances.items())))


def _floats(name: str, path: str | None, language: str | None, distances: UlpDistances,
            case_pages: Mapping[str, str]) -> Drawn:
    """A run's float mismatches of a surface by ULP distance, the furthest linked to its case's page if it has one."""
    worst = distances.worst
    return Drawn(name, language, path, bars.ulps(distances), "",
                 Worst(worst.id, worst.text().removeprefix(worst.id).strip(), case_pages.get(worst.id)))


def surface_page(view: SurfaceView, across: Sequence[interop.Candidate], latest: Sequence[Run],
                 case_pages: Mapping[str, str]) -> SurfacePage:
    """A surface's page: its interop lists (``view``), and each candidate's generated inputs by feature and float
    mismatches by ULP distance (its latest run, ``latest`` in the order of ``across``): of each candidate taking
    part, and of any other whose latest run generated inputs or found float mismatches there."""
    surface = view.surface
    shapes, floats = [], []
    for c, run in zip(across, latest, strict=True):
        tally = run.tally
        if surface not in c.taking_part and surface not in tally.generated and surface not in tally.distances:
            continue
        line = tally.generated.get(surface)
        drawn = bars.features(line) if line is not None else None
        if line is None:
            none = "Its latest run generated no input" + (": it ran cases only." if run.header.generation is None
                                                          else " for this surface.")
        elif not line.inputs_run:
            none = "Its latest run drew no input for this surface" + (
                f": {_cut(line.error.strip().splitlines()[0])}" if line.error and line.error.strip() else ".")
        else:
            none = f"Its latest run ran {line.inputs_run} generated input(s); its report counts no feature of them."
        shapes.append(Drawn(c.name, c.language, c.path, drawn, none))
        found = tally.distances.get(surface)
        if found is None:
            floats.append(Drawn(c.name, c.language, c.path, None, "No float mismatch in its latest run."))
        else:
            floats.append(_floats(c.name, c.path, c.language, found.summary(), case_pages))
    return SurfacePage(view, tuple(shapes), tuple(floats))


def release_page(version: str, path: str, runs: Sequence[Run], corpus: Corpus) -> ReleasePage:
    """What changed in a release against the baseline: its changes grouped by the expectation file's reason (the
    unlisted ones first), each group with its smallest example."""
    latest = runs[-1]
    report, head = latest.report, latest.header
    grouped: dict[tuple[bool, str], list[CaseLine]] = {}
    links: dict[tuple[bool, str], str | None] = {}
    for record in report.records:
        if record.signature is None:
            continue
        expected = record.expected_divergence
        listed = record.outcome is Outcome.XFAIL and expected is not None
        key = (listed, expected.reason if listed and expected is not None else UNLISTED)
        grouped.setdefault(key, []).append(record)
        if listed and expected is not None and _web_link(expected.link) and not links.get(key):
            links[key] = expected.link
    groups = []
    for (listed, reason), records in sorted(grouped.items(), key=lambda item: item[0][0]):  # stable: unlisted first
        entries = [entry(latest, record, corpus) for record in records]
        by_surface: dict[str, list[str]] = {}
        for record in records:
            by_surface.setdefault(record.surface, []).append(record.id)
        groups.append(ChangeGroup(reason, links.get((listed, reason)), listed,
                                  tuple((s, tuple(ids)) for s, ids in sorted(by_surface.items())), len(records),
                                  min(entries, key=lambda e: e.input_size)))
    tally = latest.tally
    unlisted = any(not group.listed for group in groups)
    counts = surface_counts(latest)
    return ReleasePage(
        version=version, baseline=head.oracle.harbor_release or head.oracle.spec, path=path, facts=_facts(latest),
        passed=not unlisted and tally.conforms and report.finished,
        surfaces=tuple(SurfaceRow(s, c) for s, c in counts.items()), totals=_total(counts), groups=tuple(groups),
        out_of_date=tuple(r.id for r in report.records if r.outcome is Outcome.XPASS),
        stale=tuple(tally.stale_expectations), problems=_problems(latest))


def _web_link(link: str | None) -> bool:
    """Whether an expectation entry's link may be a page's link: http(s) only (a ``javascript:`` one would run)."""
    return link is not None and link.lower().startswith(("https://", "http://"))


def _version_key(version: str) -> tuple[int, Version | str]:
    try:
        return 0, Version(version)
    except InvalidVersion:
        return 1, version


def collect(paths: Iterable[Path], cases_root: Path | None = None) -> Site:
    """The site of these reports (read whole first: a bad one stops everything before a page is made)."""
    runs = sorted(load(paths), key=lambda run: run.started)
    by_candidate: dict[Identity, list[Run]] = {}  # a candidate's runs, whatever spec (a path) started each
    by_release: dict[str, list[Run]] = {}
    for run in runs:
        if run.release is not None:
            by_release.setdefault(run.release, []).append(run)
        else:
            by_candidate.setdefault(run.header.candidate.identity, []).append(run)
    corpus, names = Corpus(cases_root), _Names()
    order = sorted(by_candidate, key=lambda who: (who.name, who.language or ""))
    homes = [names("candidates", who.name) for who in order]
    across = [interop.Candidate(who.name, who.language, home, tuple(run_cases(run) for run in by_candidate[who]))
              for who, home in zip(order, homes, strict=True)]
    failing = interop.diverging(across)
    case_paths = {case_id: names("by-case", case_id) for case_id in failing}
    surface_paths = {s: names("surfaces", s) for s in sorted({s for c in across for s in c.taking_part})}
    views = interop.views(across, surface_paths, case_paths)
    candidates = [candidate_page(who, home, by_candidate[who], corpus, runs_of, case_paths, surface_paths)
                  for who, home, runs_of in zip(order, homes, across, strict=True)]
    releases = [release_page(version, names("releases", f"harbor-{version}"), by_release[version], corpus)
                for version in sorted(by_release, key=_version_key)]
    latest = [by_candidate[who][-1] for who in order] + [by_release[page.version][-1] for page in releases]
    surfaces = tuple(sorted({s for run in latest for s in surface_counts(run)}))

    def cells(run: Run) -> tuple[Cell, ...]:
        counts = surface_counts(run)
        return tuple(Cell(surface, counts.get(surface)) for surface in surfaces)

    rows = [Row("candidate", page.name, page.path, page.facts, cells(by_candidate[who][-1]), page.facts.verdict,
                page.facts.verdict_text) for who, page in zip(order, candidates, strict=True)]
    rows += [Row("release", f"harbor {page.version}", page.path, page.facts, cells(by_release[page.version][-1]),
                 PASS if page.passed else FAIL, "gate passed" if page.passed else "gate FAILED") for page in releases]
    index = IndexPage(surfaces, tuple(rows), tuple(_facts(run) for run in runs),
                      views if len(across) > 1 else ())
    latest_runs = [by_candidate[who][-1] for who in order]
    cases = tuple(case_page(case_id, surface, case_paths[case_id], surface_paths[surface], across, latest_runs, corpus)
                  for case_id, surface in failing.items())
    return Site(index, tuple(candidates), tuple(releases), corpus.files,
                tuple(surface_page(view, across, latest_runs, case_paths) for view in views), cases)


def run_cases(run: Run) -> interop.RunCases:
    """A run as the view across candidates reads it, with why a case of its surfaces may have no line."""
    head = run.header
    if head.shard is not None:
        gap = f"not in its shard {head.shard.index}/{head.shard.count}"
    elif head.case_globs:
        gap = "not selected by its --case globs"
    elif not run.report.finished:
        gap = "its run did not finish"
    else:
        gap = "not in its report"
    lines = {record.id: record for record in run.report.records if not record.generated}
    return interop.RunCases(_facts(run), lines, frozenset(head.surfaces), gap)


def case_page(case_id: str, surface: str, path: str, surface_path: str, across: Sequence[interop.Candidate],
              latest: Sequence[Run], corpus: Corpus) -> CasePage:
    """A case that fails in some candidate's latest run: its description and input (from the first such run's line
    and its corpus), and every candidate's answer. ``latest``: each candidate's latest run, in the same order."""
    first = next(i for i, c in enumerate(across) if interop.answer(c.latest.lines.get(case_id)) is FAIL)
    run = latest[first]
    described = _described(run, across[first].latest.lines[case_id], corpus)
    answers = interop.answers(case_id, surface, across)
    ran = [a for a in answers if a.status is not NOT_RUN]
    spread = interop.spread(len(ran), sum(a.status is FAIL for a in ran))
    return CasePage(case_id, surface, path, surface_path, described.description, described.tags,
                    described.input_text, corpus.link(run.header, described.item) if described.item else None,
                    spread, answers, tuple(c.name for c in across if surface not in c.taking_part))
