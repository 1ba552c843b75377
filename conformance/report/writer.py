r"""Writing a report line by line, each flushed as it is written, and the counts every summary derives.

A run killed midway leaves a readable report: every line written is
complete (but perhaps the last), and ``certify --resume`` goes on from it.

A report is UTF-8, and a string a candidate (or the oracle) sends may hold
what UTF-8 cannot encode: a lone surrogate, which JSON can write as an
escape (``"\ud800"``) and Python holds in a str. Such a character is written
as the six characters of its escape, ``\ud800`` (lowercase hex), as text:
read back, the string holds a backslash, a ``u`` and four hex digits. Only
the report is escaped; the comparison was made before, on the strings as
received, so a lone surrogate never equals those six characters, and the
mismatch (Python reprs, ``'\ud800'`` against ``'\\ud800'``) tells them apart.
Where the escaping would make two keys of one dict equal (``'\udfff'`` and
``'\\udfff'``), the escaped key gets one more backslash in front, as often as
it takes: a stored wire value still decodes.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

from conformance import SUITE, __version__
from conformance.connection.protocol import PROTOCOL_VERSION
from conformance.core import surfaces
from conformance.core.compare import COMPARATOR_VERSION, Mismatch, UlpBucket, ulp_bucket
from conformance.core.features import Gate
from conformance.core.outcomes import Outcome, ProtocolError, RunWarning
from conformance.report.model import (
    CampaignInfo,
    CandidateLine,
    CaseLine,
    FeatureShortfall,
    Footer,
    GeneratedLine,
    GeneratedSummary,
    Generation,
    Header,
    Party,
    RaisedResult,
    ResumedRun,
    ShardInfo,
    UlpDistances,
    Warned,
    WorstFloat,
)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_header(
    *, oracle: Party, candidate: Party, nan_policy: str, surfaces: list[str], cases_root: str,
    argv: list[str] | None = None, generation: Generation | None = None, expectations: str | None = None,
    resumed: list[ResumedRun] | None = None, shard: ShardInfo | None = None, case_globs: list[str] | None = None,
    campaign: CampaignInfo | None = None,
) -> Header:
    return Header(
        suite=SUITE, suite_version=__version__, protocol=PROTOCOL_VERSION, comparator=COMPARATOR_VERSION,
        nan_policy=nan_policy, oracle=oracle, candidate=candidate, surfaces=surfaces, cases_root=cases_root,
        generation=generation, expectations=expectations, resumed=resumed, shard=shard, case_globs=case_globs,
        campaign=campaign, python=platform.python_version(), argv=argv if argv is not None else sys.argv,
        started_at=now(),
    )


# A float mismatch as the worst of a surface is chosen: (case id, path, ULPs, bucket).
_Float = tuple[str, str, int, UlpBucket]


@dataclass
class Distances:
    """One surface's float mismatches counted by ULP bucket, and the worst of them."""

    buckets: Counter[UlpBucket] = field(default_factory=Counter)
    worst: _Float | None = None

    def add(self, case_id: str, mismatch: Mismatch, bucket: UlpBucket) -> None:
        self.buckets[bucket] += 1
        assert mismatch.ulps is not None  # a mismatch with a bucket has a distance
        found = (case_id, mismatch.path, mismatch.ulps, bucket)
        if self.worst is None or _further(found, self.worst):
            self.worst = found

    def summary(self) -> UlpDistances:
        assert self.worst is not None  # set by the first mismatch added
        case_id, path, ulps, bucket = self.worst
        return UlpDistances(buckets={b: self.buckets.get(b, 0) for b in UlpBucket},
                            worst=WorstFloat(id=case_id, path=path, ulps=ulps, bucket=bucket))


def _further(a: _Float, b: _Float) -> bool:
    """Whether ``a`` is worse than ``b``: far first, then the distance; a tie goes to the first id and path, so
    the worst is the same whatever order the lines come in (shards combined)."""
    ranks = (a[3] is UlpBucket.FAR, a[2]), (b[3] is UlpBucket.FAR, b[2])
    return ranks[0] > ranks[1] or (ranks[0] == ranks[1] and a[:2] < b[:2])


