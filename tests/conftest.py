from __future__ import annotations

import pytest

from conformance import cases
from conformance.connect import connect
from conformance.runner import Oracle

ORACLE_SPEC = "harbor==0.13.1"


@pytest.fixture(scope="session")
def corpus():
    return cases.load_corpus(cases.default_root())


@pytest.fixture(scope="session")
def live_oracle():
    """harbor 0.13.1 itself; its virtualenv is created on first use."""
    connection = connect(ORACLE_SPEC)
    yield Oracle(connection)
    connection.close()
