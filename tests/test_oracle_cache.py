"""The oracle answer cache: harbor asked only what it has not answered, and nothing when it has answered all.

Offline, the oracle is the reference candidate (in process) behind a counting connection, standing in for
``harbor==0.13.1`` (its identity and its start are patched in); the last test asks harbor itself.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import hypothesis  # noqa: F401 - imported once here, not by each pytester run (as in test_pytest_plugin.py)
import pytest
from typer.testing import CliRunner

import conformance.pytest_plugin.session  # noqa: F401 - as hypothesis, above
from conformance.cli import app
from conformance.connection import cached, connectors
from conformance.connection.base import BaseConnection, Capabilities, ConnectError
from conformance.connection.replies import Reply
from conformance.connection.spec import Spec
from conformance.core import surfaces
from conformance.core.outcomes import ProtocolError, ReplyKind
from conformance.kit import wire
from conformance.oracle import answers, recordings
from conformance.report.reader import read
from conformance.run import gate, stored_inputs
from conformance.run.certification import Options, certify
from conformance.run.shards import Shard, combine
from tests.test_extensions import surface_for_test

HARBOR = connectors.parse("harbor==0.13.1")
IDENTITY = answers.Identity("0.13.1", "lock-a", "3.12.1", "adapter-a")
REAL_CONNECT = connectors.connect
pytest_plugins = ["pytester"]


class Counting(BaseConnection):
    """A connection that answers as the one it wraps, and keeps every input it was asked."""

    capabilities = property(lambda self: Capabilities(own_lane=self.spec.harbor_version is not None))

    def __init__(self, inner: Any, spec: Spec = HARBOR) -> None:
        self.inner, self.spec = inner, spec
        self.asked: list[tuple[str, Any]] = []
        self.batches: list[int] = []  # the size of each batch it was sent

    implementation = property(lambda self: self.inner.implementation)
    broken = property(lambda self: self.inner.broken)
    batch_fallbacks = property(lambda self: self.inner.batch_fallbacks)

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        self.asked.append((surface, input_wire))
        reply: Reply = self.inner.run(seq, surface, input_wire)
        return reply

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        self.batches.append(len(items))
        return [self.run(*item) for item in items]

    def close(self) -> Reply | None:
        return self.inner.close()


class Scripted(Counting):
    """An oracle that gives one reply to everything."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(REAL_CONNECT("reference"))
        self.reply = reply

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        self.asked.append((surface, input_wire))
        return Reply(self.reply.kind, self.reply.value, self.reply.detail, self.reply.error, self.reply.encoded)


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """The cache's folder, empty."""
    where = tmp_path / "answers"
    monkeypatch.setenv(answers.FOLDER_ENV, str(where))
    return where


def _cached(inner: Counting, identity: answers.Identity = IDENTITY, **store: Any) -> cached.CachedOracle:
    return cached.CachedOracle(HARBOR, identity, answers.AnswerStore(**store), lambda: inner)


def _entries(where: Path) -> int:
    file = where / answers.FILE
    if not file.exists():
        return 0
    with sqlite3.connect(file) as db:
        return int(db.execute("SELECT count(*) FROM answers").fetchone()[0])


INPUTS = [wire.encode({"reward_txt": text.encode()}) for text in ("1", "0.5", " 2 ", "x", "")]


def _ask(connection: Any, surface: str = "reward.parse", inputs: list[Any] = INPUTS) -> list[Reply]:
    from conformance.run.runner import ask

    return ask(connection, surface, inputs)


def _results(replies: list[Reply], surface: str = "reward.parse") -> list[Any]:
    return [reply.result(surfaces.get(surface)) for reply in replies]


# -- the connection ---------------------------------------------------------------------------------------------


