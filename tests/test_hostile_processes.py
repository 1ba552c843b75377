"""Candidates that attack the harness itself: its memory, its process table, its temporary folders.

Each attack is a tiny program (an ``exec:`` candidate) run through a real
``certify`` of reward.parse against the recorded oracle, mostly by the CLI in
a subprocess, so the harness's own peak memory can be measured apart from the
test runner's. Each run must end with the attack's outcome, a whole report
(header, every case once, footer), the harness under 300 MB resident, and no
process of the candidate's (nor any it started) still running. Every
candidate notes its pid, and the pid of each process it starts, in a file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conformance.connection import groups
from conformance.connection.base import MAX_LINE_BYTES, MAX_LINE_VALUES
from conformance.connection.process import StderrTail
from conformance.corpus import cases as case_corpus
from conformance.report import reader as report
from conformance.report.model import DETAIL_LIMIT, MESSAGE_LIMIT, MISMATCH_LIMIT, OUTPUT_LIMIT
from conformance.run import certification
from tests.hostile import RSS_LIMIT_MB, CliRun, running

MB = 1024 * 1024

# Shared by every candidate: the handshake, pid notes, a counter of the inputs asked that survives restarts (an
# input asked again, as the harness asks one the candidate diverged on, gets the number it had: the same attack).
PRELUDE = r'''
import json, os, signal, subprocess, sys, time

PIDS = sys.argv[1]
COUNT = PIDS + ".count"


def note(pid):
    with open(PIDS, "a") as f:
        f.write(f"{pid}\n")


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def write(stream, data, total):
    """``total`` bytes of ``data`` repeated, in 1 MiB writes."""
    block = (data * (2**20 // len(data) + 1))[:2**20]
    for _ in range(total // 2**20):
        stream.write(block)
    stream.flush()


def inputs_so_far(value):
    """The number of the input, counting from 0 in the order they were first asked."""
    seen = json.load(open(COUNT)) if os.path.exists(COUNT) else {}
    key = json.dumps(value, sort_keys=True)
    if key not in seen:
        seen[key] = len(seen)
        with open(COUNT, "w") as f:
            json.dump(seen, f)
    return seen[key]


def grandchild(ignore_term=False):
    """A process that inherits stdin, stdout and stderr, and sleeps."""
    code = "import signal, time\n" + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "")
    note(subprocess.Popen([sys.executable, "-c", code + "time.sleep(120)"]).pid)


def skip(seq):
    send({"seq": seq, "skipped": {"reason": "not served"}})


def serve(run, stop=lambda: None):
    for line in sys.stdin:
        message = json.loads(line)
        if message["cmd"] == "start":
            send({"protocol": 1, "implementation": {"name": "hostile", "version": "0", "language": "python",
                                                      "surfaces": ["reward.parse"]}})
        elif message["cmd"] == "run":
            run(message["seq"], inputs_so_far(message["input"]))
        elif message["cmd"] == "stop":
            stop()
            return


note(os.getpid())
'''


def candidate(tmp_path: Path, attack: str) -> str:
    script = tmp_path / "candidate.py"
    script.write_text(PRELUDE + attack)
    return f"exec:{sys.executable} {script} {tmp_path / 'pids'}"


def pids(tmp_path: Path) -> list[int]:
    path = tmp_path / "pids"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def assert_nothing_left(tmp_path: Path, temp: Path) -> None:
    noted = pids(tmp_path)
    assert noted, "the candidate noted no pid"
    assert [pid for pid in noted if running(pid)] == []
    assert list(temp.glob(f"{groups.WORKDIR_PREFIX}*")) == []


def reward_parse_ids(glob: str = "reward.parse::*") -> list[str]:
    loaded = certification.load_corpus(case_corpus.default_root())
    return [i.id for i in case_corpus.select(loaded, ids=[glob], harbor_version="0.13.1")]


def whole_report(path: Path) -> report.Report:
    """Every reward.parse case recorded exactly once, in a report with its header and footer."""
    data = report.read(path)
    assert data.header is not None and data.footer is not None and not data.truncated
    ids = reward_parse_ids()
    assert [r.id for r in data.records] == ids and data.footer.total == len(ids)
    return data


def certify_cli(tmp_path: Path, attack: str, *options: str) -> tuple[CliRun, report.Report]:
    run = CliRun(tmp_path, candidate(tmp_path, attack), "--broken-after", "1000", *options)
    assert run.run() == 1, run.stderr  # the candidate does not conform; a usage error (2) would be a bug
    assert run.rss_mb < RSS_LIMIT_MB
    data = whole_report(run.report)
    assert_nothing_left(tmp_path, run.temp)
    return run, data


# -- the attacks -------------------------------------------------------------------


@pytest.mark.slow
def test_output_written_after_stop_is_read_and_dropped(tmp_path):
    """500 MB on stdout after `stop`: drained and dropped, and the candidate exits as it should."""
    attack = r'''
serve(lambda seq, n: skip(seq), stop=lambda: write(sys.stdout.buffer, b'{"seq": 1, "output": null}\n', 500 * 2**20))
'''
    run, data = certify_cli(tmp_path, attack)
    assert {r.outcome for r in data.records} == {"skip"}
    assert data.candidate_problems == []  # it exited once it had written all of it
    assert run.seconds < 30


@pytest.mark.slow
def test_a_line_that_never_ends_is_an_oversized_line(tmp_path):
    """500 MB on stdout without a newline: cut off at the line limit, not held."""
    attack = r'''
def run(seq, n):
    if n == 0:
        write(sys.stdout.buffer, b"x", 500 * 2**20)
    skip(seq)

serve(run)
'''
    _, data = certify_cli(tmp_path, attack)
    first = data.records[0]
    assert (first.outcome, first.protocol_error) == ("protocol-error", "oversized-line")
    assert f"longer than {MAX_LINE_BYTES} bytes" in first.detail
    assert {r.outcome for r in data.records[1:]} == {"skip"}


@pytest.mark.slow
def test_lines_nobody_asked_for_are_not_kept(tmp_path):
    """After its first reply, a flood of second replies: the next request finds them (unsolicited-reply), none
    is held. (Found before the next request is sent, or read as its reply: the same protocol error either way.)"""
    attack = r'''
def run(seq, n):
    skip(seq)
    if n == 0:
        write(sys.stdout.buffer, ('{"seq": %d, "skipped": {"reason": "again"}}\n' % seq).encode(), 500 * 2**20)

serve(run)
'''
    _, data = certify_cli(tmp_path, attack)
    assert [(r.outcome, r.protocol_error) for r in data.records[:3]] == [
        ("skip", None), ("protocol-error", "unsolicited-reply"), ("skip", None)]


@pytest.mark.slow
def test_a_stderr_line_without_end_is_kept_as_a_bounded_tail(tmp_path):
    """500 MB on stderr with no newline, then an exit: a crash whose detail holds a few kilobytes of it."""
    attack = r'''
def run(seq, n):
    if n == 0:
        write(sys.stderr.buffer, b"e", 500 * 2**20)
        sys.stderr.write("\nlast words\n")
        sys.exit(3)
    skip(seq)

serve(run)
'''
    _, data = certify_cli(tmp_path, attack)
    first = data.records[0]
    assert first.outcome == "crash" and first.detail.startswith("exited with status 3")
    assert "last words" in first.detail and f"(a line of {500 * MB} bytes)" in first.detail
    assert len(first.detail) < 3 * 2000
    assert {r.outcome for r in data.records[1:]} == {"skip"}


@pytest.mark.slow
def test_huge_strings_in_valid_replies_are_kept_cut_with_their_length(tmp_path):
    """Replies of up to 14 MiB: every string a case line keeps is cut, and says how long it was."""
    attack = r'''
BIG = 7 * 2**20  # an errored reply holds two: 14 MiB, within the line limit


def run(seq, n):
    if n == 0:
        send({"seq": seq, "skipped": {"reason": "s" * BIG}})
    elif n == 1:
        send({"seq": seq, "errored": {"message": "m" * BIG, "traceback": "t" * BIG}})
    elif n == 2:
        send({"seq": seq, "raised": {"type": "T" * 2**20, "message": "r" * BIG}})
    elif n == 3:
        send({"seq": seq, "output": "o" * BIG})
    elif n == 4:  # as many values as a line may hold, each a mismatch
        send({"seq": seq, "output": {"dict": [[f"k{i}" + "k" * 500, None] for i in range(MAX_LINE_VALUES // 4)]}})
    elif n == 5:  # one byte over the line limit
        sys.stdout.write('{"seq": %d, "skipped": {"reason": "%s"}}\n' % (seq, "x" * MAX_LINE_BYTES))
        sys.stdout.flush()
    elif n == 6:  # a short line, but more JSON values than a line may hold
        sys.stdout.write('{"seq": %d, "output": [%s]}\n' % (seq, ",".join(["[]"] * (MAX_LINE_VALUES + 1))))
        sys.stdout.flush()
    elif n == 7:  # what the harness once kept whole
        send({"seq": seq, "skipped": {"reason": "s" * 60 * 2**20}})
    else:
        skip(seq)

serve(run)
'''.replace("MAX_LINE_VALUES", str(MAX_LINE_VALUES)).replace("MAX_LINE_BYTES", str(MAX_LINE_BYTES))
    run, data = certify_cli(tmp_path, attack)
    skipped, errored, raised, long_output, many, too_long, too_many, sixty = data.records[:8]
    big = 7 * MB
    assert skipped.outcome == "skip" and skipped.detail == "s" * DETAIL_LIMIT + f"… ({big} characters)"
    assert errored.outcome == "error" and errored.detail.endswith(f"… ({2 * big + 1} characters)")
    assert raised.outcome == "fail" and raised.candidate is not None
    assert raised.candidate.raised == "T" * MESSAGE_LIMIT + f"… ({MB} characters)"
    assert raised.candidate.message == "r" * MESSAGE_LIMIT + f"… ({big} characters)"
    assert long_output.outcome == "fail" and long_output.candidate.cut == big + 2  # the JSON string's quotes
    assert len(long_output.candidate.output) == OUTPUT_LIMIT
    assert many.outcome == "fail" and len(many.mismatches) <= MISMATCH_LIMIT + 15
    assert many.more_mismatches >= MAX_LINE_VALUES // 4 - len(many.mismatches)
    assert many.first_difference().endswith(f"(+{len(many.mismatches) - 1 + many.more_mismatches} more)")
    assert all(len(m.path) < MESSAGE_LIMIT + 40 for m in many.mismatches)
    for record in (too_long, too_many, sixty):
        assert (record.outcome, record.protocol_error) == ("protocol-error", "oversized-line")
    assert {r.outcome for r in data.records[8:]} == {"skip"}
    # On disk too: no case line is longer than what the limits allow.
    lines = run.report.read_text(encoding="utf-8").splitlines()
    assert max(len(line) for line in lines) < 2 * OUTPUT_LIMIT + 100 * 1024


@pytest.mark.slow
def test_a_process_left_holding_stdout_does_not_turn_a_crash_into_a_timeout(tmp_path):
    """The candidate starts a process that inherits its pipes, then exits: a crash at once, with its stderr."""
    attack = r'''
def run(seq, n):
    if n < 3:
        grandchild()
        sys.stderr.write(f"crashing on request {n}\n")
        sys.stderr.flush()
        os._exit(3)
    skip(seq)

serve(run)
'''
    run, data = certify_cli(tmp_path, attack, "--timeout", "60")
    assert [r.outcome for r in data.records[:3]] == ["crash"] * 3
    for n, record in enumerate(data.records[:3]):
        assert record.detail.startswith("exited with status 3; a process it started held its stdout open")
        assert f"crashing on request {n}" in record.detail
    assert {r.outcome for r in data.records[3:]} == {"skip"}
    assert run.seconds < 30  # not three 60 s timeouts
    assert len(pids(tmp_path)) >= 7  # 4 candidates (3 crashed), 3 of their children: all stopped


@pytest.mark.slow
def test_a_hang_stops_the_whole_process_group_even_what_ignores_sigterm(tmp_path):
    """A timeout kills the candidate and what it started: SIGTERM, then SIGKILL for what ignores it."""
    attack = r'''
def run(seq, n):
    if n == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        grandchild(ignore_term=True)
        time.sleep(120)
    skip(seq)

serve(run)
'''
    run, data = certify_cli(tmp_path, attack, "--timeout", "1")
    assert data.records[0].outcome == "timeout"
    assert {r.outcome for r in data.records[1:]} == {"skip"}
    assert run.seconds < 30


DAEMON = r'''
def daemon():
    """A daemon as a build server starts one: forked twice, in a session of its own (out of the candidate's group),
    its parent gone, its pipes closed, and deaf to SIGTERM."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            note(os.getpid())
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            for fd in (0, 1, 2):
                os.close(fd)
            time.sleep(120)
            os._exit(0)
        os._exit(0)
    os.waitpid(pid, 0)
'''


@pytest.mark.slow
def test_a_daemon_that_left_the_candidates_group_is_stopped_with_it(tmp_path):
    """setsid and a double fork take a process out of the group and away from its parent: it is still found (it
    carries the candidate's token in its environment) and stopped, SIGKILL after SIGTERM."""
    attack = DAEMON + r'''
def run(seq, n):
    if n == 0:
        daemon()
    skip(seq)

serve(run)
'''
    run, data = certify_cli(tmp_path, attack)
    assert {r.outcome for r in data.records} == {"skip"}
    assert len(pids(tmp_path)) == 2  # the candidate and its daemon: neither runs (certify_cli checked)


def test_what_carries_a_candidates_token_is_found_and_stopped_and_nothing_else(tmp_path):
    token = str(tmp_path / "conformance-candidate-0-x")
    env = {**os.environ, groups.TOKEN_ENV: token}
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    marked = subprocess.Popen(sleeper, env=env, start_new_session=True)
    other = subprocess.Popen(sleeper, env={**os.environ, groups.TOKEN_ENV: token + "-other"})
    try:
        deadline = time.monotonic() + 10
        while not groups.carrying(token) and time.monotonic() < deadline:
            time.sleep(0.05)  # its environment is readable once it has exec'd
        assert [pid for pid, _ in groups.carrying(token)] == [marked.pid]
        groups.terminate_carrying(token)
        assert marked.poll() is not None and other.poll() is None
    finally:
        for process in (marked, other):
            process.kill()
            process.wait()


@pytest.mark.slow
def test_nothing_is_left_when_the_harness_is_interrupted(tmp_path):
    """SIGTERM to the harness mid-case: exit 130, the candidate's group stopped, its folder removed."""
    attack = r'''
def run(seq, n):
    if n == 3:
        grandchild()
        with open(PIDS + ".hung", "w"):
            pass
        time.sleep(120)  # neither reads stdin nor answers
    skip(seq)

serve(run)
'''
    run = CliRun(tmp_path, candidate(tmp_path, attack), "--timeout", "60", "--timeout-multiplier", "0.1")
    process = run.start()
    wait_for(tmp_path / "pids.hung")
    assert list(run.temp.glob(f"{groups.WORKDIR_PREFIX}{process.pid}-*"))  # named after the harness
    process.send_signal(signal.SIGTERM)
    assert run.finish(process) == 130
    assert run.rss_mb < RSS_LIMIT_MB
    data = report.read(run.report)
    assert data.footer is None and [r.outcome for r in data.records] == ["skip"] * 3
    assert_nothing_left(tmp_path, run.temp)


def wait_for(path: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


# -- a harness killed outright --------------------------------------------------------


@pytest.mark.slow
def test_the_next_run_stops_what_a_killed_harness_left_and_removes_its_folder(tmp_path):
    """SIGKILL to the harness cleans nothing; the next run finds the folder, stops the group, removes both."""
    attack = r'''
def run(seq, n):
    if n == 0:
        grandchild()
        with open(PIDS + ".hung", "w"):
            pass
        time.sleep(120)  # deaf to the end of stdin: it outlives the harness
    skip(seq)

serve(run)
'''
    killed = CliRun(tmp_path, candidate(tmp_path, attack), "--timeout", "60")
    process = killed.start()
    wait_for(tmp_path / "pids.hung")
    process.kill()
    process.communicate()
    left = pids(tmp_path)
    assert len(left) == 2 and all(running(pid) for pid in left)
    assert len(list(killed.temp.glob(f"{groups.WORKDIR_PREFIX}{process.pid}-*"))) == 1

    again = CliRun(tmp_path, candidate(tmp_path, attack), "--timeout", "60")
    assert again.run() == 1
    whole_report(again.report)
    assert_nothing_left(tmp_path, again.temp)


def test_a_stale_folder_is_removed_and_its_group_stopped_but_a_live_runs_folder_is_kept(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a harness that is gone (its pid is free)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    try:
        stale = tmp_path / f"{groups.WORKDIR_PREFIX}{dead.pid}-abcdefgh"
        stale.mkdir()
        (stale / "left-behind.txt").write_text("x")
        groups.record_owner(stale, sleeper.pid, harness=dead.pid)
        live = tmp_path / f"{groups.WORKDIR_PREFIX}{os.getppid()}-abcdefgh"  # the test runner's parent runs
        live.mkdir()
        unknown = tmp_path / f"{groups.WORKDIR_PREFIX}abcdefgh"  # not named after a pid: not ours to judge
        unknown.mkdir()

        assert groups.sweep_stale(tmp_path) == [stale]

        assert not stale.exists() and live.exists() and unknown.exists()
        assert sleeper.wait(timeout=5) == -signal.SIGTERM
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_stale_group_whose_pid_was_reused_is_left_alone(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    try:
        stale = tmp_path / f"{groups.WORKDIR_PREFIX}{dead.pid}-abcdefgh"
        stale.mkdir()
        groups.record_owner(stale, other.pid, harness=dead.pid)
        record = json.loads((stale / groups.OWNER_FILE).read_text())
        record["leader_started"] -= 1  # the group recorded started earlier: this is another process
        (stale / groups.OWNER_FILE).write_text(json.dumps(record))

        assert groups.sweep_stale(tmp_path) == [stale]
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


# -- in process: what a run keeps open -------------------------------------------------


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.slow
def test_restarts_leave_no_thread_no_pipe_and_no_process(tmp_path, monkeypatch):
    attack = r'''
def run(seq, n):
    if n % 2 == 0:  # every other request: start a process that holds the pipes, and exit
        grandchild()
        os._exit(3)
    skip(seq)

serve(run)
'''
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    options = certification.Options(candidate=candidate(tmp_path, attack), oracle="recorded",
                                    case_globs=["reward.parse::txt-*"], no_generate=True, broken_after=1000)
    threads, fds = threading.active_count(), open_fds()
    run = certification.certify(options, tmp_path / "report.jsonl")
    assert [r.outcome for r in run.records[:4]] == ["crash", "skip", "crash", "skip"]
    selected = len(reward_parse_ids("reward.parse::txt-*"))
    assert len(run.records) == selected and len(pids(tmp_path)) >= selected
    assert (threading.active_count(), open_fds()) == (threads, fds)
    assert_nothing_left(tmp_path, tmp_path)


# -- the stderr tail ----------------------------------------------------------------------


def test_the_stderr_tail_keeps_the_last_lines_each_cut_and_says_what_it_dropped():
    tail = StderrTail(lines=3, line_chars=10, total_chars=40)
    for chunk in (b"one\ntwo\nthr", b"ee\n" + b"L" * 100 + b"\nfive\nsix", b"teen"):
        tail.feed(chunk)
    size = len(b"one\ntwo\nthree\n" + b"L" * 100 + b"\nfive\nsixteen")
    assert tail.text().splitlines() == [
        f"[stderr: {size} bytes; 3 earlier line(s) not kept]",
        "LLLLLLLLLL… (a line of 100 bytes)",
        "five",
        "sixteen",  # the line being written, not yet ended
    ]


@pytest.mark.parametrize("data", [b"\xff" * 50_000, "é".encode() * 50_000, b"\r\n" * 50_000])
def test_the_stderr_tail_is_bounded_whatever_the_bytes(data):
    tail = StderrTail()
    for _ in range(20):
        tail.feed(data)
    assert len(tail.text()) < 40 * 1024


def test_a_flood_of_short_stderr_lines_is_counted_not_kept():
    tail = StderrTail(lines=5)
    for _ in range(100):
        tail.feed(b"spam\n" * 10_000)
    tail.feed(b"the end\n")
    lines = tail.text().splitlines()
    assert lines == [f"[stderr: {100 * 50_000 + 8} bytes; {1_000_001 - 5} earlier line(s) not kept]",
                     "spam", "spam", "spam", "spam", "the end"]