@dataclass
class Tally:
    """Counts per outcome, overall and per surface, and everything else a verdict depends on."""

    outcomes: Counter[Outcome] = field(default_factory=Counter)
    by_surface: dict[str, Counter[Outcome]] = field(default_factory=dict)
    stale_recordings: list[str] = field(default_factory=list)
    generated: dict[str, GeneratedLine] = field(default_factory=dict)  # surface -> its "generated" line
    findings: list[str] = field(default_factory=list)  # ids of generated inputs that diverged
    expected_findings: list[str] = field(default_factory=list)  # ... as the expectation file lists them
    stale_expectations: list[str] = field(default_factory=list)  # entries naming no case of the run
    expired_expectations: list[str] = field(default_factory=list)  # entries past their date: no longer applied
    protocol_errors: Counter[ProtocolError] = field(default_factory=Counter)  # by name, over cases and findings
    candidate_problems: list[CandidateLine] = field(default_factory=list)  # a failed start or stop
    batch_fallbacks: int = 0  # batches that failed as a whole and were asked again one request at a time
    cached_answers: int = 0  # oracle answers taken from the answer cache
    recorded_answers: int = 0  # oracle answers taken from the suite's recordings
    recorded_inputs: int = 0  # generators whose inputs came from the suite's recordings
    # By surface, of the cases (not the generated inputs: their generator's line counts those): those the candidate
    # declined (a skip, or one the expectation file lists), those the oracle answered, and those it turned away
    # before any scoring (the surface's declared rejections). What the warnings are read from.
    declined: Counter[str] = field(default_factory=Counter)
    answered: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    distances: dict[str, Distances] = field(default_factory=dict)  # surface -> its float mismatches by ULPs

    # Every count changes through the methods below, from what happened (a run's events, a report's lines): the
    # footer is made from the tally alone (footer()), never written from outside.

    @classmethod
    def of(cls, cases: Iterable[CaseLine], generated: Iterable[GeneratedLine] = (),
           candidate_problems: Iterable[CandidateLine] = ()) -> Tally:
        tally = cls()
        for line in cases:
            tally.add(line)
        for done in generated:
            tally.add_generated(done)
        for problem in candidate_problems:
            tally.add_candidate_problem(problem)
        return tally

    def add_generated(self, line: GeneratedLine) -> None:
        self.generated[line.surface] = line

    def add_candidate_problem(self, line: CandidateLine) -> None:
        """The candidate failed to ``start`` or to ``stop``."""
        self.candidate_problems.append(line)

    def add_counts(self, batch_fallbacks: int = 0, cached_answers: int = 0, recorded_answers: int = 0,
                   recorded_inputs: int = 0) -> None:
        """What the connections counted (each process's, each task's, added up)."""
        self.batch_fallbacks += batch_fallbacks
        self.cached_answers += cached_answers
        self.recorded_answers += recorded_answers
        self.recorded_inputs += recorded_inputs

    def add_stale_expectations(self, entries: Iterable[str]) -> None:
        """Expectation-file entries that named nothing the run should have found."""
        self.stale_expectations.extend(entries)

    def add_expired_expectations(self, entries: Iterable[str]) -> None:
        """Expectation-file entries that named a case of the run but had expired by its date."""
        self.expired_expectations.extend(entries)

    @property
    def generated_skips(self) -> int:
        return sum(line.skipped for line in self.generated.values())

    @property
    def generator_errors(self) -> list[str]:
        return [f"{s}: {g.error}" for s, g in sorted(self.generated.items()) if g.error]

    @property
    def feature_shortfalls(self) -> list[FeatureShortfall]:
        """Features the generators reached less often than their minimum share, by surface."""
        return [short for _, line in sorted(self.generated.items()) for short in line.shortfalls()]

    @property
    def failing_shortfalls(self) -> list[FeatureShortfall]:
        return [short for short in self.feature_shortfalls if short.gate is Gate.FAIL]

    def add(self, record: CaseLine) -> None:
        for mismatch in record.mismatches:  # a generated finding's too: its floats are as far apart
            bucket = ulp_bucket(mismatch)
            if bucket is not None:
                self.distances.setdefault(record.surface, Distances()).add(record.id, mismatch, bucket)
        if record.protocol_error:
            self.protocol_errors[record.protocol_error] += 1
        if record.generated:
            # A shrunk generator finding: counted with its generator's line, not as a case.
            (self.expected_findings if record.outcome is Outcome.XFAIL else self.findings).append(record.id)
            return
        self.outcomes[record.outcome] += 1
        self.by_surface.setdefault(record.surface, Counter())[record.outcome] += 1
        if record.stale:
            self.stale_recordings.append(record.id)
        if record.oracle is not None:  # the candidate was asked, and the oracle answered
            self.answered[record.surface] += 1
            if record.declined:
                self.declined[record.surface] += 1
            if isinstance(record.oracle, RaisedResult) and record.surface in surfaces.SURFACES and \
                    surfaces.get(record.surface).rejected(record.oracle.raised):
                self.rejected[record.surface] += 1

    @property
    def total(self) -> int:
        return sum(self.outcomes.values())

    @property
    def conforming(self) -> int:
        return self.outcomes[Outcome.PASS] + self.outcomes[Outcome.XFAIL]

    @property
    def conforms(self) -> bool:
        checked = self.total > 0 or bool(self.generated)
        return (checked and self.conforming == self.total and not self.stale_recordings
                and not self.findings and not self.generator_errors and not self.stale_expectations
                and not self.candidate_problems and not self.generated_skips and not self.failing_shortfalls)

    def warnings(self) -> list[Warned]:
        """What makes the run no evidence of conformance although nothing need have diverged (docs/warnings.md).

        A surface warns ``mostly-skipped`` when the candidate declined more than half of its inputs: a verdict
        that rests on fewer inputs answered than declined says little of the surface, and a surface it does not
        serve is left out honestly by its handshake or scope, not by skipping. Counted per surface (a run's total
        is then below half too): a large surface cannot hide a small one declined whole.
        """
        found: list[Warned] = []
        generated_inputs = sum(g.inputs_run for g in self.generated.values())
        if not self.total and not generated_inputs:
            found.append(Warned(name=RunWarning.NOTHING_RAN, detail="0 cases and 0 generated inputs ran"))
        for surface in sorted(set(self.by_surface) | set(self.generated)):
            drawn = self.generated.get(surface)
            inputs = drawn.inputs_run if drawn is not None else 0
            ran = self.answered[surface] + inputs
            declined = self.declined[surface] + (drawn.skipped if drawn is not None else 0)
            if ran and 2 * declined > ran:
                found.append(Warned(name=RunWarning.MOSTLY_SKIPPED, surface=surface,
                                    detail=f"{declined} of the {ran} inputs asked were declined"))
            rejected = self.rejected[surface] + (drawn.rejected if drawn is not None else 0)
            if ran and rejected == ran:
                rejections = (", ".join(sorted(surfaces.get(surface).rejections)) if surface in surfaces.SURFACES
                              else "its declared rejections")  # a report of a surface not installed here
                found.append(Warned(name=RunWarning.REJECTED_BEFORE_SCORING, surface=surface,
                                    detail=f"the oracle answered all {ran} inputs with {rejections}"))
            if drawn is not None and drawn.unanswered:
                found.append(Warned(name=RunWarning.ORACLE_UNANSWERED, surface=surface, detail=(
                    f"{drawn.unanswered} generated input(s) the oracle gave no answer to were left out: "
                    f"{drawn.unanswered_reason or 'no reason given'}")[:500]))
            if drawn is not None and not inputs:
                why = f": {drawn.error.splitlines()[0]}" if drawn.error else ""
                found.append(Warned(name=RunWarning.NOTHING_GENERATED, surface=surface,
                                    detail=f"0 of {drawn.max_examples} generated inputs ran{why}"[:500]))
        return found

    def footer(self) -> Footer:
        return Footer(
            finished_at=now(),
            total=self.total,
            outcomes={name: self.outcomes.get(name, 0) for name in Outcome},
            by_surface={s: {n: c.get(n, 0) for n in Outcome} for s, c in sorted(self.by_surface.items())},
            stale_recordings=self.stale_recordings,
            generated={s: GeneratedSummary(inputs_run=g.inputs_run, divergences=g.divergences, error=g.error,
                                           drawn=g.drawn, features=g.features)
                       for s, g in sorted(self.generated.items())},
            findings=len(self.findings),
            expected_findings=len(self.expected_findings),
            stale_expectations=self.stale_expectations,
            expired_expectations=self.expired_expectations,
            protocol_errors=dict(sorted(self.protocol_errors.items())),
            candidate_problems=[f"{p.stage}: {p.outcome}" for p in self.candidate_problems],
            batch_fallbacks=self.batch_fallbacks,
            cached_answers=self.cached_answers,
            recorded_answers=self.recorded_answers,
            recorded_inputs=self.recorded_inputs,
            ulp_distances={s: d.summary() for s, d in sorted(self.distances.items())},
            feature_shortfalls=self.feature_shortfalls,
            conforms=self.conforms,
            warnings=self.warnings(),
        )