def test_a_second_asking_is_answered_from_the_cache_and_the_same(folder):
    first = Counting(REAL_CONNECT("reference"))
    with _cached(first) as oracle:
        fresh = _ask(oracle)
        assert oracle.hits == 0 and len(first.asked) == len(INPUTS) and _entries(folder) == len(INPUTS)
    second = Counting(REAL_CONNECT("reference"))
    with _cached(second) as oracle:
        again = _ask(oracle)
        assert oracle.hits == len(INPUTS) and second.asked == [] and not oracle.started
    assert _results(again) == _results(fresh)
    assert {r.kind for r in fresh} == {"output", "raised"}  # both kinds of answer are kept
    assert [r.encoded for r in again] == [r.encoded for r in fresh]  # outputs bit for bit, as the oracle said them


def test_a_batch_partly_in_the_cache_sends_only_the_misses(folder):
    with _cached(Counting(REAL_CONNECT("reference"))) as oracle:
        _ask(oracle, inputs=INPUTS[:2])
    inner = Counting(REAL_CONNECT("reference"))
    with _cached(inner) as oracle:
        replies = _ask(oracle)
        assert inner.batches == [3] and [value for _, value in inner.asked] == INPUTS[2:] and oracle.hits == 2
    assert len(replies) == len(INPUTS) and all(r.kind in ("output", "raised") for r in replies)
    lone = Counting(REAL_CONNECT("reference"))
    with _cached(lone) as oracle:
        missing = wire.encode({"reward_txt": b"7"})
        replies = _ask(oracle, inputs=[*INPUTS, missing])
        # A lone miss is left to the caller, which asks it singly: still one request, never a batch of one.
        assert lone.batches == [] and lone.asked == [("reward.parse", missing)] and oracle.hits == len(INPUTS)
    assert replies[-1].value == {"reward": 7.0}


@pytest.mark.parametrize("reply", [
    Reply(ReplyKind.ERRORED, detail="Traceback ..."),
    Reply(ReplyKind.SKIPPED, detail="not served"),
    Reply(ReplyKind.CRASH, detail="exit 1"),
    Reply(ReplyKind.TIMEOUT, detail="no reply in 120s"),
    Reply(ReplyKind.PROTOCOL_ERROR, detail="seq 3 for 2", error=ProtocolError.WRONG_SEQ),
], ids=lambda reply: reply.kind)
def test_what_is_not_an_answer_is_never_kept(folder, reply):
    for _ in range(2):
        inner = Scripted(reply)
        with _cached(inner) as oracle:
            assert [r.kind for r in _ask(oracle)] == [reply.kind] * len(INPUTS)
            assert len(inner.asked) == len(INPUTS) and oracle.hits == 0
    assert _entries(folder) == 0


def test_a_surface_that_is_not_cacheable_is_never_stored(folder):
    @surface_for_test("test.uncached", cacheable=False, cache_note="reads the clock")
    class _Input(surfaces.BaseModel):
        value: int

    try:
        inner = Scripted(Reply(ReplyKind.OUTPUT, 1, encoded=wire.encode(1)))
        for _ in range(2):
            with _cached(inner) as oracle:
                _ask(oracle, "test.uncached", [wire.encode({"value": 1}), wire.encode({"value": 2})])
                assert oracle.hits == 0
        assert len(inner.asked) == 4 and _entries(folder) == 0
    finally:
        surfaces.SURFACES._items.pop("test.uncached", None)


def test_the_shipped_surfaces_say_whether_and_why_they_are_cached():
    for surface in surfaces.SURFACES.values():
        assert surface.cacheable and surface.cache_note, surface.name


