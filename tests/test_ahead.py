"""Rounds drawn ahead (conformance.run.ahead): the same inputs, findings and counts as a live round, and no
thread, write or draw beyond what the round needed.

A round drawn ahead takes every input as passing while it draws; it stands only while the candidate conforms,
and hands over to live Hypothesis from the first input that does not pass. Each test runs the generator twice,
drawn ahead and live (``generate.DRAW_AHEAD`` off), and holds one to the other: the inputs a conforming
candidate was sent (the stored sequence), the findings, their ids and the counts a diverging one got. The
oracle is the reference, in process: nothing here needs harbor.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis.database import InMemoryExampleDatabase

from conformance.connection.connectors import connect, parse
from conformance.core import surfaces
from conformance.run import ahead, generate
from conformance.run.runner import Oracle
from conformance.run.stored_inputs import InputStore

CI = generate.PROFILES["ci"]
EXPLORE = generate.PROFILES["explore"]


def _generate(candidate: str, surface: str, *, live: bool, monkeypatch, profile=CI, seed=0, budget=30,
              **options: Any) -> generate.GenerationResult:
    monkeypatch.setattr(generate, "DRAW_AHEAD", not live)
    told: list[str] = []
    with connect(parse(candidate)) as connection, Oracle(connect(parse("reference"))) as oracle:
        result = generate.generate(surface, connection, oracle, profile=profile, seed=seed, max_examples=budget,
                                   on_input=told.append, **options)
    assert len(told) == result.inputs_run, "an input told of once for each one counted"
    return result


def _counts(result: generate.GenerationResult) -> tuple:
    return (result.inputs_run, result.drawn, dict(result.features), result.skipped, result.rejected,
            result.unanswered, result.error, [f.id for f in result.findings])


def _stored(folder: Path) -> list[str]:
    return [p.read_text() for p in sorted(folder.glob("**/*.jsonl"))]


# metric.compute runs real uv scripts, job.result real jobs: seconds each, so in the slow tier.
HEAVY = {"metric.compute", "job.result"}


@pytest.mark.parametrize("surface", [pytest.param(name, marks=pytest.mark.slow) if name in HEAVY else name
                                     for name in sorted(surfaces.SURFACES)])
def test_a_conforming_candidate_is_sent_the_inputs_a_live_round_draws(tmp_path, monkeypatch, surface):
    runs = {}
    for live in (False, True):
        folder = tmp_path / ("live" if live else "ahead")
        result = _generate("reference", surface, live=live, monkeypatch=monkeypatch, stored=InputStore(folder))
        runs[live] = _counts(result), _stored(folder)
    assert runs[False][1] and runs[False][1][0].count("\n") > 20, "the sequence is stored"
    assert runs[False] == runs[True]


def test_an_explore_round_with_a_database_draws_and_writes_as_a_live_one(monkeypatch):
    """The explore profile scores every input with ``hypothesis.target`` (0 for a conforming candidate), and a
    database's saved example is replayed first: both are part of what decides the inputs."""
    surface = "evsys.metric"
    databases = {}
    for live in (False, True):
        database = InMemoryExampleDatabase()
        seeded = _generate("tests.wrong_candidates:pass_rate_macro", surface, live=True, monkeypatch=monkeypatch,
                           profile=EXPLORE, seed=5, budget=40, database=database, first_only=True)
        assert seeded.findings, "a finding saved to the database"
        result = _generate("reference", surface, live=live, monkeypatch=monkeypatch, profile=EXPLORE, seed=5,
                           budget=40, database=database)
        databases[live] = _counts(result), {k: sorted(v) for k, v in database.data.items()}
    assert databases[False] == databases[True]


@pytest.mark.parametrize(("candidate", "surface"), [
    ("tests.wrong_candidates:empty_by_strip", "reward.parse"),
    ("tests.wrong_candidates:resolved_half_up", "outcome.summary"),
    pytest.param("tests.wrong_candidates:agent_timeout_unverified", "job.result", marks=pytest.mark.slow),
    ("tests.wrong_candidates:pass_rate_macro", "evsys.metric"),
])
def test_a_diverging_candidate_gets_the_findings_and_counts_of_a_live_round(monkeypatch, candidate, surface):
    ahead_run = _generate(candidate, surface, live=False, monkeypatch=monkeypatch, budget=60)
    live_run = _generate(candidate, surface, live=True, monkeypatch=monkeypatch, budget=60)
    assert ahead_run.findings, f"{candidate} diverges on {surface}"
    assert _counts(ahead_run) == _counts(live_run)


