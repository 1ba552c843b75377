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
from conformance.connection.base import Connection
from conformance.connection.connectors import connect
from conformance.connection.replies import Reply
from conformance.core.outcomes import LOST
from conformance.oracle.coverage import CoverageError, CoverageResult, analyse


class _Watched:
    """The oracle connection, counting replies after which its process was gone (and its coverage with it)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self.lost = 0

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        reply = self._connection.run(seq, surface, input_wire)
        if reply.kind in LOST:
            self.lost += 1
        return reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


def measure(run: Callable[[Connection], None], *, harbor_version: str = ORACLE_RELEASE,
            log: Callable[[str], object] = lambda message: None) -> CoverageResult:
    """Connect an instrumented harbor oracle, let ``run`` send it requests, close it, analyse."""
    with tempfile.TemporaryDirectory(prefix="conformance-coverage-") as tmp:
        data_file = Path(tmp) / "coverage.data"
        connection = connect(f"harbor=={harbor_version}", coverage_data=data_file, log=log)
        watched = _Watched(connection)
        try:
            run(watched)
        finally:
            connection.close()  # `stop`: the adapter returns, coverage.py saves at exit
        process = getattr(connection, "process", None)
        if process is not None and process.popen.returncode != 0:
            watched.lost += 1
        if watched.lost:
            log(f"{watched.lost} oracle process(es) ended abnormally: the coverage they gathered is missing")
        if not data_file.exists():
            raise CoverageError("the instrumented oracle saved no coverage data (it did not exit normally)")
        return analyse(data_file, harbor_version=harbor_version, lost_processes=watched.lost, log=log)