@pytest.mark.parametrize("other", [
    answers.Identity("0.13.2", "lock-a", "3.12.1", "adapter-a"),
    answers.Identity("0.13.1", "lock-b", "3.12.1", "adapter-a"),
    answers.Identity("0.13.1", "lock-a", "3.12.7", "adapter-a"),
    answers.Identity("0.13.1", "lock-a", "3.12.1", "adapter-b"),
    answers.Identity("0.13.1", "lock-a", "3.12.1", "adapter-a", protocol=2),
], ids=["harbor version", "lock hash", "python", "adapter", "protocol"])
def test_another_oracle_never_meets_these_answers(folder, other):
    with _cached(Counting(REAL_CONNECT("reference"))) as oracle:
        _ask(oracle)
    inner = Counting(REAL_CONNECT("reference"))
    with _cached(inner, other) as oracle:
        _ask(oracle)
        assert oracle.hits == 0 and len(inner.asked) == len(INPUTS) and oracle.started  # its own handshake too
    assert _entries(folder) == 2 * len(INPUTS)


def test_the_key_is_the_canonical_wire_form():
    a = answers.key("o", "s", wire.encode({"a": 1, "b": [1.0, b"x"]}))
    assert a == answers.key("o", "s", json.loads(json.dumps(wire.encode({"a": 1, "b": [1.0, b"x"]}), indent=2)))
    assert a != answers.key("o", "s", wire.encode({"b": [1.0, b"x"], "a": 1}))  # key order is part of the input
    assert a != answers.key("o", "s", wire.encode({"a": 1.0, "b": [1.0, b"x"]}))  # 1 and 1.0 are not one input
    assert a != answers.key("o", "t", wire.encode({"a": 1, "b": [1.0, b"x"]}))
    assert answers.key("o", "s", "\ud800") != answers.key("o", "s", "\ud801")  # lone surrogates have keys too


def test_a_corrupt_entry_is_a_miss_and_is_replaced(folder):
    with _cached(Counting(REAL_CONNECT("reference"))) as oracle:
        fresh = _ask(oracle)
    with sqlite3.connect(folder / answers.FILE) as db:
        rows = db.execute("SELECT key FROM answers").fetchall()
        damaged = ['{"output": {"float": "not bits"}}', "not json", '{"raised": {"type": 1}}', '["output"]',
                   '{"output": 1, "raised": 2}']
        for (key,), text in zip(rows, damaged, strict=True):
            db.execute("UPDATE answers SET answer = ? WHERE key = ?", (text, key))
    inner = Counting(REAL_CONNECT("reference"))
    with _cached(inner) as oracle:
        assert _results(_ask(oracle)) == _results(fresh) and oracle.hits == 0 and len(inner.asked) == len(INPUTS)
    with _cached(Counting(REAL_CONNECT("reference"))) as oracle:
        assert _results(_ask(oracle)) == _results(fresh) and oracle.hits == len(INPUTS)  # the fresh answers, kept


def test_a_database_that_is_no_database_is_a_warning_and_misses(folder):
    folder.mkdir(parents=True)
    (folder / answers.FILE).write_bytes(b"this is not SQLite " * 100)
    said: list[str] = []
    inner = Counting(REAL_CONNECT("reference"))
    oracle = cached.CachedOracle(HARBOR, IDENTITY, answers.AnswerStore(warn=said.append), lambda: inner)
    with oracle:
        replies = _ask(oracle)
    assert len(inner.asked) == len(INPUTS) and {r.kind for r in replies} == {"output", "raised"}
    assert len(said) == 1 and "is not used from here on" in said[0] and "conformance cache clear" in said[0]