def test_an_unshrunk_first_finding_is_the_first_input_that_diverges(monkeypatch):
    candidate, surface = "tests.flaky_candidates:always_wrong", "reward.parse"
    ahead_run = _generate(candidate, surface, live=False, monkeypatch=monkeypatch, first_only=True)
    live_run = _generate(candidate, surface, live=True, monkeypatch=monkeypatch, first_only=True)
    assert [f.id for f in ahead_run.findings] == [f.id for f in live_run.findings] != []
    assert ahead_run.inputs_run == 1, "the first input drawn is the finding: nothing more is asked"


def _draw_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "conformance-draw-ahead"]


def test_no_drawing_goes_on_after_a_round_cut_short(monkeypatch):
    monkeypatch.setattr(generate, "DRAW_AHEAD", True)
    told = []

    def interrupt(surface: str) -> None:
        told.append(surface)
        if len(told) == 5:
            raise KeyboardInterrupt

    with connect(parse("reference")) as connection, Oracle(connect(parse("reference"))) as oracle, \
            pytest.raises(KeyboardInterrupt):
        generate.generate("reason.normalize", connection, oracle, profile=CI, seed=0, max_examples=500,
                          on_input=interrupt)
    assert ahead.drawing_now() == 0
    _generate("tests.wrong_candidates:pass_rate_macro", "evsys.metric", live=False, monkeypatch=monkeypatch)
    assert ahead.drawing_now() == 0
    assert len(_draw_threads()) <= ahead.IDLE_KEPT, "threads kept idle for the next rounds, no more"


def test_the_drawing_thread_waits_for_room_and_stops_when_closed():
    drawn = []

    def run() -> None:
        for number in range(10 * ahead.QUEUE_SIZE):
            drawing.put(number)
            drawn.append(number)

    drawing = ahead.Ahead(run)
    drawing.start()
    deadline = time.monotonic() + 10
    while len(drawn) < ahead.QUEUE_SIZE and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert len(drawn) == ahead.QUEUE_SIZE, "no more drawn than the queue holds while nothing is taken"
    values = iter(drawing)
    assert [next(values) for _ in range(3)] == [0, 1, 2]
    drawing.close()
    assert ahead.drawing_now() == 0 and drawing.error is None
    assert len(drawn) <= ahead.QUEUE_SIZE + 3


def _thread_drawing(count: int = 1, after: threading.Event | None = None) -> tuple[ahead.Ahead, list[int]]:
    """A run drawing ``count`` values (once ``after`` is set), and the identity of the thread it ran in."""
    ran_in: list[int] = []

    def run() -> None:
        ran_in.append(threading.get_ident())
        if after is not None:
            after.wait(10)
        for number in range(count):
            drawing.put(number)

    drawing = ahead.Ahead(run)
    return drawing, ran_in


def test_rounds_one_after_another_draw_in_one_kept_thread():
    first, first_in = _thread_drawing()
    first.start()
    assert list(first) == [0]
    first.close()
    second, second_in = _thread_drawing()
    second.start()
    assert list(second) == [0]
    second.close()
    assert first_in == second_in, "the second round's drawing reuses the thread the first one's ended in"
    assert ahead.drawing_now() == 0


def test_rounds_at_once_each_draw_in_a_thread_and_the_spare_ones_end():
    together = threading.Event()
    runs = [_thread_drawing(3, together) for _ in range(ahead.IDLE_KEPT + 2)]
    for drawing, _ in runs:
        drawing.start()
    assert ahead.drawing_now() == len(runs)
    together.set()
    for drawing, _ in runs:  # each one's values, however the threads interleave
        assert list(drawing) == [0, 1, 2]
    assert len({ran_in[0] for _, ran_in in runs}) == len(runs)
    for drawing, _ in runs:
        drawing.close()
    assert ahead.drawing_now() == 0
    deadline = time.monotonic() + 10
    while len(_draw_threads()) > ahead.IDLE_KEPT and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(_draw_threads()) <= ahead.IDLE_KEPT


