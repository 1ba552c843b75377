"""``conformance replay``: after a fix, which findings are fixed and which still fail.

A finding is replayed several times (:data:`DEFAULT_RUNS`) against the
candidate and judged by what those runs show (:class:`Verdict`): fixed when
every run conforms, failing when none does, flaky when some do, error when
it could not be run at all (no oracle answer, a candidate that did not
start, one given up on).

Findings come from one of two places:

- a report (:func:`from_report`): each case line that does not conform,
  failing cases and generated findings alike. The oracle's answer is the
  one the line holds, so no oracle is started: the inputs go through the
  runner with that answer as their recording, compared by the NaN policy
  the report's header names.
- a Hypothesis example database (:func:`from_database`): the inputs saved as
  findings (:mod:`conformance.run.examples`), which a live oracle answers,
  as a generator replays them; a fixed one is then deleted from the
  database (:func:`forget_fixed`), as a generator deletes an input that no
  longer diverges, and a failing or flaky one stays.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from conformance.connection.base import DEFAULT_TIMEOUT, Connection, StartFailure
from conformance.connection.breaker import DEFAULT_LIMIT, Breaker
from conformance.connection.connectors import connect
from conformance.connection.spec import Spec
from conformance.core import scope
from conformance.core.compare import POLICIES, NanPolicy, Result
from conformance.core.outcomes import Outcome
from conformance.errors import UsageError
from conformance.report.model import CaseLine, Header, Party, nan_policy_names
from conformance.report.reader import ReportError, ReportFile
from conformance.run.generate import finding_id
from conformance.run.runner import Input, Oracle, run_inputs

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase

DEFAULT_RUNS = 3


class Verdict(StrEnum):
    """What the runs of one finding show."""

    FIXED = "fixed"  # every run conforms
    FAILING = "failing"  # no run conforms
    FLAKY = "flaky"  # some runs conform and some do not
    ERROR = "error"  # it could not be run: no oracle answer, the candidate did not start or was given up on


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReplayRun(_Model):
    """One run of a finding: its outcome, and how it went wrong (empty when it conforms)."""

    outcome: Outcome
    difference: str = Field(default="", description="Its first mismatch, or its detail; empty for a pass.")


class Replayed(_Model):
    """One finding, replayed: its runs and the verdict they give."""

    id: str
    surface: str
    origin: Literal["case", "generated"]
    verdict: Verdict
    runs: list[ReplayRun] = Field(default_factory=list, description="Empty when it could not be run at all.")
    reason: str = Field(default="", description="With verdict error: why it could not be run.")
    difference: str = Field(default="", description=(
        "The first difference of the last run that did not conform; empty when every run conformed."))


class Replay(_Model):
    """A replay: which candidate, of what, how many runs each, and each finding's verdict (the ``--json`` file)."""

    candidate: Party = Field(description="The candidate: its spec, and what its handshake said (null when it "
                                         "never started).")
    source: str = Field(description="The report, or the example database, the findings came from.")
    runs: int = Field(description="Runs of each finding.")
    findings: list[Replayed]
    removed: int = Field(default=0, description="Fixed findings deleted from the example database.")
    passed_over: int = Field(default=0, description=(
        "Saved findings not replayed (kept): outside the candidate's claimed scope, or the suite's."))

    def count(self, verdict: Verdict) -> int:
        return sum(finding.verdict is verdict for finding in self.findings)

    @property
    def all_fixed(self) -> bool:
        return all(finding.verdict is Verdict.FIXED for finding in self.findings)


def schema() -> dict[str, Any]:
    """The JSON Schema of the file ``replay --json`` writes."""
    out = Replay.model_json_schema()
    out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    out["title"] = "harbor-conformance replay"
    out["description"] = ("Findings replayed against a candidate after a fix: each one's runs and verdict "
                          "(fixed: every run conforms; failing: none does; flaky: some do; error: not run).")
    return out


@dataclass(frozen=True)
class Finding:
    """One input to replay. ``expected``: the oracle's answer it carries (a report's); None, a live oracle's.
    ``missing``: why it cannot be run (a report line without the oracle's answer)."""

    id: str
    surface: str
    value: Any
    origin: Literal["case", "generated"] = "generated"
    expected: Result | None = None
    missing: str = ""


