"""conformance campaign: generator tasks on a Dask cluster for a wall-clock budget, merged into one report.

The campaigns run as the command runs them, in a process of their own with
the repository as working directory (their workers import the wrong
candidates from ``tests``). Each gets an environment variable of its own, so
that any process it left behind (a worker, an oracle, a candidate) can be
found afterwards by that mark.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conformance.campaign.plan import make_plan, parse_duration, task_seed
from conformance.connection.connectors import parse
from conformance.core import surfaces
from conformance.errors import UsageError
from conformance.report import markdown
from conformance.report.reader import read
from conformance.run import generate
from conformance.run.plan import Options
from tests import wrong_candidates
from tests.report_lines import footer_line, header_line

REPO = Path(__file__).resolve().parent.parent
MARK = "HARBOR_CONFORMANCE_CAMPAIGN_TEST"


def _marked(mark: str) -> list[str]:
    """The command lines of the live processes whose environment holds ``mark``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if f"{MARK}={mark}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue  # gone meanwhile, or not ours to read
    return found


def _environment(mark: str) -> dict[str, str]:
    return {**os.environ, MARK: mark, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO),
                                                                                   os.environ.get("PYTHONPATH")]))}


def _campaign(*args: str, mark: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", "campaign", *args], capture_output=True, text=True,
                          cwd=REPO, env=_environment(mark or uuid.uuid4().hex), timeout=timeout)


def _certify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", "certify", *args], capture_output=True, text=True,
                          cwd=REPO, env=_environment(uuid.uuid4().hex), timeout=120)


def _gone(mark: str, within: float = 10.0, kind: str = "") -> list[str]:
    """What still runs under ``mark`` (of the command lines holding ``kind``) after at most ``within`` seconds:
    a process stopped is given the time it takes to exit."""
    deadline = time.monotonic() + within
    while (left := [cmd for cmd in _marked(mark) if kind in cmd]) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


needs_proc = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds leftover processes in /proc")


# -- the plan: no process, no Dask -----------------------------------------------------------


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("30m", 1800), ("2h", 7200), ("1h30m", 5400),
                                                ("1.5h", 5400), (" 45S ", 45)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "90", "s", "5x", "30m1h", "1h1h", "0s", "-5s", "1 h"])
def test_what_is_no_duration(text):
    with pytest.raises(UsageError, match="duration"):
        parse_duration(text)


def _plan(**changes):
    given = {"candidate": parse("reference"), "oracle": parse("harbor==0.13.1"), "example_database": "db",
             "profile": "explore", **changes}
    campaign = {key: given.pop(key) for key in ("budget", "task_examples", "scheduler", "workers") if key in given}
    return make_plan(Options(**given), budget=campaign.pop("budget", 60.0), report=Path("r.jsonl"), **campaign)


def test_tasks_take_the_surfaces_in_turn_each_task_a_seed_of_its_own():
    plan = _plan(surfaces=["pass_at_k", "reward.parse"], seed=7, task_examples=30)
    first = [task for _, task in zip(range(6), plan.tasks(), strict=False)]
    one, other = [name for name in surfaces.SURFACES if name in ("pass_at_k", "reward.parse")]  # registry order
    assert [(t.surface, t.number) for t in first] == [
        (one, 0), (other, 0), (one, 1), (other, 1), (one, 2), (other, 2)]
    assert len({t.seed for t in first}) == 6 and {t.max_examples for t in first} == {30}
    again = [task for _, task in zip(range(6), _plan(surfaces=["pass_at_k", "reward.parse"], seed=7,
                                                          task_examples=30).tasks(), strict=False)]
    assert again == first  # the same base seed, the same tasks
    assert task_seed(8, "reward.parse", 0) != task_seed(7, "reward.parse", 0) != task_seed(7, "pass_at_k", 0)


def test_the_plan_defaults_explore_like_and_names_the_database_absolutely():
    plan = _plan()
    assert plan.profile.name == "explore" and plan.profile.target_ulps
    assert plan.generators and all(generate.PROFILES[plan.profile.name] for _ in plan.generators)
    assert Path(plan.connections.example_database).is_absolute()
    assert _plan(example_database="redis://localhost:6379").connections.example_database == "redis://localhost:6379"
    assert _plan(profile="ci").base_seed == 0