_UNENCODABLE = re.compile("[\ud800-\udfff]")  # in a Python str, every surrogate is a lone one


def _escaped_text(text: str) -> str:
    return _UNENCODABLE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def _distinct(keys: list[Any]) -> list[Any]:
    """``keys`` (of one dict) escaped, each still distinct: a key the escaping would make equal to another gets
    one more backslash in front, as often as it takes. The other keys are left as they are."""
    taken = {key for key in keys if isinstance(key, str) and not _UNENCODABLE.search(key)}
    out = []
    for key in keys:
        if isinstance(key, str) and _UNENCODABLE.search(key):
            key = _escaped_text(key)
            while key in taken:
                key = "\\" + key
            taken.add(key)
        out.append(key)
    return out


def _storable(value: Any) -> Any:
    """JSON data with each lone surrogate in its strings written as the text of its escape, the keys of each
    object and of each wire dict (``{"dict": [[k, v], ...]}``) kept distinct, so a wire value still decodes."""
    if isinstance(value, str):
        return _escaped_text(value) if _UNENCODABLE.search(value) else value
    if isinstance(value, list):
        return [_storable(item) for item in value]
    if not isinstance(value, dict):
        return value
    pairs = value.get("dict")
    if len(value) == 1 and isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 for p in pairs):
        keys = _distinct([_storable(k) if not isinstance(k, str) else k for k, _ in pairs])
        return {"dict": [[key, _storable(v)] for key, (_, v) in zip(keys, pairs, strict=True)]}
    keys = _distinct(list(value))
    return {key: _storable(item) for key, item in zip(keys, value.values(), strict=True)}


