from __future__ import annotations

import copy
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from conformance.connection.connectors import connect
from conformance.corpus import cases
from conformance.oracle import answers, environments
from conformance.run import stored_inputs
from conformance.run.runner import Oracle
from tests import budget  # noqa: F401  (registers the thorough Hypothesis profile before --hypothesis-profile is read)

ORACLE_VERSION = "0.13.1"
ORACLE_SPEC = f"harbor=={ORACLE_VERSION}"

# Deliberately broken case files: read by tests/test_broken_corpus.py, never collected as cases.
collect_ignore = ["broken_cases"]


# -- compiled modules -----------------------------------------------------------------------
#
# Where PYTHONDONTWRITEBYTECODE is set (some CI images set it), every process the tests start (exec candidates,
# the command, the CI kit's scripts) compiled the package again, and every run compiled the test modules: the
# tests keep compiled files in a folder of their own under the temporary directory instead, never in the
# checkout. Set here, in the process that starts pytest-xdist's workers, so that they and every program a test
# starts inherit it. A folder another user could have made or written to is not used.


def _private_pycache() -> Path | None:
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return None
    folder = Path(tempfile.gettempdir()) / f"harbor-conformance-pycache-{getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        found = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != getuid() or found.st_mode & 0o077:
        return None
    return folder


if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
    _pycache = _private_pycache()
    if _pycache is not None:
        del os.environ["PYTHONDONTWRITEBYTECODE"]
        os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = str(_pycache)
        sys.dont_write_bytecode = False


# -- the two tiers ------------------------------------------------------------------------
#
# A test that needs an oracle environment (any harbor release's virtualenv, plain or
# instrumented) gets it through one of these fixtures, directly or through another
# fixture, and is marked `oracle` for it; `pytest -m "not oracle"` runs the rest, which
# never start harbor. An unmarked test that tries to is stopped with a message saying so.

ORACLE_FIXTURES = frozenset({"harbor_env", "coverage_env", "harbor_release", "live_oracle", "conn"})
NEEDS_THE_MARKER = "needs the oracle marker (use a fixture that starts the oracle)"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if ORACLE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.oracle)
        if getattr(getattr(item, "function", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.property)
    _leave_out_slow(config, items)


# -- slow end-to-end tests ------------------------------------------------------------------
#
# Tests marked `slow` run whole programs for seconds to minutes. A run leaves them out unless its -m
# expression names them (`-m slow` runs only them, `-m "slow or not slow"` everything), or it names
# test ids: a node id given on the command line always runs.


def _leaves_out_slow(config: pytest.Config) -> bool:
    return "slow" not in (config.option.markexpr or "") and not any("::" in arg for arg in config.args)


def _leave_out_slow(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _leaves_out_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def pytest_report_header(config: pytest.Config) -> str | None:
    if _leaves_out_slow(config):
        return "slow end-to-end tests are left out (deselected): run them with -m slow"
    return None


class _Guard:
    """Keeps an unmarked test from creating or using an oracle environment.

    In this process ``environments.ensure``, which every oracle (plain,
    instrumented, or another release's) goes through, fails the test. For the
    programs the test runs, HARBOR_CONFORMANCE_CACHE points below a file, so no
    environment can be found or made there and the path itself says why (a
    program started without the test's environment is not covered: give it
    ``os.environ``). Installed before the test's fixtures are set up, whatever
    their scope, and removed after they are torn down.
    """

    folder: Path | None = None

    def __init__(self, item: pytest.Item) -> None:
        self.name = item.nodeid
        self.attempts: list[str] = []
        self.patch = pytest.MonkeyPatch()
        if _Guard.folder is None:
            _Guard.folder = Path(tempfile.mkdtemp(prefix="no-oracle-"))
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", item.name)[:100]
        self.blocker = _Guard.folder / f"{slug}-needs-the-oracle-marker-use-a-fixture-that-starts-the-oracle"
        self.blocker.write_text(f"{self.name} {NEEDS_THE_MARKER}\n")

    def message(self, version: str) -> str:
        return f"{self.name} asked for the harbor {version} oracle environment: it {NEEDS_THE_MARKER}"

    def refuse(self, harbor_version: str, *args: Any, **kwargs: Any) -> environments.OracleEnv:
        self.attempts.append(harbor_version)
        pytest.fail(self.message(harbor_version), pytrace=False)

    def install(self) -> _Guard:
        self.patch.setattr(environments, "ensure", self.refuse)
        self.patch.setenv("HARBOR_CONFORMANCE_CACHE", str(self.blocker))
        environments.script_environment.cache_clear()  # a copy of the process environment, made on first use
        return self

    def undo(self) -> None:
        self.patch.undo()
        environments.script_environment.cache_clear()


_GUARD = pytest.StashKey[_Guard]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    if not item.get_closest_marker("oracle"):
        item.stash[_GUARD] = _Guard(item).install()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield
    guard = item.stash.get(_GUARD, None)
    if guard is not None and guard.attempts:  # failed when asked, unless the test swallowed it: say it again
        pytest.fail(guard.message(", ".join(guard.attempts)), pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    try:
        return (yield)
    finally:
        guard = item.stash.get(_GUARD, None)
        if guard is not None:
            guard.undo()


def pytest_sessionfinish(session):
    if _Guard.folder is not None:
        shutil.rmtree(_Guard.folder, ignore_errors=True)


# -- the oracle answer cache ---------------------------------------------------------------
#
# The test run's oracle answers, and its stored generated inputs, go to folders of its own, shared by its
# pytest-xdist workers (started after this, they inherit them), never to the user's cache: no test reads what
# another run stored.

_CACHES = pytest.StashKey[list[str]]()


def pytest_configure(config):
    if "PYTEST_XDIST_WORKER" not in os.environ:
        config.stash[_CACHES] = []
        for variable, prefix in ((answers.FOLDER_ENV, "oracle-answers-"), (stored_inputs.FOLDER_ENV, "inputs-")):
            folder = tempfile.mkdtemp(prefix=prefix)
            config.stash[_CACHES].append(folder)
            os.environ[variable] = folder


def pytest_unconfigure(config):
    for folder in config.stash.get(_CACHES, []):
        shutil.rmtree(folder, ignore_errors=True)


# -- oracle environments ------------------------------------------------------------------


@pytest.fixture(scope="session")
def harbor_env() -> environments.OracleEnv:
    """harbor 0.13.1's virtualenv, the oracle's (created on first use)."""
    return environments.ensure(ORACLE_VERSION)


@pytest.fixture(scope="session")
def coverage_env(harbor_env) -> environments.OracleEnv:
    """The instrumented virtualenv: harbor 0.13.1 with coverage.py (created on first use)."""
    return environments.ensure(ORACLE_VERSION, coverage=True)


@pytest.fixture(scope="session")
def harbor_release(harbor_env):
    """``harbor_release(VERSION)``: that harbor release's virtualenv (created on first use), beside 0.13.1's."""
    found: dict[str, environments.OracleEnv] = {ORACLE_VERSION: harbor_env}

    def get(version: str) -> environments.OracleEnv:
        if version not in found:
            found[version] = environments.ensure(version)
        return found[version]

    return get


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
def live_oracle(harbor_env):
    """harbor 0.13.1 itself; its virtualenv is created on first use."""
    connection = connect(ORACLE_SPEC)
    yield Oracle(_AnswersOnce(connection))
    connection.close()


@pytest.fixture(scope="module")
def conn(harbor_env):
    """A connection of its own to harbor 0.13.1, for tests that speak the protocol to it directly."""
    connection = connect(ORACLE_SPEC)
    yield connection
    connection.close()