@pytest.mark.parametrize(("changes", "said"), [
    ({"oracle": None}, "live oracle"),
    ({"profile": "nightly"}, "unknown profile"),
    ({"surfaces": ["no.such"]}, "unknown surface"),
    ({"scheduler": "127.0.0.1:8786"}, "tcp://HOST"),
])
def test_a_campaign_that_cannot_start_as_asked(changes, said):
    with pytest.raises(UsageError, match=said):
        _plan(**changes)


# Each a command started; the plan's own refusals are checked in process above. One in the offline tier.
@pytest.mark.parametrize(("args", "said"), [
    (["--budget", "soon"], "--budget: a duration is written like 90s"),
    pytest.param(["--budget", "10s", "-c", "no-such-candidate"], "unknown candidate", marks=pytest.mark.slow),
    pytest.param(["--budget", "10s", "--scheduler", "localhost:8786"], "--scheduler takes a scheduler's address",
                 marks=pytest.mark.slow),
    pytest.param(["--budget", "10s", "--oracle", "recorded"], "need a live oracle", marks=pytest.mark.slow),
])
def test_usage_errors_before_anything_starts_exit_2_with_one_line(args, said):
    done = _campaign(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and said in errors[0], done.stderr


def test_a_campaign_report_says_so_in_its_summary_and_site(tmp_path):
    import json

    from conformance.site.collect import collect

    path = tmp_path / "campaign.jsonl"
    campaign = {"budget_seconds": 5400.0, "task_examples": 100, "cluster": "tcp://10.0.0.5:8786", "workers": 12,
                "example_database": "/shared/examples"}
    lines = [header_line(campaign=campaign, generation={"profile": "explore", "seed": 77, "max_examples": 100}),
             footer_line(conforms=True)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    text = markdown.summary(read(path))
    assert ("campaign: 5400s on `tcp://10.0.0.5:8786` of 12 worker(s), 100 examples a task, profile explore, "
            "base seed 77") in text
    assert "100 per surface" not in text  # a task's examples, not a surface's
    (facts,) = [page.facts for page in collect([path]).candidates]
    assert facts.generation == "a campaign of 5400s: profile explore, seed 77"


# -- campaigns against the live oracle ---------------------------------------------------------


@pytest.mark.slow
@needs_proc
@pytest.mark.usefixtures("harbor_env")
def test_a_campaign_finds_a_wrong_candidate_and_its_findings_replay_in_certify(tmp_path):
    report, database, mark = tmp_path / "campaign.jsonl", tmp_path / "examples", uuid.uuid4().hex
    name = "pass_at_1"
    surface, caught_as = wrong_candidates.CAUGHT_AS[name]
    candidate = f"tests.wrong_candidates:{name}"
    done = _campaign("-c", candidate, "-s", surface, "--budget", "15s", "--workers", "2", "--task-examples", "60",
                     "--report", str(report), "--example-database", str(database), mark=mark)
    assert done.returncode == 1, done.stdout + done.stderr
    assert _gone(mark) == [], "processes outlived the campaign"
    assert re.search(r"^dashboard: http://\S+/status$", done.stderr, re.M), done.stderr
    # The replay command is printed shell-quoted: pasted back, each word arrives whole.
    replay = re.search(r"^they replay first in: (.+)$", done.stdout, re.M)
    assert replay is not None, done.stdout
    assert shlex.split(replay.group(1)) == ["conformance", "certify", "-c", candidate, "--example-database",
                                            str(database.resolve())], replay.group(1)

    data = read(report)
    assert data.footer is not None and not data.footer.conforms and not data.truncated
    findings = [r for r in data.records if r.generated]
    ids = [r.id for r in findings]
    assert findings and len(ids) == len(set(ids)) == data.footer.findings
    assert caught_as in {m.cls for r in findings for m in r.mismatches}
    (line,) = data.generated
    tasks_run = [int(n) for n in re.findall(r"tcp://\S+ \((\d+)\)", _summary(done.stderr))]
    assert len(line.seed) == sum(tasks_run) >= 2  # every task's seed, its slice of examples and its inputs summed
    assert line.max_examples == 60 * len(line.seed) and line.inputs_run > 60
    assert sorted(line.divergences) == sorted(ids)
    # Later tasks replay the database first and find the same inputs again: merged, each is written once.
    found_per_task = [int(n) for n in re.findall(rf"{re.escape(surface)} #\d+ .*?: (\d+) finding\(s\)", done.stderr)]
    assert sum(found_per_task) > len(ids), done.stderr

    # Another seed, one input: only the database makes it find anything.
    def certify(*extra: str):
        return _certify("-c", candidate, "--no-cases", "-s", surface, "--profile", "ci", "--seed", "12345",
                        "--max-examples", "1", "--report", str(tmp_path / f"certify{len(extra)}.jsonl"), *extra)

    assert certify().returncode == 0
    replayed = certify("--example-database", str(database))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert {r.id for r in read(tmp_path / "certify2.jsonl").records if r.generated} & set(ids)


@pytest.mark.slow
@needs_proc
@pytest.mark.usefixtures("harbor_env")
def test_a_campaign_interrupted_leaves_a_valid_report_and_no_process(tmp_path):
    """While it runs, the report reads as an unfinished run with the findings so far; Ctrl-C (SIGINT to the
    terminal's whole process group) ends it at once, with nothing left running."""
    report, mark = tmp_path / "campaign.jsonl", uuid.uuid4().hex
    running = subprocess.Popen(
        [sys.executable, "-m", "conformance", "campaign", "-c", "tests.wrong_candidates:pass_at_1", "-s",
         "pass_at_k", "--budget", "5m", "--workers", "2", "--task-examples", "30", "--report", str(report)],
        cwd=REPO, env=_environment(mark), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (report.exists() and [r for r in read(report).records if r.generated]):
            assert running.poll() is None and time.monotonic() < deadline, running.communicate()
            time.sleep(0.5)
        so_far = read(report)
        assert so_far.header is not None and so_far.footer is None
        os.killpg(running.pid, signal.SIGINT)
        # Each worker's task stops at its next input and its oracle process is stopped: seconds on an idle machine
        # (5 s for the whole test), over a minute while the other CI worker runs whole ci certifications beside it.
        _, stderr = running.communicate(timeout=180)
    finally:
        if running.poll() is None:
            os.killpg(running.pid, signal.SIGKILL)
            running.wait()
    assert running.returncode == 130, stderr.decode()
    assert "interrupted: the findings so far are in" in stderr.decode()
    after = read(report)
    assert after.footer is None and not after.truncated
    assert {r.id for r in so_far.records} <= {r.id for r in after.records}
    assert _gone(mark) == []


def _summary(stderr: str) -> str:
    (line,) = [line for line in stderr.splitlines() if re.match(r"\d+ task\(s\) in \d+s", line)]
    return line


@pytest.mark.slow
@needs_proc
@pytest.mark.usefixtures("harbor_env")
def test_the_reference_conforms_through_a_short_campaign(tmp_path):
    report, mark = tmp_path / "campaign.jsonl", uuid.uuid4().hex
    done = _campaign("-s", "pass_at_k", "-s", "reason.normalize", "--budget", "8s", "--workers", "2",
                     "--report", str(report), mark=mark)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _gone(mark) == []
    data = read(report)
    assert data.footer.conforms and not [r for r in data.records if r.generated]
    campaign = data.header.campaign  # the header says a campaign wrote it, and how it was asked for
    assert (campaign.budget_seconds, campaign.cluster, campaign.workers, campaign.task_examples) == (8, "local", 2, 100)
    assert campaign.example_database == str((tmp_path / "campaign.examples").resolve())
    assert sorted(line.surface for line in data.generated) == ["pass_at_k", "reason.normalize"]
    assert all(line.inputs_run > 0 and not line.error for line in data.generated)
    assert (tmp_path / "campaign.examples").is_dir()  # the default database: beside the report


@pytest.mark.slow
@pytest.mark.usefixtures("harbor_env")
def test_an_unreachable_scheduler_is_a_usage_error(tmp_path):
    started = time.monotonic()
    done = _campaign("-s", "pass_at_k", "--budget", "10s", "--scheduler", f"tcp://127.0.0.1:{_free_port()}",
                     "--connect-timeout", "1", "--report", str(tmp_path / "r.jsonl"))
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "cannot connect" in errors[0], done.stderr
    assert time.monotonic() - started < 30


@pytest.mark.usefixtures("harbor_env")
def test_a_candidate_that_cannot_start_is_a_usage_error(tmp_path):
    done = _campaign("-c", "tests.no_such_module:candidate", "--budget", "10s", "--report", str(tmp_path / "r.jsonl"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot import 'tests.no_such_module'" in done.stderr
    assert "starting a local cluster" not in done.stderr  # refused before any worker started


def _started(argv: list[str], mark: str, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, cwd=REPO, env=_environment(mark), stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.slow
@needs_proc
@pytest.mark.usefixtures("harbor_env")
def test_a_campaign_on_a_running_cluster_uses_every_worker_and_leaves_them_no_connection(tmp_path):
    from distributed import Client

    port, cluster_mark = _free_port(), uuid.uuid4().hex
    address = f"tcp://127.0.0.1:{port}"
    scheduler = _started([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                          str(port), "--no-dashboard"], cluster_mark, tmp_path / "scheduler.log")
    workers: list[subprocess.Popen[bytes]] = []
    try:
        workers = [_started([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                             "--no-dashboard", "--name", f"w{i}"], cluster_mark, tmp_path / f"worker{i}.log")
                   for i in (1, 2)]
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=30)
            addresses = set(client.scheduler_info()["workers"])
        report = tmp_path / "campaign.jsonl"
        candidate = f"exec:{sys.executable} -m conformance.reference"
        done = _campaign("-c", candidate, "-s", "pass_at_k", "-s", "reason.normalize", "--budget", "10s",
                         "--task-examples", "40", "--scheduler", address, "--report", str(report))
        assert done.returncode == 0, done.stdout + done.stderr
        ran_on = dict(re.findall(r"(tcp://\S+) \((\d+)\)", _summary(done.stderr)))
        assert set(ran_on) == addresses, done.stderr  # both workers ran tasks
        assert sum(map(int, ran_on.values())) == sum(len(line.seed) for line in read(report).generated)
        campaign = read(report).header.campaign
        assert (campaign.budget_seconds, campaign.cluster, campaign.workers) == (10, address, 2)
        # The workers live on; the oracles and candidates they opened for the campaign do not.
        for kind in ("harbor_adapter", "conformance.reference"):
            assert _gone(cluster_mark, kind=kind) == [], kind
        assert all(w.poll() is None for w in workers)
    finally:
        for process in [*workers, scheduler]:
            _stop(process)
    assert _gone(cluster_mark) == []


STUCK = """
import subprocess, sys, time
from conformance.campaign import interrupt

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
ready = False
with interrupt.bounded(lambda: print("forced", flush=True), grace=float(sys.argv[1])):
    while True:  # a clean-up that never ends: every KeyboardInterrupt swallowed
        try:
            if not ready:
                ready = True
                print("ready", flush=True)
            time.sleep(10)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
"""


@pytest.mark.slow
@needs_proc
def test_an_interrupt_whose_clean_up_hangs_ends_by_force_with_nothing_left_running():
    mark = uuid.uuid4().hex
    stuck = subprocess.Popen([sys.executable, "-c", STUCK, "1.5"], stdout=subprocess.PIPE, text=True, cwd=REPO,
                             env=_environment(mark))
    try:
        assert stuck.stdout is not None
        assert stuck.stdout.readline() == "ready\n"  # its child started, the handlers set
        stuck.send_signal(signal.SIGINT)
        started = time.monotonic()
        out, _ = stuck.communicate(timeout=30)
    finally:
        if stuck.poll() is None:
            stuck.kill()
    assert stuck.returncode == 130 and out.split() == ["interrupted", "forced"]
    assert time.monotonic() - started < 20
    assert _gone(mark) == []  # the child it started was killed with it
