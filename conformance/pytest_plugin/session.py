"""One pytest process's part of a conformance run, registered as a plugin only when the plugin is on.

It checks the settings, the expectation file and the example database, and
starts the oracle and the candidate once before any item runs, so that a
run that cannot start as asked ends with ``pytest.UsageError`` (exit status
4) and one message. Items then share its connections (each pytest-xdist
worker opens its own) and its generators' seed (a fresh one is chosen once,
by the controller, and given to every worker). The process that writes the
report (the controller, or the only one) gathers every item's report lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from conformance.pytest_plugin import options
from conformance.pytest_plugin.markers import Markers

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase

    from conformance.connection.breaker import Breaker
    from conformance.errors import HarnessError
    from conformance.pytest_plugin.reporting import Ledger
    from conformance.report.model import CandidateLine, Party, Warned
    from conformance.run.engine import Engine, Stream
    from conformance.run.expectations import Expectations
    from conformance.run.runner import Oracle

SUITE: pytest.StashKey[Conformance] = pytest.StashKey()  # the process's Conformance, while the plugin is on
SEED = "conformance_seed"  # in an xdist worker's input: the run's seed
WORKER_OUTPUT = "conformance"  # in an xdist worker's output: what only it knows (its candidate's stop, fallbacks)


def _usage(error: HarnessError, option: str) -> pytest.UsageError:
    return pytest.UsageError("\n".join([f"{option}: {error}", *error.details]))


class Conformance:
    def __init__(self, config: pytest.Config, settings: options.Settings) -> None:
        from conformance.core import surfaces

        self.config = config
        self.settings = settings
        self.markers = Markers(config)
        self.surface_names = frozenset(surfaces.SURFACES)
        self.generators = frozenset(surfaces.with_generators())
        self.worker = hasattr(config, "workerinput")
        self.expectations: Expectations | None = None
        self._database: ExampleDatabase | None = None
        self._candidate: Breaker | None = None
        self._oracle: Oracle | None = None
        self.stream = self._stream()  # the engine's events in this process: a running item listens to them
        self.candidate_lines: list[CandidateLine] = []  # this process's candidate failing to start or to stop
        self.batch_fallbacks = 0  # batches of this process's candidate asked again one request at a time
        self.cached_answers = 0  # this process's oracle answers taken from the answer cache
        self.recorded_answers = 0  # and from the suite's recordings
        self.parties: tuple[Party, Party] | None = None  # (oracle, candidate), as they started
        self.ledger: Ledger | None = None  # where the report is written: the lines of every item
        self.stale: list[str] = []  # expectation entries that named nothing they should have
        self.expired: list[str] = []  # expectation entries naming a case of the run, past their date
        self.warnings: list[Warned] = []  # what makes the run no evidence of conformance (docs/warnings.md)
        self.seed = self._seed()

    @classmethod
    def start(cls, config: pytest.Config) -> Conformance:
        """Everything checked, the connections started once (by the controller): pytest.UsageError if not."""
        from datetime import UTC, datetime

        from conformance.errors import HarnessError
        from conformance.pytest_plugin.reporting import Ledger
        from conformance.run.expectations import Expectations

        suite = cls(config, options.read(config))
        try:
            if suite.settings.run.expectations is not None:
                # Entries expire by the day the run started, as certify's do by its header's.
                suite.expectations = Expectations.from_file(suite.settings.run.expectations,
                                                            on=datetime.now(UTC).date())
        except HarnessError as e:
            raise _usage(e, "--conformance-expectations") from None
        run = suite.settings.run
        if not run.no_generate and run.oracle is not None:  # where used only: Hypothesis is slow
            try:
                suite.database()
            except HarnessError as e:
                raise _usage(e, "--conformance-example-database") from None
        # Every marker an item can carry, but the tags of case files not yet read (declared as they are read).
        suite.markers.every_item()
        suite.markers.generated()
        for surface in suite.surface_names:
            suite.markers.surface(surface)
        if not suite.worker:
            suite._start_once()
            suite.ledger = Ledger(config.rootpath)
        return suite

    @staticmethod
    def _stream() -> Stream:
        from conformance.run.engine import Stream

        return Stream()

    def _seed(self) -> int:
        from conformance.run.generate import new_seed

        if self.worker:
            seed: int = self.config.workerinput[SEED]  # type: ignore[attr-defined]
            return seed
        if self.settings.run.seed is not None:
            return self.settings.run.seed
        fixed = self.settings.run.profile_settings.fixed_seed
        return fixed if fixed is not None else new_seed()

    def _start_once(self) -> None:
        """Start the oracle and the candidate, keeping what their handshakes say; kept open for the items unless
        pytest-xdist's workers run them."""
        from conformance.connection.base import ConnectError
        from conformance.errors import UsageError
        from conformance.report.model import Party
        from conformance.run.certification import connect_oracle

        try:
            oracle = connect_oracle(self.settings.run.oracle, cache=self.settings.run.oracle_cache)
        except UsageError as e:
            raise _usage(e, "--conformance-oracle") from None
        try:
            candidate = self._connect()
        except ConnectError as e:
            oracle.close()
            raise _usage(e, "--conformance-candidate") from None
        self._oracle, self._candidate = oracle, candidate
        self.parties = (Party(spec=oracle.spec, implementation=oracle.implementation),
                        Party(spec=self.settings.run.candidate.text, implementation=candidate.implementation))
        if self.config.pluginmanager.hasplugin("dsession"):  # a controller: its workers start their own
            self.close()

    def _connect(self) -> Breaker:
        from conformance.connection.breaker import Breaker
        from conformance.connection.connectors import connect

        s = self.settings.run
        return Breaker(connect(s.candidate, timeout=s.timeout, timeout_multiplier=s.timeout_multiplier,
                               validate=s.validate_protocol), s.broken_after)

    # -- what items share -------------------------------------------------------------------

    def candidate(self) -> Breaker:
        """The candidate, started on first use; one that does not start (in a worker) is recorded, as certify
        records it, and every item then fails as ``broken``."""
        from conformance.connection.base import StartFailure
        from conformance.connection.breaker import Breaker
        from conformance.report.model import CandidateLine

        if self._candidate is None:
            try:
                self._candidate = self._connect()
            except StartFailure as e:
                self._candidate = Breaker.never_started(self.settings.run.candidate,
                                                        f"{e.reply.kind}: {e.reply.detail}")
                self._candidate_failed(CandidateLine(stage="start", outcome=e.reply.kind, detail=e.reply.detail,
                                                     protocol_error=e.reply.error))
        return self._candidate

    def oracle(self) -> Oracle:
        from conformance.run.certification import connect_oracle

        if self._oracle is None:
            self._oracle = connect_oracle(self.settings.run.oracle, cache=self.settings.run.oracle_cache)
        return self._oracle

    def database(self) -> ExampleDatabase | None:
        if self._database is None and self.settings.run.example_database is not None:
            from conformance.run.examples import open_database  # imports Hypothesis

            self._database = open_database(self.settings.run.example_database)
        return self._database

    def engine(self, *, generating: bool = False) -> Engine:
        """The engine on this process's candidate and oracle (each started on first use), the expectation file
        applied to every line it makes; its events go to this process's stream, where a running item listens."""
        from conformance.run.engine import Engine
        from conformance.run.stored_inputs import InputStore

        run = self.settings.run
        recurs = run.seed is not None or run.profile_settings.fixed_seed is not None
        return Engine(self.candidate(), self.oracle(), self.stream, policy=run.policy,
                      expectations=self.expectations, database=self.database() if generating else None,
                      observations=run.observations, stored_inputs=InputStore() if run.input_cache and recurs else None)

    def _candidate_failed(self, line: CandidateLine) -> None:
        """The candidate failed to start or to stop: an event of this process's run as it happens, and a line kept
        for the report (a worker sends it to the process that writes the report)."""
        from conformance.run.events import CandidateFailed

        self.candidate_lines.append(line)
        self.stream.emit(CandidateFailed(line))

    def close(self) -> None:
        """Stop both sides; the candidate failing to stop is recorded, as certify records it."""
        from conformance.report.model import CandidateLine

        candidate, oracle, self._candidate, self._oracle = self._candidate, self._oracle, None, None
        if candidate is not None:
            self.batch_fallbacks += len(candidate.batch_fallbacks)
            if (problem := candidate.close()) is not None:
                self._candidate_failed(CandidateLine(stage="stop", outcome=problem.kind, detail=problem.detail,
                                                     protocol_error=problem.error))
        if oracle is not None:
            from conformance.connection.cached import answered_from_cache, answered_from_recordings

            self.cached_answers += answered_from_cache(oracle.connection)
            self.recorded_answers += answered_from_recordings(oracle.connection)
            oracle.close()

    # -- hooks ------------------------------------------------------------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.ledger is not None:
            self.ledger.add(report)

    @pytest.hookimpl(tryfirst=True)  # before xdist sends a worker's output
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.close()
        if self.worker:
            self.config.workeroutput[WORKER_OUTPUT] = self._output()  # type: ignore[attr-defined]
            return
        assert self.ledger is not None and self.parties is not None
        self.ledger.add_output(self._output())
        finished = exitstatus != pytest.ExitCode.INTERRUPTED and not (session.shouldstop or session.shouldfail)
        self.stale = self.ledger.stale(self.expectations) if self.expectations is not None else []
        self.expired = self.ledger.expired(self.expectations) if self.expectations is not None else []
        if self.writes_report:
            self.ledger.write(self.settings, self.seed, self.parties, self.stale, self.expired, finished,
                              ["pytest", *self.config.invocation_params.args])
        if self.stale and session.exitstatus == pytest.ExitCode.OK:  # as certify: an out-of-date entry fails the run
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        self.warnings = self.ledger.warnings()
        if self.warnings and self.settings.run.strict_warnings and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # as certify --strict-warnings

    @property
    def writes_report(self) -> bool:
        """Whether this process writes the report: asked for, not a worker, and items run (not --collect-only)."""
        return self.settings.report is not None and self.ledger is not None and not self.config.option.collectonly

    def _output(self) -> dict[str, Any]:
        from conformance.report.writer import dumps

        return {"candidate": [dumps(line) for line in self.candidate_lines], "batch_fallbacks": self.batch_fallbacks,
                "cached_answers": self.cached_answers, "recorded_answers": self.recorded_answers}

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.stale and self.expectations is not None:
            terminalreporter.write_line(f"harbor-conformance: {len(self.stale)} stale expectation(s) in "
                                        f"{self.expectations.path}, naming nothing this run found: "
                                        f"{', '.join(self.stale)}", red=True)
        if self.expired and self.expectations is not None:
            terminalreporter.write_line(f"harbor-conformance: {len(self.expired)} expired expectation(s) in "
                                        f"{self.expectations.path}, their divergences counted as new: "
                                        f"{', '.join(self.expired)}", red=True)
        if self.warnings:
            from conformance.report.model import warning_names

            strict = "; --conformance-strict-warnings fails the run" if self.settings.run.strict_warnings else ""
            terminalreporter.write_line(f"harbor-conformance: warnings {', '.join(warning_names(self.warnings))}: "
                                        f"the run is no evidence of conformance (docs/warnings.md){strict}",
                                        yellow=True)
        for warning in self.warnings:
            terminalreporter.write_line(f"  {warning.text()} — {warning.name.hint}", yellow=True)
        if self.writes_report:
            terminalreporter.write_line(f"harbor-conformance: report written to {self.settings.report}")

    def pytest_unconfigure(self) -> None:
        self.close()

    # pytest-xdist's hooks: optional, so a pytest without it accepts the plugin.

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[SEED] = self.seed

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        output = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
        if self.ledger is not None and output is not None:
            self.ledger.add_output(output)
