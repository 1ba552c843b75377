"""One certification run: a plan carried out, oracle against candidate, into a report.

``conformance certify`` and the upgrade gate (``conformance gate``) are both
this; the gate is a certification whose candidate is another harbor release.
It is a front end of the engine (:mod:`conformance.run.engine`): it opens
the oracle and the candidate, registers the report file and the watcher as
handlers of the run's events, and feeds the engine the plan's cases and
generators. Everything the run opens (the oracle, the candidate, the
report) is owned by one ``ExitStack``: however the run ends (finished,
refused, interrupted), the candidate is stopped, its stop recorded, and the
report closed; only a finished run gets a footer, so an interrupted one
reads as unfinished and ``--resume`` goes on from it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from conformance.connection import cached
from conformance.connection.base import ConnectError, StartFailure
from conformance.connection.breaker import Breaker
from conformance.connection.connectors import connect
from conformance.connection.pool import Pool
from conformance.connection.protocol import Implementation
from conformance.connection.spec import Spec
from conformance.errors import UsageError
from conformance.report.model import CandidateLine, CaseLine, Footer, Party
from conformance.report.writer import Tally
from conformance.run.engine import Engine, Handler, ReportFile, Stream
from conformance.run.events import CandidateFailed, ConnectionCounts, ExpectationsChecked, Outline, RunStarted
from conformance.run.plan import DEFAULT_ORACLE, Options, Plan, load_corpus, make_plan
from conformance.run.runner import Oracle
from conformance.run.stored_inputs import InputStore
from conformance.run.watch import Watcher

__all__ = ["DEFAULT_ORACLE", "Oracle", "Options", "Run", "UsageError", "certify", "connect_oracle", "execute",
           "load_corpus"]


@dataclass
class Run:
    footer: Footer
    records: list[CaseLine]
    tally: Tally
    candidate: Party  # as the report's header has it: its spec, and its handshake (None: it never started)
    oracle_spec: str

    @property
    def conforms(self) -> bool:
        return self.footer.conforms

    @property
    def candidate_implementation(self) -> Implementation | None:
        return self.candidate.implementation


def certify(options: Options, report: Path, log: Callable[[str], None] = lambda message: None,
            watcher: Watcher | None = None, oracle: Oracle | None = None, handlers: Sequence[Handler] = (),
            inputs: InputStore | None = None) -> Run:
    """Plan the run, then carry it out; UsageError (exit 2) for a run that cannot start as asked."""
    return execute(make_plan(options, report, log), log, watcher, oracle, handlers, inputs)


def connect_oracle(spec: Spec | None, log: Callable[[str], None] = lambda message: None, *,
                   cache: bool = True, processes: int = 1, recorded: bool = True) -> Oracle:
    """The oracle a spec names (None: the corpus's recordings); UsageError (exit 2) when it cannot start.

    ``cache``: behind the oracle answer cache (:mod:`conformance.connection.cached`), which starts harbor only
    when it lacks an answer. ``processes``: more than one, a pool that runs that many whole-job inputs at once,
    each process behind the cache too (started when several such inputs come).
    """
    if spec is None:
        return Oracle(None)
    try:
        if cache:
            first = cached.connect(spec, log=log, recorded=recorded)
        else:
            log(f"starting the oracle, {spec.text}")
            first = connect(spec, log=log)
    except ConnectError as e:
        raise UsageError(f"oracle {spec}: {e}") from None
    if processes <= 1:
        return Oracle(first)
    return Oracle(Pool(first, lambda: cached.connect(spec, log=log, recorded=recorded) if cache
                       else connect(spec, log=log), processes, log))


def execute(plan: Plan, log: Callable[[str], None] = lambda message: None, watcher: Watcher | None = None,
            oracle: Oracle | None = None, handlers: Sequence[Handler] = (), inputs: InputStore | None = None) -> Run:
    """Carry the plan out: the engine fed the plan's cases and generators, its events written to the report, then
    shown to ``watcher``, then to each of ``handlers``. ``oracle``: one already open, which the caller owns and
    may share between runs (the plan's oracle spec is then only what the report's header says). ``inputs``: the
    stored inputs to use (by default the user's, with the suite's recordings, when the plan's seed recurs)."""
    options = plan.options
    database = None
    if options.example_database is not None:
        from conformance.run.examples import open_database  # imports Hypothesis

        database = open_database(options.example_database)
    stream = Stream([ReportFile(plan.report), watcher or Watcher(), *handlers])
    with ExitStack() as stack:
        stack.callback(stream.finish, False)  # a run that did not finish: no footer (the watcher is told either way)
        if oracle is None:
            oracle = stack.enter_context(connect_oracle(options.oracle, log, cache=options.oracle_cache,
                                                        processes=options.oracle_processes))
        from_cache_before = cached.answered_from_cache(oracle.connection)  # a shared oracle may have answered before
        from_recordings_before = cached.answered_from_recordings(oracle.connection)
        stored = inputs if inputs is not None else (
            InputStore() if options.input_cache and plan.seed_recurs else None)
        start_problem = None
        log(f"starting the candidate, {options.candidate.text}")
        try:
            candidate = Breaker(connect(options.candidate, timeout=options.timeout,
                                        timeout_multiplier=options.timeout_multiplier,
                                        validate=options.validate_protocol, log=log), options.broken_after)
        except StartFailure as e:  # a candidate that will not start is a result, recorded like any other
            log(f"the candidate did not start: {e}")
            candidate = Breaker.never_started(options.candidate, f"{e.reply.kind}: {e.reply.detail}")
            start_problem = CandidateLine(stage="start", outcome=e.reply.kind, detail=e.reply.detail,
                                          protocol_error=e.reply.error)
        stack.enter_context(candidate)
        implementation = candidate.implementation
        plan = plan.within(implementation.scope if implementation is not None else None)
        finished = False

        def end() -> None:  # the candidate stopped (its failing to stop recorded), before the oracle is closed
            if (problem := candidate.close()) is not None:
                stream.emit(CandidateFailed(CandidateLine(stage="stop", outcome=problem.kind, detail=problem.detail,
                                                          protocol_error=problem.error)))
            stream.emit(ConnectionCounts(
                batch_fallbacks=len(candidate.batch_fallbacks),
                cached_answers=cached.answered_from_cache(oracle.connection) - from_cache_before,
                recorded_answers=cached.answered_from_recordings(oracle.connection) - from_recordings_before,
                recorded_inputs=stored.from_shipped if stored is not None else 0))
            stream.finish(finished)

        stack.callback(end)
        header = plan.header(oracle=Party(spec=oracle.spec, implementation=oracle.implementation),
                             candidate=Party(spec=options.candidate.text, implementation=implementation))
        to_run = plan.to_run
        stream.emit(RunStarted(header, Outline(
            cases=Counter(i.case.surface for i in to_run),
            generators=tuple(n for n in plan.generators if n not in plan.resumed.generated),
            budgets={name: plan.budget_for(name) for name in plan.generators},
            profile=plan.profile.name), tuple(plan.resumed.kept)))
        if start_problem is not None:
            stream.emit(CandidateFailed(start_problem))
        # Entries expire by the run's date, the day its header says it started.
        known = plan.expectations.dated(header.started_on) if plan.expectations is not None else None
        engine = Engine(candidate, oracle, stream, policy=plan.nan_policy, expectations=known, database=database,
                        observations=options.observations,
                        stored_inputs=stored)
        records = [line for line in plan.resumed.kept if isinstance(line, CaseLine)]
        records += engine.cases(to_run)
        for name in plan.generators:
            if name not in plan.resumed.generated:
                findings, _ = engine.generate(name, profile=plan.profile, seed=plan.seed, budget=plan.budget_for(name),
                                              first_only=options.first_finding)
                records += findings
        if known is not None:
            stream.emit(ExpectationsChecked(tuple(known.stale(plan.coverage())),
                                            tuple(known.expired(r.id for r in records))))
        finished = True
    assert stream.footer is not None  # a run that gets here finished
    return Run(stream.footer, records, stream.tally, header.candidate, oracle.spec)