@dataclass(frozen=True)
class Policies:
    """The NaN policy each surface was compared by, as a report's header names it: one that overrode every
    surface's, or each surface's own (``SURFACE=POLICY, ...``)."""

    every: NanPolicy | None = None
    by_surface: Mapping[str, NanPolicy] = field(default_factory=dict)

    @classmethod
    def named(cls, text: str) -> Policies:
        """The policies a header's ``nan_policy`` names; a RegistryError (a usage error) for one not registered."""
        every, each = nan_policy_names(text)
        return cls(POLICIES.get(every) if every else None,
                   {surface: POLICIES.get(name) for surface, name in each.items()})

    def of(self, surface: str) -> NanPolicy | None:
        """The surface's policy (None: the one it declares now)."""
        return self.every or self.by_surface.get(surface)


@dataclass(frozen=True)
class Source:
    """What is replayed: where it comes from, the findings, and the policy each surface is compared by."""

    name: str  # the report's path, or the database's spec
    findings: list[Finding]
    policies: Policies = field(default_factory=Policies)
    candidate: str | None = None  # the candidate the report was made of
    scoped: bool = False  # only the findings the candidate claims are replayed (a database's: it names none)
    passed_over: int = 0  # findings not replayed: outside the candidate's claimed scope or the suite's

    def within(self, names: list[str] | None) -> Source:
        """Only the findings of these surfaces (None: every one)."""
        if names is None:
            return self
        return dataclasses.replace(self, findings=[f for f in self.findings if f.surface in names])

    def claimed(self, claimed: scope.Scope | None) -> Source:
        """Only the findings the candidate claims (when the source is ``scoped``), the others passed over."""
        if not self.scoped:
            return self
        kept = [f for f in self.findings if scope.claims(claimed, f.surface, f.value)]
        return dataclasses.replace(self, findings=kept, passed_over=self.passed_over + len(self.findings) - len(kept))


def from_report(path: Path) -> Source:
    """Every case line of the report that does not conform; ReportError (exit status 2) naming file and line for
    a report that cannot be read, or whose header names a NaN policy that is not registered."""
    found: list[Finding] = []
    header: Header | None = None
    policies = Policies()
    for _, number, line in ReportFile(path).entries():
        if isinstance(line, Header):
            header = line
            try:
                policies = Policies.named(line.nan_policy)
            except UsageError as e:
                raise ReportError(f"{path}:{number}: the header's NaN policy: {e}") from None
        elif isinstance(line, CaseLine) and not line.conforms:
            found.append(_finding(line))
    return Source(str(path), found, policies, header.candidate.spec if header is not None else None)


def _finding(line: CaseLine) -> Finding:
    value = line.decoded_input
    if line.oracle is None:
        told = line.first_difference()
        return Finding(line.id, line.surface, value, line.origin,
                       missing=f"the report holds no oracle answer for it ({told})")
    return Finding(line.id, line.surface, value, line.origin, expected=line.oracle.to_result())


def from_database(name: str, database: ExampleDatabase, surface_names: Iterable[str]) -> Source:
    """The findings the database holds for each surface (in a fixed order), as a generator replays them: those
    the suite leaves out passed over, and those the candidate does not claim once it has said what it claims."""
    from conformance.run.examples import stored_findings  # imports Hypothesis

    found: list[Finding] = []
    passed_over = 0
    for surface in surface_names:
        for value in stored_findings(database, surface):
            if scope.in_scope(value):
                found.append(Finding(finding_id(surface, value), surface, value))
            else:
                passed_over += 1
    return Source(name, found, scoped=True, passed_over=passed_over)


