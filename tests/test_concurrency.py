"""The oracle and the candidate are asked at once, and whole-job inputs go to several oracle processes at once.

Each side here is ``overlap_candidate.py``: it answers an input only once the other process that should be
working on the same input (or group of inputs) has received its own request, and says whether that happened
within its wait. Asked one after the other, the first side would wait alone and answer ``together: false``: so a
true answer on both sides shows both had their request before either replied, whatever the machine's speed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance.connection.connectors import connect
from conformance.connection.pool import Pool
from conformance.core import surfaces
from conformance.core.outcomes import Outcome
from conformance.run.runner import Input, Oracle, run_input, run_inputs

FAKE = Path(__file__).with_name("overlap_candidate.py")
TOGETHER = {"dict": [["together", True]]}


def side(folder: Path, role: str, wanted: int) -> str:
    return f"exec:{sys.executable} {FAKE} {folder} {role} {wanted}"


@pytest.fixture
def markers(tmp_path):
    return tmp_path / "markers"


def test_one_whole_job_input_goes_to_oracle_and_candidate_at_once(markers):
    with Oracle(connect(side(markers, "oracle", 2))) as oracle, connect(side(markers, "candidate", 2)) as candidate:
        record = run_input("x", "job.result", {"id": "a", "group": "a"}, candidate, oracle)
    assert record.outcome is Outcome.PASS, record
    assert record.oracle.output == record.candidate.output == TOGETHER
    assert sorted(p.name for p in (markers / "a").iterdir()) == ["candidate-a", "oracle-a"]


def test_a_batch_goes_to_oracle_and_candidate_at_once(markers):
    inputs = [Input(f"x{i}", "reason.normalize", {"id": str(i), "group": str(i)}) for i in range(5)]
    with Oracle(connect(side(markers, "oracle", 2))) as oracle, connect(side(markers, "candidate", 2)) as candidate:
        assert candidate.implementation.batch and candidate.capabilities.own_lane
        records = list(run_inputs(inputs, candidate, oracle))
    assert [r.outcome for r in records] == [Outcome.PASS] * 5
    assert all(r.oracle.output == TOGETHER for r in records)


def test_whole_job_inputs_go_to_several_oracle_processes_at_once(markers, tmp_path):
    spec = side(markers, "oracle", 2)  # two oracle processes, each waiting for the other's request
    alone = side(tmp_path / "candidate", "candidate", 1)
    inputs = [Input(f"x{i}", "job.result", {"id": str(i), "group": f"pair-{i // 2}"}) for i in range(4)]
    pool = Pool(connect(spec), lambda: connect(spec), 2)
    with Oracle(pool) as oracle, connect(alone) as candidate:
        assert oracle.width(surfaces.get("job.result")) == 2
        records = list(run_inputs(inputs, candidate, oracle))
    assert [r.outcome for r in records] == [Outcome.PASS] * 4
    assert len(pool.members) == 1  # closed: the extra process is stopped with the pool
    assert sorted(p.name for p in (markers / "pair-0").iterdir()) == ["oracle-0", "oracle-1"]


def test_a_pool_answers_cheap_inputs_from_its_first_process_alone(markers):
    spec = side(markers, "oracle", 1)
    pool = Pool(connect(spec), lambda: pytest.fail("no other process is needed"), 3)
    inputs = [Input(f"x{i}", "reason.normalize", {"id": str(i), "group": str(i)}) for i in range(4)]
    with Oracle(pool) as oracle, connect(spec.replace(" oracle ", " candidate ")) as candidate:
        assert [r.outcome for r in run_inputs(inputs, candidate, oracle)] == [Outcome.PASS] * 4


def test_a_run_leaves_no_thread_behind(markers):
    import threading

    before = threading.active_count()
    inputs = [Input(f"x{i}", "job.result", {"id": str(i), "group": str(i)}) for i in range(3)]
    with Oracle(connect(side(markers, "oracle", 2))) as oracle, connect(side(markers, "candidate", 2)) as candidate:
        assert [r.outcome for r in run_inputs(inputs, candidate, oracle)] == [Outcome.PASS] * 3
        assert threading.active_count() == before


def _asked_in_batches(connection) -> list[int]:
    """The sizes of the batches ``connection`` is sent, as they are sent (it is asked from the caller's thread)."""
    sizes: list[int] = []
    run_batch = connection.run_batch

    def counted(items):
        sizes.append(len(items))
        return run_batch(items)

    connection.run_batch = counted
    return sizes


@pytest.mark.parametrize(("arriving", "batches"), [(True, [8, 16, 32, 44]), (False, [100])])
def test_inputs_drawn_as_they_are_asked_go_in_batches_that_start_small_and_double(arriving, batches):
    """A generator round's inputs arrive as they are drawn: a first batch of a whole batch size would wait for all
    of them to be drawn before either side is asked anything."""
    inputs = [Input(f"x{i}", "reason.normalize", {"value": f"Error {i}"}) for i in range(100)]
    with Oracle(connect("reference")) as oracle, connect("reference") as candidate:
        sent = _asked_in_batches(candidate)
        records = list(run_inputs(iter(inputs), candidate, oracle, arriving=arriving))
    assert [r.outcome for r in records] == [Outcome.PASS] * 100
    assert sent == batches


@pytest.mark.parametrize(("oracle_spec", "asked_before_the_first_record"), [
    (f"exec:{sys.executable} -m conformance.reference", 8 + 16),  # a process, on its lane: it answers meanwhile
    ("reference", 8),  # in this thread too: nothing would work meanwhile
])
def test_the_next_batch_is_asked_while_records_are_made_where_the_oracle_has_a_lane(
        oracle_spec, asked_before_the_first_record):
    inputs = [Input(f"x{i}", "reason.normalize", {"value": f"Error {i}"}) for i in range(40)]
    with Oracle(connect(oracle_spec)) as oracle, connect("reference") as candidate:
        sent = _asked_in_batches(candidate)  # an in-process candidate: asked here, in the order the runner asks
        records = run_inputs(iter(inputs), candidate, oracle, arriving=True)
        first = next(records)
        asked = sum(sent)
        rest = list(records)
    assert first.outcome is Outcome.PASS and [r.outcome for r in rest] == [Outcome.PASS] * 39
    assert asked == asked_before_the_first_record
