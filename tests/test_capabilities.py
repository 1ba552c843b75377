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
from conformance.connection.in_process import InProcess
from conformance.connection.pool import Pool
from conformance.connection.protocol import Implementation
from conformance.connection.replies import Reply
from conformance.connection.spec import HARBOR_KIND, Spec, harbor_spec
from conformance.core import surfaces
from conformance.core.outcomes import Outcome, ReplyKind
from conformance.kit import wire
from conformance.kit.candidate import Candidate
from conformance.oracle import answers
from conformance.reference import candidate as reference_candidate
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


def _in_process(target: Any) -> InProcess:
    return InProcess(Spec("x", "module", "x"), target)


def test_an_in_process_candidate_is_asked_in_the_callers_thread_one_request_at_a_time():
    plain = _in_process(Candidate("plain", "1"))
    assert plain.capabilities == ONE_AT_A_TIME
    assert plain.members == () and plain.exit_code is None
    for declared in (0, -2, True, 2.5, "2", None):  # anything but a whole number above 1: as if never said
        candidate = Candidate("odd", "1")
        candidate.concurrency = declared  # type: ignore[assignment]
        assert _in_process(candidate).capabilities == ONE_AT_A_TIME


def test_a_concurrent_in_process_candidate_answers_whole_jobs_at_once_from_threads():
    """Declared concurrency 2: two requests run_each asks are in their handlers together (a barrier of two
    passes); one at a time, the first would wait at the barrier alone and raise."""
    together = [threading.Barrier(2, timeout=5)]
    threads: set[int] = set()

    def handler(value: Any) -> Any:
        threads.add(threading.get_ident())
        together[0].wait()
        return value

    def answering(candidate: Candidate) -> InProcess:
        candidate.surface("job.result")(handler)
        return _in_process(candidate)

    items = [(i, "job.result", wire.encode(i)) for i in range(2)]
    wide = answering(Candidate("wide", "1", concurrency=2))
    assert wide.capabilities == Capabilities(width=2, own_lane=False)
    assert [reply.kind for reply in wide.run_each(items)] == [ReplyKind.OUTPUT] * 2
    assert threading.get_ident() not in threads and len(threads) == 2
    narrow = answering(Candidate("narrow", "1"))
    together[0] = threading.Barrier(2, timeout=0.2)  # alone at it, the first request waits this long
    assert [reply.kind for reply in narrow.run_each(items)] == [ReplyKind.RAISED] * 2  # BrokenBarrierError
    with connect("reference") as reference:  # the reference declares it: its whole jobs share no process state
        assert reference.capabilities.width == reference_candidate.concurrency >= 1


def test_a_concurrent_in_process_candidates_threads_are_kept_from_call_to_call_and_end_at_close():
    """Its threads are started once, not for every run of whole jobs, and none is left after ``close``."""
    seen: set[int] = set()

    def handler(value: Any) -> Any:
        seen.add(threading.get_ident())
        return value

    candidate = Candidate("wide", "1", concurrency=2)
    candidate.surface("job.result")(handler)
    connection = _in_process(candidate)
    items = [(i, "job.result", wire.encode(i)) for i in range(4)]
    for _ in range(5):
        assert [reply.kind for reply in connection.run_each(items)] == [ReplyKind.OUTPUT] * 4
    assert 1 <= len(seen) <= 2  # the same two threads answered all twenty
    assert {t.ident for t in threading.enumerate()} >= seen
    connection.close()
    assert not seen & {t.ident for t in threading.enumerate()}


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


def test_a_breaker_has_its_connections_lane_width_and_exit():
    with Breaker(_in_process(Candidate("plain", "1"))) as in_process:
        assert in_process.capabilities == ONE_AT_A_TIME and in_process.exit_code is None
    wide = Fake(Spec("x", "exec", "x"), Capabilities(width=4, own_lane=True), exit_code=3)
    breaker = Breaker(wide)
    assert breaker.capabilities == Capabilities(width=4, own_lane=True)
    assert breaker.exit_code == 3 and breaker.members == ()
    never = Breaker.never_started(parse("exec:./gone"), "crash")
    assert never.capabilities == ONE_AT_A_TIME and never.exit_code is None


class Crashing(Fake):
    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        return Reply(ReplyKind.CRASH, detail="gone")


def test_a_breaker_counts_whole_jobs_asked_at_once_in_their_order():
    """Three crashes asked at once of a breaker of limit 2: all three ran, and are answered as they came; the
    breaker is tripped by the second, so what is asked next is not run."""
    crashing = Crashing(Spec("x", "exec", "x"), Capabilities(width=3, own_lane=True))
    breaker = Breaker(crashing, limit=2)
    items = [(i, "job.result", None) for i in range(3)]
    assert [reply.kind for reply in breaker.run_each(items)] == [ReplyKind.CRASH] * 3
    assert crashing.each == [3] and "2 consecutive" in breaker.broken
    assert [reply.kind for reply in breaker.run_each(items)] == [ReplyKind.BROKEN] * 3
    assert crashing.each == [3]


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
    runner.ask(narrow, surface.name, inputs, batch=False)
    runner.ask(wide, surface.name, inputs, batch=False)
    assert narrow.each == [] and wide.each == [3]


