from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from conformance.connection.connectors import connect
from conformance.corpus import cases
from conformance.run.runner import Oracle

ORACLE_SPEC = "harbor==0.13.1"

# Deliberately broken case files: read by tests/test_broken_corpus.py, never collected as cases.
collect_ignore = ["broken_cases"]


@pytest.fixture(scope="session")
def corpus():
    return cases.load_corpus(cases.default_root())


class _AnswersOnce:
    """The live oracle, asked each distinct input once per test process.

    harbor's answers are deterministic on every surface (job.result replaces
    its random trial names), and the many candidates the tests certify replay
    the same corpus: only the first asking of an input reaches harbor. Only
    results (outputs and exceptions) are remembered, and each caller gets its
    own copy.
    """

    def __init__(self, connection: Any) -> None:
        self._connection = connection
        self._answers: dict[tuple[str, str], Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)

    def run(self, seq: int, surface: str, input_wire: Any) -> Any:
        key = (surface, json.dumps(input_wire))
        if key not in self._answers:
            reply = self._connection.run(seq, surface, input_wire)
            if reply.kind not in ("output", "raised"):
                return reply
            self._answers[key] = reply
        return copy.deepcopy(self._answers[key])


@pytest.fixture(scope="session")
def live_oracle():
    """harbor 0.13.1 itself; its virtualenv is created on first use."""
    connection = connect(ORACLE_SPEC)
    yield Oracle(_AnswersOnce(connection))
    connection.close()


@pytest.fixture(scope="module")
def conn():
    """A connection of its own to harbor 0.13.1, for tests that speak the protocol to it directly."""
    connection = connect(ORACLE_SPEC)
    yield connection
    connection.close()
