"""What each kind of connection declares it can do, and the run layer going by it (not by probing or kind names).

``Capabilities.own_lane``: asked from a thread of its own (a process). ``Capabilities.width``: whole-job inputs
answered at once (a pool). ``members``: the connections it is made of. ``exit_code``: how its last process ended.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from conformance.connection import cached
from conformance.connection.base import BaseConnection, Capabilities, Settings
from conformance.connection.breaker import Breaker
from conformance.connection.connectors import connect, connect_with, parse
from conformance.connection.pool import Pool
from conformance.connection.protocol import Implementation
from conformance.connection.replies import Reply
from conformance.connection.spec import HARBOR_KIND, Spec, harbor_spec
from conformance.core import surfaces
from conformance.core.outcomes import ReplyKind
from conformance.kit import wire
from conformance.oracle import answers
from conformance.run import coverage as coverage_run
from conformance.run import lanes, runner

EXEC_REFERENCE = f"exec:{sys.executable} -m conformance.reference"
ONE_AT_A_TIME = Capabilities(width=1, own_lane=False)


class Fake(BaseConnection):
    """A connection answering every request with 0.5, recording which thread asked and how."""

    def __init__(self, spec: Spec, capabilities: Capabilities = ONE_AT_A_TIME, exit_code: int | None = None) -> None:
        self.spec = spec
        self._capabilities = capabilities
        self._exit_code = exit_code
        self.broken = ""
        self.batch_fallbacks: list[str] = []
        self.implementation = Implementation(name="fake", version="1", language="python",
                                             surfaces=sorted(surfaces.SURFACES))
        self.threads: list[int] = []
        self.each: list[int] = []

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    @property
    def exit_code(self) -> int | None:
        return self._exit_code

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        self.threads.append(threading.get_ident())
        return Reply(ReplyKind.OUTPUT, 0.5)

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        return [None] * len(items)

    def run_each(self, items: list[tuple[int, str, Any]]) -> list[Reply]:
        self.each.append(len(items))
        return super().run_each(items)

    def close(self) -> Reply | None:
        return None


# -- each kind -----------------------------------------------------------------------


def test_an_in_process_candidate_is_asked_in_the_callers_thread_one_request_at_a_time():
    with connect("reference") as connection:
        assert connection.capabilities == ONE_AT_A_TIME
        assert connection.members == () and connection.exit_code is None


def test_a_process_has_a_lane_of_its_own_and_says_how_it_ended():
    connection = connect(EXEC_REFERENCE)
    with connection:
        assert connection.capabilities == Capabilities(width=1, own_lane=True)
        assert connection.members == ()
        assert connection.exit_code is None  # running
    assert connection.exit_code == 0  # stopped after `stop`, as asked


def test_a_process_speaks_the_codec_its_settings_name():
    with connect_with(parse(EXEC_REFERENCE), Settings(codec=wire.STDLIB)) as connection:
        assert connection.codec is wire.STDLIB
        assert connection.run(1, "pass_at_k", wire.encode({"n": 2})).kind is ReplyKind.RAISED  # a reply, read


def test_a_breaker_has_its_connections_lane_and_exit_but_asks_one_at_a_time():
    with Breaker(connect("reference")) as in_process:
        assert in_process.capabilities == ONE_AT_A_TIME and in_process.exit_code is None
    wide = Fake(Spec("x", "exec", "x"), Capabilities(width=4, own_lane=True), exit_code=3)
    breaker = Breaker(wide)
    assert breaker.capabilities == Capabilities(width=1, own_lane=True)
    assert breaker.exit_code == 3 and breaker.members == ()
    never = Breaker.never_started(parse("exec:./gone"), "crash")
    assert never.capabilities == ONE_AT_A_TIME and never.exit_code is None


def test_a_pool_is_as_wide_as_it_may_grow_with_its_first_members_lane():
    first, second = Fake(harbor_spec("0.13.1"), Capabilities(own_lane=True)), Fake(harbor_spec("0.13.1"))
    pool = Pool(first, lambda: second, 3)
    assert pool.capabilities == Capabilities(width=3, own_lane=True)
    assert pool.members == (first,)
    pool.run_each([(i, "job.result", None) for i in range(2)])
    assert pool.members == (first, second)
    assert Pool(Fake(harbor_spec("0.13.1")), lambda: second, 2).capabilities == Capabilities(width=2)


def test_a_cached_oracle_has_a_lane_and_counts_its_hits_through_a_pools_members(tmp_path):
    identity = answers.Identity("0.13.1", "lock-a", "3.12.1", "adapter-a")

    def oracle() -> cached.CachedOracle:
        inner = Fake(harbor_spec("0.13.1"), Capabilities(own_lane=True), exit_code=None)
        return cached.CachedOracle(harbor_spec("0.13.1"), identity, answers.AnswerStore(tmp_path / "answers.db"),
                                   lambda: inner)

    first = oracle()
    assert first.capabilities == Capabilities(own_lane=True) and first.members == () and first.exit_code is None
    first.hits = 2
    pool = Pool(first, oracle, 2)
    assert cached.answered_from_cache(pool) == 2
    assert cached.answered_from_cache(first) == 2
    assert cached.answered_from_cache(None) == 0
    assert cached.answered_from_cache(Fake(harbor_spec("0.13.1"))) == 0
    pool.close()


def test_the_spec_of_a_harbor_release_is_made_not_parsed():
    assert harbor_spec("0.13.1") == parse("harbor==0.13.1") == Spec("harbor==0.13.1", HARBOR_KIND, "0.13.1")


# -- the run layer going by them -----------------------------------------------------


def test_lanes_give_a_thread_to_whichever_connection_declares_one_whatever_its_kind():
    here = threading.get_ident()
    laned = Fake(Spec("in-process-looking", "python", "m:a"), Capabilities(own_lane=True))
    unlaned = Fake(Spec("exec:looking", "exec", "x"))
    own = lanes.Lanes()
    try:
        own.submit(laned, laned.run, 1, "pass_at_k", None).result()
        own.submit(unlaned, unlaned.run, 1, "pass_at_k", None).result()
    finally:
        own.close()
    assert laned.threads != [here] and unlaned.threads == [here]


def test_the_runner_asks_whole_jobs_at_once_only_of_a_connection_as_wide():
    surface = surfaces.get("job.result")
    inputs = [{"id": str(i)} for i in range(3)]
    narrow, wide = Fake(harbor_spec("0.13.1")), Fake(harbor_spec("0.13.1"), Capabilities(width=3, own_lane=True))
    assert runner.Oracle(narrow).width(surface) == 1 and runner.Oracle(wide).width(surface) == 3
    runner._ask_oracle(narrow, surface.name, inputs, batch=False)
    runner._ask_oracle(wide, surface.name, inputs, batch=False)
    assert narrow.each == [] and wide.each == [3]


def test_a_surfaces_own_oracle_is_connected_with_the_oracles_settings(monkeypatch):
    made: list[tuple[Spec, Settings]] = []
    settings = Settings(timeout=7.0)
    monkeypatch.setattr(runner, "connect_with", lambda spec, given: made.append((spec, given)) or Fake(spec))
    own = dataclasses.replace(surfaces.get("pass_at_k"), oracle="reference")
    oracle = runner.Oracle(Fake(harbor_spec("0.13.1")), settings)
    assert oracle.for_surface(own) is oracle.for_surface(own)
    assert made == [(parse("reference"), settings)]


def test_coverage_counts_a_last_process_that_did_not_end_normally(monkeypatch, tmp_path):
    seen: dict[str, Any] = {}

    def fake_connect(spec: Spec, settings: Settings) -> Fake:
        assert spec == harbor_spec("0.13.1") and settings.coverage_data is not None
        Path(settings.coverage_data).write_text("")
        return Fake(spec, Capabilities(own_lane=True), exit_code=-9)

    def fake_analyse(data_file: Path, **kwargs: Any) -> str:
        seen.update(kwargs)
        return "analysed"

    monkeypatch.setattr(coverage_run, "connect_with", fake_connect)
    monkeypatch.setattr(coverage_run, "analyse", fake_analyse)

    def run(connection: Any) -> None:
        assert connection.capabilities == Capabilities(own_lane=True)
        assert connection.run(1, "pass_at_k", None).kind is ReplyKind.OUTPUT

    assert coverage_run.measure(run, harbor_version="0.13.1") == "analysed"
    assert seen["lost_processes"] == 1


@pytest.mark.parametrize("code, lost", [(0, 0), (None, 0)])
def test_coverage_counts_nothing_for_a_normal_end(monkeypatch, code, lost):
    seen: dict[str, Any] = {}

    def fake_connect(spec: Spec, settings: Settings) -> Fake:
        Path(settings.coverage_data).write_text("")
        return Fake(spec, exit_code=code)

    monkeypatch.setattr(coverage_run, "connect_with", fake_connect)
    monkeypatch.setattr(coverage_run, "analyse", lambda data_file, **kwargs: seen.update(kwargs))
    coverage_run.measure(lambda connection: None, harbor_version="0.13.1")
    assert seen["lost_processes"] == lost