class Idle(Fake):
    """An oracle whose answers are all kept ones: it costs the machine nothing while the candidate works."""

    @property
    def working(self) -> bool:
        return False


def test_whole_job_inputs_come_as_wide_as_the_wider_side():
    """A one-process oracle and a candidate answering three at once: whole jobs in runs of three, each asked of
    the candidate at once (the oracle answering from kept answers); cheap inputs as the candidate takes them
    (this one batches not: one by one)."""
    narrow = Idle(harbor_spec("0.13.1"))
    wide = Fake(Spec("x", "module", "x"), Capabilities(width=3))
    jobs = [runner.Input(str(i), "job.result", {"id": str(i)}) for i in range(7)]
    assert [len(chunk) for chunk in runner._chunks(jobs, wide, runner.Oracle(narrow))] == [3, 3, 1]
    assert [len(chunk) for chunk in runner._chunks(jobs, narrow, runner.Oracle(narrow))] == [1] * 7
    cheap = [runner.Input(str(i), "reward.parse", {"reward_txt": b"1"}) for i in range(5)]
    assert [len(chunk) for chunk in runner._chunks(cheap, wide, runner.Oracle(narrow))] == [1] * 5  # no batch
    records = list(runner.run_inputs(jobs[:3], wide, runner.Oracle(narrow)))
    assert [record.outcome for record in records] == [Outcome.PASS] * 3
    assert wide.each == [3] and narrow.each == []


def test_a_candidate_is_asked_only_as_wide_as_the_cores_a_working_oracle_leaves(monkeypatch):
    """A harbor job is one thread: beside an oracle process at work, a candidate answering three jobs at once on
    two cores would only take turns with it. Beside an oracle answering from kept answers, it is asked three at
    once; on eight cores, three beside a working one too."""
    wide = Fake(Spec("x", "module", "x"), Capabilities(width=3))
    working, idle = Fake(harbor_spec("0.13.1"), Capabilities(own_lane=True)), Idle(harbor_spec("0.13.1"))
    monkeypatch.setattr(runner, "cores", lambda: 2)
    assert runner.candidate_width(wide, working) == 1
    assert runner.candidate_width(wide, idle) == 3 and runner.candidate_width(wide, None) == 3
    assert runner.candidate_width(wide, Pool(working, lambda: working, 2)) == 1
    jobs = [runner.Input(str(i), "job.result", {"id": str(i)}) for i in range(3)]
    assert [record.outcome for record in runner.run_inputs(jobs, wide, runner.Oracle(working))] == [Outcome.PASS] * 3
    assert wide.each == []  # one at a time
    list(runner.run_inputs(jobs, wide, runner.Oracle(idle)))
    assert wide.each == [3]
    monkeypatch.setattr(runner, "cores", lambda: 8)
    assert runner.candidate_width(wide, working) == 3
    assert runner.candidate_width(Fake(Spec("x", "module", "x")), idle) == 1  # never wider than it says


def test_asked_at_most_as_wide_as_the_runner_allows():
    wide = Fake(Spec("x", "module", "x"), Capabilities(width=3))
    assert len(runner.ask(wide, "job.result", [{"id": str(i)} for i in range(5)], batch=False, width=2)) == 5
    assert wide.each == [2, 2, 1]
    runner.ask(wide, "job.result", [{"id": str(i)} for i in range(4)], batch=False)
    assert wide.each == [2, 2, 1, 3, 1]


def test_a_cached_oracle_works_on_this_machine_only_once_it_has_started_harbor(tmp_path):
    identity = answers.Identity("0.13.1", "lock-a", "3.12.1", "adapter-a")
    store = answers.AnswerStore(tmp_path / "answers.db")
    inner = Fake(harbor_spec("0.13.1"), Capabilities(own_lane=True))
    store.put_oracle(identity, inner.implementation.model_dump_json())
    oracle = cached.CachedOracle(harbor_spec("0.13.1"), identity, store, lambda: inner)
    assert not oracle.started and not oracle.working
    assert not Pool(oracle, lambda: inner, 2).working and not Breaker(oracle).working
    assert oracle.run(1, "pass_at_k", wire.encode({"trials": []})).kind is ReplyKind.OUTPUT  # a miss: harbor starts
    assert oracle.working and Pool(oracle, lambda: inner, 2).working and Breaker(oracle).working


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
