"""A run of the suite's inputs through an instrumented oracle: what of harbor's scoring code they reach.

The oracle runs under coverage.py (``conformance.connection.harbor`` starts
it so); :mod:`conformance.oracle.coverage` says which of harbor's functions
are scoring targets and reads what the run covered.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance import ORACLE_RELEASE
from conformance.connection.base import BaseConnection, Capabilities, Connection, Settings
from conformance.connection.connectors import connect_with
from conformance.connection.protocol import Implementation
from conformance.connection.replies import Reply
from conformance.connection.spec import Spec, harbor_spec
from conformance.core.outcomes import LOST
from conformance.oracle.coverage import CoverageError, CoverageResult, analyse


class _Watched(BaseConnection):
    """The oracle connection, counting replies after which its process was gone (and its coverage with it)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self.lost = 0

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(own_lane=self._connection.capabilities.own_lane)  # each request through run()

    @property
    def spec(self) -> Spec:
        return self._connection.spec

    @property
    def implementation(self) -> Implementation | None:
        return self._connection.implementation

    @property
    def broken(self) -> str:
        return self._connection.broken

    @property
    def batch_fallbacks(self) -> list[str]:
        return self._connection.batch_fallbacks

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        reply = self._connection.run(seq, surface, input_wire)
        if reply.kind in LOST:
            self.lost += 1
        return reply

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        return self._connection.run_batch(items)

    def close(self) -> Reply | None:
        return self._connection.close()


def measure(run: Callable[[Connection], None], *, harbor_version: str = ORACLE_RELEASE,
            log: Callable[[str], object] = lambda message: None) -> CoverageResult:
    """Connect an instrumented harbor oracle, let ``run`` send it requests, close it, analyse."""
    with tempfile.TemporaryDirectory(prefix="conformance-coverage-") as tmp:
        data_file = Path(tmp) / "coverage.data"
        connection = connect_with(harbor_spec(harbor_version), Settings(coverage_data=data_file, log=log))
        watched = _Watched(connection)
        try:
            run(watched)
        finally:
            connection.close()  # `stop`: the adapter returns, coverage.py saves at exit
        if connection.exit_code not in (None, 0):  # the last process did not end normally: its coverage is lost
            watched.lost += 1
        if watched.lost:
            log(f"{watched.lost} oracle process(es) ended abnormally: the coverage they gathered is missing")
        if not data_file.exists():
            raise CoverageError("the instrumented oracle saved no coverage data (it did not exit normally)")
        return analyse(data_file, harbor_version=harbor_version, lost_processes=watched.lost, log=log)
