"""Cases as pytest items: ``pytest cases --candidate SPEC [-n auto]``.

Without ``--candidate`` the plugin stays out of the way. With it, every case
file under the given paths becomes one item per case, run through the same
:func:`conformance.run.runner.run_case` as ``conformance certify``. Each
pytest-xdist worker opens its own oracle and candidate connections.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance import ORACLE_RELEASE

# The plugin is loaded by every pytest run where the suite is installed: the harness is imported only by a
# run that collects cases.
if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from conformance.connection.breaker import Breaker
    from conformance.corpus.cases import LoadedCase
    from conformance.report.model import CaseLine
    from conformance.run.runner import Oracle


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance")
    group.addoption("--candidate", default=None, help="run the YAML cases against this candidate spec")
    group.addoption("--oracle", default=f"harbor=={ORACLE_RELEASE}", help="harbor==VERSION, or 'recorded'")
    group.addoption("--candidate-timeout", type=float, default=30.0, help="seconds per request")
    group.addoption("--candidate-timeout-multiplier", type=float, default=1.0,
                    help="scale the candidate's request, start and stop timeouts")
    group.addoption("--validate-protocol", action="store_true", default=False,
                    help="check every candidate message against the published JSON Schemas")


class _Connections:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._candidate: Breaker | None = None
        self._oracle: Oracle | None = None

    def candidate(self) -> Breaker:
        from conformance.connection.breaker import Breaker
        from conformance.connection.connectors import connect

        if self._candidate is None:
            option = self.config.getoption
            # A candidate that keeps crashing fails the remaining items at once (outcome "broken").
            self._candidate = Breaker(connect(option("candidate"), timeout=option("candidate_timeout"),
                                              timeout_multiplier=option("candidate_timeout_multiplier"),
                                              validate=option("validate_protocol")))
        return self._candidate

    def oracle(self) -> Oracle:
        from conformance.connection.connectors import connect
        from conformance.run.runner import Oracle

        if self._oracle is None:
            spec = self.config.getoption("oracle")
            self._oracle = Oracle(None if spec == "recorded" else connect(spec))
        return self._oracle

    def close(self) -> None:
        if self._candidate is not None:
            self._candidate.close()
        if self._oracle is not None:
            self._oracle.close()


_KEY = pytest.StashKey[_Connections]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance_tag(name): a tag of the YAML case")
    if config.getoption("candidate"):
        config.stash[_KEY] = _Connections(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _KEY in config.stash:
        config.stash[_KEY].close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaseFile | None:
    if not parent.config.getoption("candidate"):
        return None
    from conformance.core import surfaces

    if file_path.suffix == ".yaml" and file_path.parent.name in surfaces.SURFACES:
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    def collect(self) -> Iterator[CaseItem]:
        from conformance.corpus import cases as case_corpus

        loaded, errors = case_corpus.load_file(self.path)
        if errors:
            raise case_corpus.CorpusError(errors)
        for item in loaded:
            yield CaseItem.from_parent(self, name=item.id, loaded=item)


class CaseItem(pytest.Item):
    def __init__(self, *, loaded: LoadedCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded
        for tag in loaded.case.tags:
            self.add_marker(pytest.mark.conformance_tag(tag))
        self.record: CaseLine | None = None

    def runtest(self) -> None:
        from conformance.core import scope
        from conformance.core.outcomes import Outcome
        from conformance.run.runner import run_case

        connections = self.config.stash[_KEY]
        oracle = connections.oracle()
        version = oracle.implementation.version if oracle.connection else None
        if not self.loaded.case.applies_to(version):
            pytest.skip(f"{self.loaded.id} applies to harbor {self.loaded.case.harbor}, the oracle is {version}")
        candidate = connections.candidate()
        claimed = candidate.implementation.scope if candidate.implementation is not None else None
        if not scope.claims(claimed, self.loaded.case.surface, self.loaded.case.input):
            pytest.skip(f"{self.loaded.id} is outside what {candidate.spec} claims: {claimed}")
        record = self.record = run_case(self.loaded, candidate, oracle)
        if record.outcome is not Outcome.PASS or record.stale:
            raise CaseFailure(record)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: TracebackStyle | None = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, CaseFailure):
            return excinfo.value.describe()
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.loaded.line - 1, self.loaded.id


class CaseFailure(Exception):
    def __init__(self, record: CaseLine) -> None:
        super().__init__(record.id)
        self.record = record

    def describe(self) -> str:
        r = self.record
        lines = [f"{r.id}: {r.outcome}" + (f" ({r.protocol_error})" if r.protocol_error else "")]
        for m in r.mismatches:
            lines.append(f"  {m.describe()}")
        for m in r.recording_mismatches:
            lines.append(f"  stale recording, {m.describe('recorded', 'oracle')}")
        if r.detail:
            lines.append("  " + r.detail.strip())
        return "\n".join(lines)
