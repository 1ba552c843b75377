"""One certification run: cases then generated inputs, oracle against candidate, into a report.

``conformance certify`` and the upgrade gate (``conformance gate``) are both
this function; the gate is a certification whose candidate is another harbor
release.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.connection.breaker import DEFAULT_LIMIT, Breaker
from conformance.connection.connect import DEFAULT_TIMEOUT, ConnectError, StartFailure, connect
from conformance.core import scope, surfaces
from conformance.core.compare import POLICIES
from conformance.core.registry import RegistryError
from conformance.corpus import cases as case_corpus
from conformance.oracle.environments import OracleSetupError
from conformance.report.model import ReportWriter, header
from conformance.run import generate as generation
from conformance.run.expectations import ExpectationError, Expectations
from conformance.run.resume import Resumed, resumable
from conformance.run.runner import Oracle, run_cases
from conformance.run.shards import Shard

DEFAULT_ORACLE = "harbor==0.13.1"


class UsageError(Exception):
    """The run cannot start as asked (exit status 2); the message says why."""

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.details = details or []


@dataclass
class Options:
    candidate: str = "reference"
    oracle: str = DEFAULT_ORACLE
    surfaces: list[str] | None = None
    case_globs: list[str] | None = None
    cases_root: Path | None = None
    timeout: float = DEFAULT_TIMEOUT
    nan_policy: str | None = None
    profile: str = generation.DEFAULT_PROFILE
    seed: int | None = None
    max_examples: int | None = None
    no_cases: bool = False
    no_generate: bool = False
    expectations: Path | None = None
    timeout_multiplier: float = 1.0  # scales the candidate's request, start and stop timeouts
    validate_protocol: bool = False  # check every candidate message against the published schemas
    broken_after: int = DEFAULT_LIMIT  # consecutive crashes, timeouts or protocol errors that end the candidate
    resume: bool = False  # go on from the report at the report path, keeping what it finished
    shard: Shard | None = None  # run only this part: its cases, its seed, its share of the budget


@dataclass
class Run:
    footer: dict[str, Any]
    records: list[dict[str, Any]]
    writer: ReportWriter
    candidate_implementation: dict[str, Any]
    oracle_spec: str

    @property
    def conforms(self) -> bool:
        return bool(self.footer["conforms"])


def load_corpus(root: Path) -> list[case_corpus.LoadedCase]:
    loaded, errors = case_corpus.check_corpus(root)
    if errors:
        raise UsageError(f"{len(errors)} problem(s) in the case corpus at {root}; `conformance cases check` lists them",
                         [str(e) for e in errors])
    return loaded


def certify(options: Options, report: Path, log: Callable[[str], None] = lambda message: None) -> Run:
    if options.profile not in generation.PROFILES:
        raise UsageError(f"unknown profile {options.profile!r}; known: {', '.join(generation.PROFILES)}")
    if options.no_cases and options.no_generate:
        raise UsageError("--no-cases and --no-generate together leave nothing to run")

    for name in options.surfaces or []:
        if name not in surfaces.SURFACES:
            raise UsageError(f"unknown surface {name!r}; known: {', '.join(sorted(surfaces.SURFACES))}")
    try:
        nan_policy = POLICIES.get(options.nan_policy) if options.nan_policy else None
    except RegistryError as e:
        raise UsageError(str(e)) from None
    try:
        known = Expectations.from_file(options.expectations) if options.expectations else None
    except ExpectationError as e:
        raise UsageError(f"expectation file: {e}") from None
    root = options.cases_root or case_corpus.default_root()
    loaded = load_corpus(root)
    try:
        oracle_conn = None if options.oracle == "recorded" else connect(options.oracle, log=log)
    except (ConnectError, OracleSetupError) as e:
        raise UsageError(f"oracle {options.oracle}: {e}") from None
    # Recordings were made with the default oracle; its release decides which cases apply.
    harbor_version = oracle_conn.implementation.get("version") if oracle_conn else DEFAULT_ORACLE.split("==")[1]
    selected = [] if options.no_cases else case_corpus.select(loaded, options.surfaces, harbor_version,
                                                              options.case_globs)
    if not selected and not options.no_cases:
        _close(oracle_conn)
        raise UsageError("no case selected")
    if options.shard:
        selected = [i for i in selected if options.shard.takes(i.id)]
    # Generated inputs need a live oracle and are not selected by case id.
    gen_surfaces = ([] if options.no_generate or oracle_conn is None or options.case_globs
                    else surfaces.with_generators(options.surfaces))
    if options.no_cases and not gen_surfaces:
        _close(oracle_conn)
        raise UsageError("nothing to run: generated inputs need a live oracle (not --oracle recorded) and no --case")
    chosen = generation.PROFILES[options.profile]
    if options.shard and gen_surfaces and options.seed is None and chosen.fixed_seed is None and not options.resume:
        _close(oracle_conn)
        raise UsageError(f"--shard with profile {options.profile} needs --seed: every shard derives its "
                         "generators' seed from the same one")
    try:
        resumed = resumable(report, options, chosen, _policy_name(nan_policy), log) if options.resume else Resumed()
    except ValueError as e:
        _close(oracle_conn)
        raise UsageError(str(e)) from None
    seed = options.seed if options.seed is not None else resumed.seed
    if seed is None:
        seed = chosen.fixed_seed if chosen.fixed_seed is not None else generation.new_seed()
    base_seed, budget = seed, options.max_examples if options.max_examples is not None else chosen.max_examples
    if options.shard:
        seed, budget = options.shard.seed(seed), options.shard.budget(budget)
    start_problem = None
    try:
        cand = Breaker(connect(options.candidate, timeout=options.timeout, timeout_multiplier=options.timeout_multiplier,
                               validate=options.validate_protocol, log=log), options.broken_after)
    except StartFailure as e:  # a candidate that will not start is a result, recorded like any other
        log(f"the candidate did not start: {e}")
        cand, start_problem = Breaker.never_started(options.candidate, f"{e.reply.kind}: {e.reply.detail}"), e.reply
    except (ConnectError, OracleSetupError) as e:
        _close(oracle_conn)
        raise UsageError(str(e)) from None
    claimed = cand.implementation.get("scope")
    if claimed is not None:  # a candidate claiming part of the suite is held to that part
        selected = [i for i in selected if scope.claims(claimed, i.case.surface, i.case.input)]
        gen_surfaces = scope.surfaces(claimed, gen_surfaces)
        if not selected and not gen_surfaces:
            cand.close()
            _close(oracle_conn)
            raise UsageError(f"{options.candidate} claims {claimed}: "
                             "nothing selected falls within it")
    the_oracle = Oracle(oracle_conn)
    writer = ReportWriter(report, header(
        oracle={"spec": the_oracle.spec, "implementation": the_oracle.implementation},
        candidate={"spec": options.candidate, "implementation": cand.implementation or None},
        nan_policy=_policy_name(nan_policy),
        surfaces=sorted({i.case.surface for i in selected} | set(gen_surfaces)),
        cases_root=str(root),
        generation=({**generation.describe(chosen, seed, budget), "base_seed": base_seed}
                    if gen_surfaces else None),
        shard=({"index": options.shard.index, "count": options.shard.count, "cases": [i.id for i in selected]}
               if options.shard else None),
        expectations=str(options.expectations) if options.expectations else None,
        resumed=resumed.history or None,
    ), resumed.kept)
    records: list[dict[str, Any]] = [line for line in resumed.kept if line["type"] == "case"]
    if known is not None:
        known.seen.update(line["id"] for line in records)
    if start_problem is not None:
        writer.candidate_problem("start", start_problem)

    def keep(record) -> None:
        if known is not None:
            record = known.apply(record)
        writer.record(record)
        records.append(record.to_json())

    finished = False
    try:
        for record in run_cases([i for i in selected if i.id not in resumed.cases], cand, the_oracle, nan_policy):
            keep(record)
        for name in gen_surfaces:
            if name in resumed.generated:
                continue
            if cand.broken:
                result = generation.GenerationResult(name, chosen.name, seed, budget, error=f"not run: {cand.broken}")
            else:
                log(f"generating {name} inputs ({options.profile}, seed {seed})")
                result = generation.generate(name, cand, the_oracle, profile=chosen, seed=seed,
                                             max_examples=budget, policy=nan_policy)
            for record in result.findings:
                keep(record)
            writer.generated(result.to_json())
        if known is not None:
            writer.tally.stale_expectations = known.stale(_in_scope(selected, gen_surfaces, options.case_globs,
                                                                           options.shard))
        finished = True
    finally:
        # Interrupted (Ctrl-C, SIGTERM), the candidate is still stopped and its folder removed; the report
        # gets no footer, so it reads as unfinished and --resume goes on from it.
        if (stop_problem := cand.close()) is not None:
            writer.candidate_problem("stop", stop_problem)
        writer.tally.batch_fallbacks = len(cand.batch_fallbacks)
        the_oracle.close()
        footer = writer.close(footer=finished)
    return Run(footer, records, writer, cand.implementation, the_oracle.spec)


def _in_scope(selected, gen_surfaces: list[str], case_globs: list[str] | None,
              shard: Shard | None = None) -> Callable[[str], bool]:
    """Whether an expectation entry should have named something this run ran.

    A generated input's id belongs to the run when its surface was generated;
    a case id when its surface ran, it matches the --case globs, if any, and
    it falls to this run's shard, if any (an id there that names no case is a
    typo or a removed case).
    """
    case_surfaces = {i.case.surface for i in selected}
    patterns = [re.compile(re.escape(glob).replace(r"\*", ".*")) for glob in case_globs or []]

    def in_scope(entry_id: str) -> bool:
        surface, _, slug = entry_id.partition("::")
        if slug.startswith("gen-"):
            return surface in gen_surfaces
        return (surface in case_surfaces and (not patterns or any(p.fullmatch(entry_id) for p in patterns))
                and (shard is None or shard.takes(entry_id)))

    return in_scope


def _policy_name(nan_policy) -> str:
    return nan_policy.name if nan_policy else ", ".join(
        sorted({f"{s.name}={s.policy.name}" for s in surfaces.SURFACES.values()}))


def _close(connection) -> None:
    if connection is not None:
        connection.close()