def test_a_cache_folder_that_cannot_be_made_is_a_warning_and_misses(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(answers.FOLDER_ENV, str(tmp_path / "a-file" / "answers"))
    said: list[str] = []
    inner = Counting(REAL_CONNECT("reference"))
    with cached.CachedOracle(HARBOR, IDENTITY, answers.AnswerStore(warn=said.append), lambda: inner) as oracle:
        _ask(oracle)
    assert len(inner.asked) == len(INPUTS) and len(said) == 1


def test_harbor_starts_only_on_a_miss_and_a_start_that_fails_answers_each_miss(folder):
    with _cached(Counting(REAL_CONNECT("reference"))) as oracle:
        _ask(oracle, inputs=INPUTS[:2])

    def fails() -> Any:
        raise ConnectError("harbor==0.13.1: no such interpreter")

    with cached.CachedOracle(HARBOR, IDENTITY, answers.AnswerStore(), fails) as oracle:
        assert not oracle.started and oracle.implementation is not None and oracle.implementation.name == "reference"
        replies = _ask(oracle)
    assert [r.kind for r in replies] == ["output", "output", "crash", "crash", "crash"]
    assert "the oracle did not start: harbor==0.13.1: no such interpreter" in replies[2].detail


def test_without_a_stored_handshake_harbor_starts_at_once_and_its_failure_is_the_callers(folder):
    def fails() -> Any:
        raise ConnectError("harbor==0.13.1: no such interpreter")

    with pytest.raises(ConnectError, match="no such interpreter"):
        cached.CachedOracle(HARBOR, IDENTITY, answers.AnswerStore(), fails)


def test_the_oldest_answers_go_first_past_the_limit(folder):
    store = answers.AnswerStore(limit=10)
    keys = [answers.key("o", "s", i) for i in range(25)]
    for k in keys:
        store.put("o", [(k, "s", f'"{k.hex()}"')])
    found = store.get(keys)
    assert len(found) <= 10 and set(found) >= set(keys[-9:]) and keys[0] not in found
    store.close()


WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from conformance.oracle import answers

    me, start = int(sys.argv[1]), Path(sys.argv[2])
    store = answers.AnswerStore(Path(sys.argv[3]), warn=lambda message: sys.exit(message))
    while not start.exists():
        time.sleep(0.001)
    for batch in range(150):
        # each process its own keys, and keys every process stores (the same answer for the same key)
        mine = [(answers.key("o", "s", [me, batch, i]), "s", f'"{me}-{batch}-{i}"') for i in range(4)]
        shared = [(answers.key("o", "s", ["all", batch]), "s", f'"all-{batch}"')]
        store.put("o", mine + shared)
        found = store.get([k for k, _, _ in mine + shared])
        assert len(found) == 5, (me, batch, len(found))
    store.close()
""")


def test_processes_writing_at_once_leave_every_answer_whole(tmp_path):
    file, start = tmp_path / "answers.sqlite3", tmp_path / "go"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(me), str(start), str(file)],
                                stderr=subprocess.PIPE, text=True) for me in range(4)]
    start.touch()
    assert [(w.wait(timeout=120), w.stderr.read() if w.stderr else "") for w in writers] == [(0, "")] * 4
    with sqlite3.connect(file) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = dict(db.execute("SELECT key, answer FROM answers").fetchall())
    expected = {answers.key("o", "s", [me, batch, i]): f'"{me}-{batch}-{i}"'
                for me in range(4) for batch in range(150) for i in range(4)}
    expected |= {answers.key("o", "s", ["all", batch]): f'"all-{batch}"' for batch in range(150)}
    assert stored == expected


# -- certify, the gate, the pytest plugin, the command -----------------------------------------------------------


@pytest.fixture
def stand_in(folder, monkeypatch):
    """``harbor==0.13.1`` served by the reference, counted; ``stand_in.refuse = True`` makes starting it fail."""

    class StandIn:
        refuse = False
        started: list[Counting] = []

        def connect(self, spec: Spec | str, **settings: Any) -> Any:
            spec = connectors.parse(spec) if isinstance(spec, str) else spec
            if spec.harbor_version is None:
                return REAL_CONNECT(spec, **settings)
            assert not self.refuse, "harbor was started"
            self.started.append(Counting(REAL_CONNECT("reference"), spec))
            return self.started[-1]

        @property
        def asked(self) -> int:
            return sum(len(c.asked) for c in self.started)

    stand_in = StandIn()
    # The stand-in is no harbor the suite's recorded answers are answers of: the cache alone is under test.
    monkeypatch.setattr(recordings, "load", lambda version: None)
    monkeypatch.setattr(answers, "identity", lambda version, log=None: IDENTITY)
    monkeypatch.setattr(connectors, "connect", stand_in.connect)
    monkeypatch.setattr("conformance.run.certification.connect", stand_in.connect)
    return stand_in


def _certify(tmp_path: Path, name: str, **options: Any) -> Any:
    options = {"candidate": "reference", "oracle": "harbor==0.13.1", "surfaces": ["reward.parse", "pass_at_k"],
               "profile": "ci", "max_examples": 15, **options}
    return certify(Options(**options), tmp_path / f"{name}.jsonl")


def _inputs_run(run: Any) -> int:
    return run.tally.total + sum(line.inputs_run for line in run.tally.generated.values())


@pytest.mark.slow
def test_a_second_certify_answers_from_the_cache_without_starting_harbor(tmp_path, stand_in):
    first = _certify(tmp_path, "first")
    asked = stand_in.asked
    assert first.conforms and asked > 0 and len(stand_in.started) == 1
    assert first.footer.cached_answers + asked == _inputs_run(first)  # repeats within the run come from the cache
    stand_in.refuse = True
    second = _certify(tmp_path, "second")
    assert second.conforms and stand_in.asked == asked  # nothing more asked: harbor never even started
    assert second.footer.cached_answers == _inputs_run(second) == first.footer.cached_answers + asked
    assert read(tmp_path / "second.jsonl").footer.cached_answers == second.footer.cached_answers
    oracle_side = {r.id: r.oracle for r in first.records}
    assert {r.id: r.oracle for r in second.records} == oracle_side
    assert read(tmp_path / "second.jsonl").header.oracle.implementation.name == "reference"  # the stored handshake


@pytest.mark.slow
def test_no_oracle_cache_asks_everything_and_stores_nothing(tmp_path, stand_in, folder):
    for name in ("first", "second"):
        run = _certify(tmp_path, name, oracle_cache=False)
        assert run.footer.cached_answers == 0
    assert stand_in.asked == 2 * _inputs_run(run) and not folder.exists()


def test_the_command_line_flags(tmp_path, stand_in, folder, monkeypatch):
    # `cache clear` empties the stored inputs too: the test's own, not the run's shared ones (tests/conftest.py).
    monkeypatch.setenv(stored_inputs.FOLDER_ENV, str(tmp_path / "inputs"))
    def certify_cli(*args: str) -> Any:
        report = tmp_path / "cli.jsonl"
        result = CliRunner().invoke(app, ["certify", "-c", "reference", "-s", "pass_at_k", "--no-generate",
                                          "--report", str(report), *args])
        assert result.exit_code == 0, result.output
        return result, read(report).footer

    _, footer = certify_cli("--no-oracle-cache")
    assert footer.cached_answers == 0 and not folder.exists()
    certify_cli()
    result, footer = certify_cli()
    assert footer.cached_answers == footer.total > 0
    assert f"{footer.total} oracle answer(s) from the cache" in " ".join(result.output.split())

    info = CliRunner().invoke(app, ["cache", "info"], env={"COLUMNS": "300"})
    assert info.exit_code == 0 and str(folder) in info.output and "pass_at_k" in info.output
    assert "adapter adapter-a" in info.output
    cleared = CliRunner().invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0 and "removed" in cleared.output
    assert answers.info().entries == 0 and not list(folder.glob("answers-*"))
    assert "0 answer(s)" in CliRunner().invoke(app, ["cache", "info"]).output


def test_a_combined_report_sums_its_shards_answers_from_the_cache(tmp_path, stand_in):
    _certify(tmp_path, "fill", surfaces=["pass_at_k"], no_generate=True)
    for name in ("1", "2"):
        _certify(tmp_path, name, surfaces=["pass_at_k"], no_generate=True, shard=Shard.parse(f"{name}/2"))
    parts = [(name, read(tmp_path / f"{name}.jsonl")) for name in ("1", "2")]
    _, _, footer = combine(parts)
    assert footer.cached_answers == footer.total == sum(part.footer.cached_answers for _, part in parts) > 0


class Captured(Exception):
    pass


def test_the_gate_passes_the_choice_on(tmp_path, monkeypatch):
    seen: list[Options] = []

    def capture(options: Options, *args: Any, **kwargs: Any) -> Any:
        seen.append(options)
        raise Captured

    monkeypatch.setattr(gate.certification, "certify", capture)
    for choice in (True, False):
        with pytest.raises(Captured):
            gate.run("0.25.0", out_dir=tmp_path, oracle_cache=choice, lookup=lambda case_id: None)
    assert [options.oracle_cache for options in seen] == [True, False]
    no_flag = CliRunner().invoke(app, ["gate", "0.25.0", "--no-oracle-cache"])
    assert [options.oracle_cache for options in seen] == [True, False, False] and no_flag.exit_code != 0


@pytest.mark.slow
def test_the_pytest_plugin_counts_and_bypasses(pytester, stand_in, folder):
    args = ["--conformance-candidate", "reference", "--conformance-no-generate", "-p", "no:cacheprovider",
            "--conformance-report", "r.jsonl"]
    source = Path(__file__).resolve().parent.parent / "cases" / "pass_at_k"
    for case_file in source.glob("*.yaml"):
        (pytester.path / "cases" / "pass_at_k").mkdir(parents=True, exist_ok=True)
        (pytester.path / "cases" / "pass_at_k" / case_file.name).write_bytes(case_file.read_bytes())

    def footer(*more: str) -> Any:
        result = pytester.runpytest("cases", *args, *more)
        assert result.ret == 0, result.stdout.str()
        return read(pytester.path / "r.jsonl").footer

    bypassed = footer("--conformance-no-oracle-cache")
    assert bypassed.cached_answers == 0 and stand_in.asked == bypassed.total and not folder.exists()
    filled = footer()
    assert filled.cached_answers + stand_in.asked - bypassed.total == filled.total  # repeated inputs: from the cache
    stand_in.refuse = True
    counted = footer()
    assert counted.cached_answers == counted.total > 0


# -- harbor itself ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_harbor_answers_once_and_then_never_starts(tmp_path, monkeypatch, harbor_env):
    """The real oracle: a first run asks it (each answer counted as it comes), a second asks nothing."""
    monkeypatch.setenv(answers.FOLDER_ENV, str(tmp_path / "answers"))
    started: list[Counting] = []

    def counted(spec: Spec | str, **settings: Any) -> Any:
        spec = connectors.parse(spec) if isinstance(spec, str) else spec
        assert not refuse, "harbor was started"
        started.append(Counting(REAL_CONNECT(spec, **settings), spec))
        return started[-1]

    refuse = False
    monkeypatch.setattr(connectors, "connect", counted)
    options = {"surfaces": ["reward.parse", "pass_at_k", "reason.normalize"], "max_examples": 10}
    first = _certify(tmp_path, "first", **options)
    asked = sum(len(c.asked) for c in started)
    assert first.conforms and asked > 0
    # The suite's recordings answer what they hold (the corpus's cases among them), the cache the rest once asked.
    assert first.footer.cached_answers + first.footer.recorded_answers + asked == _inputs_run(first)
    refuse = True
    second = _certify(tmp_path, "second", **options)
    assert second.conforms
    assert second.footer.cached_answers + second.footer.recorded_answers == _inputs_run(second) == _inputs_run(first)
    assert second.footer.cached_answers == asked, "what harbor answered the first time, the cache answers now"
    assert {r.id: r.oracle for r in second.records} == {r.id: r.oracle for r in first.records}
    assert second.tally.stale_recordings == []  # the recordings are checked against the stored answers as well
    head = read(tmp_path / "second.jsonl").header
    assert head.oracle.spec == "harbor==0.13.1" and head.oracle.implementation.name == "harbor"