_REPORT_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False)  # made once: json.dumps makes one per call


def dumps(line: Header | CaseLine | GeneratedLine | CandidateLine | Footer) -> str:
    """One report line, as written: UTF-8-encodable, each lone surrogate as the text of its escape."""
    text = _REPORT_JSON.encode(line.to_json())
    # A lone surrogate shows in the JSON (a value), or as U+FFFD where pydantic wrote a dict key holding one
    # (lossily: an implementation's dependencies). Rare: only then is the line walked, as Python holds it, and
    # made again from what it can store.
    if _UNENCODABLE.search(text) or "\ufffd" in text:
        stored = type(line).model_validate(_storable(line.model_dump(mode="python")))
        text = _REPORT_JSON.encode(stored.to_json())
    return text


class ReportWriter:
    """Writes a report line by line, each flushed as it is written; ``with`` closes it. It writes what it is
    given: a run's footer (made by its tally) is written last, by whoever has it.

    ``kept``: the lines of an interrupted run that a resumed run keeps. They
    are written, after the header, to a new file that then replaces the old
    one in a single rename, so a run killed while resuming still leaves one
    whole report.
    """

    def __init__(self, path: Path | None, head: Header,
                 kept: Iterable[CaseLine | GeneratedLine | CandidateLine] = ()) -> None:
        self.path = path
        self._handle: IO[str] | None = None
        kept = list(kept)
        writing = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            writing = path.with_name(path.name + ".resuming") if kept else path
            self._handle = open(writing, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self.write(head)
        for line in kept:
            self.write(line)
        if kept and path is not None and writing is not None:
            os.replace(writing, path)

    def write(self, line: Header | CaseLine | GeneratedLine | CandidateLine | Footer) -> None:
        if self._handle is not None:
            self._handle.write(dumps(line) + "\n")
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