def test_the_values_end_with_the_run_and_its_error_is_kept():
    def run() -> None:
        for number in range(3):
            drawing.put(number)
        raise ValueError("the strategy failed")

    drawing = ahead.Ahead(run)
    drawing.start()
    assert list(drawing) == [0, 1, 2]
    drawing.close()
    assert isinstance(drawing.error, ValueError)


def test_database_writes_wait_for_the_run_to_stand():
    inner = InMemoryExampleDatabase()
    inner.save(b"k", b"kept")
    deferred = ahead.DeferredDatabase(inner)
    deferred.save(b"k", b"new")
    deferred.move(b"k", b"other", b"kept")
    assert set(deferred.fetch(b"k")) == {b"kept"} and not set(inner.fetch(b"other")), "nothing written yet"
    deferred.apply()
    assert set(inner.fetch(b"k")) == {b"new"} and set(inner.fetch(b"other")) == {b"kept"}
    deferred.delete(b"k", b"new")
    assert not set(inner.fetch(b"k")), "once applied, writes go through"

    dropped = ahead.DeferredDatabase(inner)
    dropped.save(b"k", b"lost")
    dropped.drop()
    assert not set(inner.fetch(b"k"))
    dropped.save(b"k", b"live")
    assert set(inner.fetch(b"k")) == {b"live"}


@pytest.mark.slow
def test_a_crash_that_ends_the_run_ahead_is_taken_as_it_came(tmp_path, monkeypatch):
    """The candidate crashes on its sixth request only (tests/chaos_candidate.py counts them). A live round meets
    the crash on its sixth input; the round drawn ahead too, and its live run takes that record rather than
    asking again (a restart; a hang would cost a whole time limit), so it finds the crash a live round finds."""
    import json
    import sys

    chaos = Path(__file__).resolve().parent / "chaos_candidate.py"
    findings = {}
    for live in (False, True):
        folder = tmp_path / ("live" if live else "ahead")
        folder.mkdir()
        (folder / "plan.json").write_text(json.dumps({"runs": ["ok"] * 5 + ["crash"]}))
        result = _generate(f"exec:{sys.executable} {chaos} {folder / 'plan.json'}", "reward.parse", live=live,
                           monkeypatch=monkeypatch, budget=20)
        findings[live] = [(f.outcome, f.id) for f in result.findings], result.inputs_run
    assert findings[False] == findings[True]
    assert [outcome for outcome, _ in findings[True][0]] == ["crash"]


def test_explore_scores_only_inputs_off_by_ulps(monkeypatch):
    """A conforming candidate's inputs set no ``target`` score, so Hypothesis keeps no Pareto front of them (with a
    database it otherwise keeps and shrinks one of equal examples: most of a campaign task's time); a candidate
    whose floats are off is scored, and its scores are kept there."""
    def pareto_keys(database: InMemoryExampleDatabase) -> list[bytes]:
        return [key for key, values in database.data.items() if key.endswith(b".pareto") and values]

    conforming, diverging = InMemoryExampleDatabase(), InMemoryExampleDatabase()
    _generate("reference", "evsys.metric", live=False, monkeypatch=monkeypatch, profile=EXPLORE, seed=5, budget=40,
              database=conforming)
    result = _generate("tests.wrong_candidates:pass_rate_macro", "evsys.metric", live=False,
                       monkeypatch=monkeypatch, profile=EXPLORE, seed=5, budget=40, database=diverging)
    assert result.findings and any(m.ulps for f in result.findings for m in f.mismatches)
    assert not pareto_keys(conforming)
    assert pareto_keys(diverging)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork: POSIX only")
def test_a_forked_child_draws_in_threads_of_its_own():
    """A child forked after a round has none of the parent's threads: it must start its own, not hand its round
    to an idle thread that exists only in the parent (and wait for it forever)."""
    first, _ = _thread_drawing()
    first.start()
    assert list(first) == [0]
    first.close()  # the parent now keeps an idle drawing thread
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: a round, and a byte to say it ended
        try:
            drawing, _ = _thread_drawing(2)
            drawing.start()
            values = list(drawing)
            drawing.close()
            os.write(write, b"1" if values == [0, 1] else b"0")
        finally:
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + 10
    said = b""
    while not said and time.monotonic() < deadline:
        ready, _, _ = select.select([read], [], [], 0.1)
        if ready:
            said = os.read(read, 1)
    if not said:
        os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    os.close(read)
    assert said == b"1", "the forked child's round ended with its values"