def against(source: Source, spec: Spec, oracle: Oracle, runs: int = DEFAULT_RUNS, *,
            timeout: float = DEFAULT_TIMEOUT, database: ExampleDatabase | None = None,
            log: Callable[[str], None] = lambda message: None) -> Replay:
    """The source replayed against the candidate ``spec`` names, started here and stopped once done (one that
    does not start leaves every finding an error, as a certification records it); with ``database``, each fixed
    finding is then deleted from it."""
    replayed: list[Replayed] = []
    party = Party(spec=spec.text)  # not started: nothing to replay, or it did not start
    if source.findings:
        log(f"starting the candidate, {spec.text}")
        try:
            candidate = Breaker(connect(spec, timeout=timeout, log=log), DEFAULT_LIMIT)
        except StartFailure as e:
            log(f"the candidate did not start: {e}")
            candidate = Breaker.never_started(spec, f"{e.reply.kind}: {e.reply.detail}")
        with candidate:
            implementation = candidate.implementation
            party = Party(spec=spec.text, implementation=implementation)
            source = source.claimed(implementation.scope if implementation is not None else None)
            log(f"replaying {len(source.findings)} finding(s) of {source.name}, {runs} run(s) each")
            replayed = replay(source, candidate, oracle, runs, lambda number: log(f"run {number} of {runs}"))
    removed = forget_fixed(database, source, replayed) if database is not None else 0
    return Replay(candidate=party, source=source.name, runs=runs, findings=replayed, removed=removed,
                  passed_over=source.passed_over)


def replay(source: Source, candidate: Connection, oracle: Oracle, runs: int = DEFAULT_RUNS,
           on_run: Callable[[int], None] = lambda number: None) -> list[Replayed]:
    """Each finding run ``runs`` times against the candidate (every finding once, then every finding again: the
    runner batches each pass), in the source's order; ``on_run`` is told each pass's number as it starts."""
    if runs < 1:
        raise UsageError(f"runs: expected a number at least 1, got {runs}")
    runnable = [finding for finding in source.findings if not finding.missing]
    by_surface: dict[str, list[Finding]] = {}
    for finding in runnable:
        by_surface.setdefault(finding.surface, []).append(finding)
    records: dict[int, list[CaseLine]] = {id(finding): [] for finding in runnable}
    for number in range(1, runs + 1):
        on_run(number)
        for surface, group in by_surface.items():
            inputs = [Input(f.id, f.surface, f.value, f.expected) for f in group]
            made = run_inputs(inputs, candidate, oracle, source.policies.of(surface))
            for finding, record in zip(group, made, strict=True):
                records[id(finding)].append(record)
    return [_judged(finding, records.get(id(finding), [])) for finding in source.findings]


def _judged(finding: Finding, records: list[CaseLine]) -> Replayed:
    runs = [ReplayRun(outcome=r.outcome, difference="" if r.outcome is Outcome.PASS else r.first_difference())
            for r in records]
    last = next((run.difference for run in reversed(runs) if run.outcome is not Outcome.PASS), "")
    made = {"id": finding.id, "surface": finding.surface, "origin": finding.origin, "runs": runs, "difference": last}
    if finding.missing:
        return Replayed(verdict=Verdict.ERROR, reason=finding.missing, **made)
    # No oracle answer in a run (a live oracle that failed; a candidate not run: never started, or given up on).
    unrun = next((r for r in records if r.oracle is None and r.outcome is not Outcome.PASS), None)
    if unrun is not None:
        return Replayed(verdict=Verdict.ERROR, reason=unrun.first_difference(), **made)
    clean = sum(run.outcome is Outcome.PASS for run in runs)
    # A run's own flaky outcome (two answers to the input within it) is a mixed result too.
    mixed = clean > 0 or any(run.outcome is Outcome.FLAKY for run in runs)
    verdict = Verdict.FIXED if clean == len(runs) else Verdict.FLAKY if mixed else Verdict.FAILING
    return Replayed(verdict=verdict, **made)


def forget_fixed(database: ExampleDatabase, source: Source, replayed: list[Replayed]) -> int:
    """Each fixed finding deleted from the database; how many were."""
    from conformance.run.examples import forget_finding  # imports Hypothesis

    removed = 0
    for finding, judged in zip(source.findings, replayed, strict=True):
        if judged.verdict is Verdict.FIXED:
            forget_finding(database, finding.surface, finding.value)
            removed += 1
    return removed
