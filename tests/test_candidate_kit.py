"""The candidate kit's working folder: the files an input names, as the current directory or, for handlers
answering at once, as a folder of their own that leaves the process's directory alone."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conformance.kit.candidate import Candidate, current_folder, in_folder, working_folder


def test_files_are_written_under_their_relative_names_and_cwd_is_restored():
    before = os.getcwd()
    with working_folder({"m.py": b"a", "sub/dir/n.py": b"\x00b"}) as folder:
        assert Path.cwd() == folder
        assert Path("m.py").read_bytes() == b"a" and Path("sub/dir/n.py").read_bytes() == b"\x00b"
    assert os.getcwd() == before and not folder.exists()


def test_a_folder_without_changing_directory_is_each_threads_own():
    """Two requests answered at once, each in its folder: neither moves the process, each finds its own files."""
    before = os.getcwd()
    both_inside = threading.Barrier(2, timeout=10)
    found: dict[str, bytes] = {}

    def answer(content: bytes) -> None:
        with working_folder({"m.py": content}, change_directory=False) as folder:
            both_inside.wait()  # the other thread is in its folder too
            assert current_folder() == folder and os.getcwd() == before
            found[content.decode()] = in_folder("m.py").read_bytes()
        assert current_folder() is None

    threads = [threading.Thread(target=answer, args=(content,)) for content in (b"one", b"two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == {"one": b"one", "two": b"two"}
    assert in_folder("m.py") == Path("m.py") and in_folder("/abs/m.py") == Path("/abs/m.py")


def test_the_same_files_get_the_same_folder_from_one_request_to_the_next(tmp_path, monkeypatch):
    """uv keeps a script's environment by the script's path: a folder named by its files (and by how many of
    them are in use at once) lets every run of one script find the environment the first one made."""
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the user's temporary folder is where they go
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    files = {"m.py": b"a", "sub/n.py": b"b"}
    with working_folder(files, change_directory=False) as first:
        with working_folder(dict(files), change_directory=False) as beside:  # the same files, at once
            assert beside != first
    with working_folder(dict(reversed(list(files.items()))), change_directory=False) as other_order:
        pass
    with working_folder(files, change_directory=False) as again:
        pass
    with working_folder({"m.py": b"A", "sub/n.py": b"b"}, change_directory=False) as changed:
        pass
    assert again == first and changed != first and other_order != first
    parent = first.parent
    assert parent.parent == tmp_path and parent.stat().st_mode & 0o777 == 0o700
    assert not first.exists() and list(parent.iterdir()) == []  # each removed when its request is answered


def test_a_folder_others_may_write_in_is_not_used(tmp_path, monkeypatch):
    """Where the folder of this user's working folders can be written by others (they could have made it, and
    what is in it), a random folder is used instead, as before names were stable."""
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the user's temporary folder is where they go
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    shared = tmp_path / f"conformance-files-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)
    with working_folder({"m.py": b"a"}, change_directory=False) as folder:
        assert folder.parent == tmp_path and folder.name.startswith("conformance-files-")
        assert in_folder("m.py").read_bytes() == b"a"
    assert list(shared.iterdir()) == []


def test_a_script_run_twice_from_the_same_files_has_one_uv_environment(tmp_path, monkeypatch):
    """Real uv, a script with inline metadata (no dependency, so nothing is fetched): run from three requests,
    two of the same files, it makes two environments in uv's cache, not three."""
    import subprocess

    from conformance.oracle.environments import script_environment

    environment = {**script_environment(), "UV_CACHE_DIR": str(tmp_path / "uv")}
    script = b"# /// script\n# dependencies = []\n# ///\nprint('ran')\n"
    for content in (script, script + b"# another\n", script):
        with working_folder({"m.py": content}, change_directory=False) as folder:
            done = subprocess.run(["uv", "run", "m.py"], cwd=folder, env=environment, capture_output=True,
                                  text=True, check=False)
            assert done.stdout == "ran\n", done.stderr
    assert len(list((tmp_path / "uv" / "environments-v2").iterdir())) == 2


def test_a_derived_candidate_answers_at_once_only_with_its_handlers_unchanged():
    base = Candidate("base", "1", concurrency=3)
    assert base.derive("same").concurrency == 3
    assert base.derive("changed", **{"reward.parse": lambda value: value}).concurrency == 1  # may chdir
    assert base.derive("said", concurrency=2, **{"reward.parse": lambda value: value}).concurrency == 2


def test_cwd_is_restored_when_the_body_raises():
    before = os.getcwd()
    with pytest.raises(RuntimeError), working_folder(None):
        raise RuntimeError("boom")
    assert os.getcwd() == before


@pytest.mark.parametrize("name", ["/abs.py", "../up.py", "a/../../up.py", ""])
def test_names_that_leave_the_folder_are_refused(name):
    before = os.getcwd()
    with pytest.raises(ValueError, match="relative"), working_folder({name: b"x"}):
        pass
    assert os.getcwd() == before


def test_distinct_keys_keeps_every_repeat_of_a_json_key():
    import json

    from conformance.kit.candidate import distinct_keys

    assert json.loads('{"nan": [0], "nan": [1], "nan": [2]}', object_pairs_hook=distinct_keys) == {
        "nan": [0], "nan (2)": [1], "nan (3)": [2]}
    # A repeat never overwrites a key that is already there under that name.
    assert json.loads('{"a": 1, "a (2)": 5, "a": 2}', object_pairs_hook=distinct_keys) == {
        "a": 1, "a (2)": 5, "a (3)": 2}


def _job(metrics: list[dict], scripts: dict[str, bytes] | None = None) -> dict:
    job: dict = {"agents": [{"name": "nop"}], "metrics": metrics,
                 "tasks": [{"name": "a", "trials": [{"reward_txt": b"1"}]}]}
    return job if scripts is None else {**job, "scripts": scripts}


def test_a_job_of_built_in_metrics_is_answered_without_a_folder(monkeypatch):
    from conformance.surfaces.job_result import reference as job_result

    def no_folder(files, **options):
        raise AssertionError("a folder was made")

    monkeypatch.setattr(job_result, "working_folder", no_folder)
    answer = job_result.answer(_job([{"type": "max"}, {"type": "mean", "kwargs": {}}]))
    assert answer["stats"]["evals"]["nop__adhoc"]["metrics"] == [{"max": 1.0}, {"mean": 1.0}]
    with pytest.raises(AssertionError, match="folder"):
        job_result.answer(_job([{"type": "max"}], scripts={"m.py": b""}))  # shipped files: a folder still


def test_a_uv_script_metric_runs_in_a_fresh_folder_not_the_current_one(tmp_path, monkeypatch):
    """A script of that name in the current folder is not found: the job's own folder holds only its scripts."""
    from conformance.surfaces.job_result import reference as job_result

    (tmp_path / "pass_rate.py").write_text("raise SystemExit(0)\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="not found"):
        job_result.answer(_job([{"type": "uv-script", "kwargs": {"script_path": "pass_rate.py"}}]))


def test_a_uv_script_inside_a_project_leaves_the_project_alone(tmp_path):
    """A working folder under a TMPDIR inside the user's project (a runner's checkout with its .venv): uv runs the
    script alone, where it would find the project around the script, replace its .venv with one of the oracle's
    Python (the suite may be running from it) and write a uv.lock into it."""
    import subprocess
    import sys

    from conformance.oracle.environments import script_environment
    from conformance.reference.uv_script import UvScriptMetric

    project = tmp_path / "runner"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "runner"\nversion = "0.1"\ndependencies = []\n')
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project / ".venv")], check=True)
    (project / ".venv" / "kept").write_text("the user's")
    script = project / "tmp" / "conformance-files-x" / "echo.py"
    script.parent.mkdir(parents=True)
    script.write_text("import argparse, json\n"
                      "p = argparse.ArgumentParser(); p.add_argument('-i'); p.add_argument('-o'); a = p.parse_args()\n"
                      "json.dump({'lines': open(a.i).read().split('\\n')}, open(a.o, 'w'))\n")
    assert script_environment()["UV_NO_PROJECT"] == "1"
    assert UvScriptMetric(script).compute([{"reward": 1}, None]) == {"lines": ['{"reward": 1}', "null", ""]}
    assert (project / ".venv" / "kept").read_text() == "the user's"
    assert not (project / "uv.lock").exists()


def test_a_uv_script_writes_the_bytecode_of_what_it_imports_where_the_process_says_not_to(tmp_path, monkeypatch):
    """A script's dependencies live in uv's environment, kept from run to run: without their bytecode every run
    compiles them again (numpy, 0.28 s a run against 0.11 s). Shown here with a module beside the script."""
    from conformance.oracle import environments
    from conformance.reference.uv_script import UvScriptMetric

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    environments.script_environment.cache_clear()
    (tmp_path / "helper.py").write_text("VALUE = 7\n")
    script = tmp_path / "metric.py"
    script.write_text("import argparse, json, sys\n"
                      "sys.path.insert(0, __import__('os').path.dirname(__file__))\n"
                      "import helper\n"
                      "p = argparse.ArgumentParser(); p.add_argument('-i'); p.add_argument('-o'); a = p.parse_args()\n"
                      "json.dump({'value': helper.VALUE, 'written': not sys.flags.dont_write_bytecode, "
                      "'to': helper.__cached__}, open(a.o, 'w'))\n")
    found = UvScriptMetric(script).compute([])
    assert (found["value"], found["written"]) == (7, True)
    assert Path(found["to"]).is_file()  # beside it, or under PYTHONPYCACHEPREFIX where that is set
    environments.script_environment.cache_clear()


# -- where short-lived folders go ----------------------------------------------------------


@pytest.fixture
def memory(tmp_path, monkeypatch):
    """A stand-in for /dev/shm (a folder of tmp_path) and the mount table that says what it is; no temporary
    folder named in the environment."""
    from conformance.kit import candidate

    folder = tmp_path / "shm"
    folder.mkdir()
    mounts = tmp_path / "mounts"
    monkeypatch.setattr(candidate, "MEMORY_FOLDER", str(folder))
    monkeypatch.setattr(candidate, "_MOUNTS", str(mounts))
    for name in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(name, raising=False)
    candidate._memory_backed.cache_clear()
    yield folder, mounts
    candidate._memory_backed.cache_clear()


@pytest.mark.parametrize(("table", "used"), [
    ("tmpfs {} tmpfs rw,nosuid,nodev 0 0", True),
    ("tmpfs {} tmpfs rw,nosuid,nodev,noexec 0 0", False),  # a program there could not be run
    ("tmpfs {} tmpfs ro,nosuid 0 0", False),
    ("/dev/vda {} ext4 rw,relatime 0 0", False),  # a disk: nothing gained
    ("tmpfs {} tmpfs rw 0 0\n/dev/vda {} ext4 rw 0 0", False),  # mounted over: the last mount is what is seen
    ("/dev/vda {} ext4 rw 0 0\ntmpfs {} tmpfs rw 0 0", True),
    ("tmpfs /elsewhere tmpfs rw 0 0", False),
])
def test_short_lived_folders_go_to_a_memory_backed_folder_only_when_it_is_one_to_use(memory, table, used):
    import tempfile

    from conformance.kit.candidate import scratch_folder

    folder, mounts = memory
    mounts.write_text(table.replace("{}", str(folder)) + "\n")
    assert scratch_folder() == (str(folder) if used else tempfile.gettempdir())


def test_a_memory_backed_folder_without_room_or_a_named_temporary_folder_is_not_used(memory, monkeypatch):
    import tempfile

    from conformance.kit import candidate

    folder, mounts = memory
    mounts.write_text(f"tmpfs {folder} tmpfs rw 0 0\n")
    assert candidate.scratch_folder() == str(folder)
    with working_folder({"m.py": b"x"}, change_directory=False) as made:
        assert made.parent.parent == folder  # conformance-files-UID/DIGEST-SLOT in it
    monkeypatch.setenv("TMPDIR", str(folder.parent))
    assert candidate.scratch_folder() == tempfile.gettempdir()  # the user's choice
    monkeypatch.delenv("TMPDIR")
    monkeypatch.setattr(candidate, "MEMORY_ROOM", 2**62)  # Docker's 64 MB /dev/shm, for one
    candidate._memory_backed.cache_clear()
    assert candidate.scratch_folder() == tempfile.gettempdir()


# -- folders a killed process left -----------------------------------------------------------

HOLDING = """
import sys, time
from conformance.kit.candidate import held_folder, working_folder
with working_folder({"m.py": sys.argv[1].encode()}, change_directory=False) as request, \\
        held_folder("harbor-oracle-") as workdir:
    print(request, workdir, flush=True)
    time.sleep(120)
"""
SWEEPING = """
from conformance.kit.candidate import working_folder
with working_folder({"other.py": b"x"}, change_directory=False):
    pass
"""


def _in_user_tmp(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the user's temporary folder is where they go
    env.pop("TEMP", None)
    env.pop("TMP", None)
    return env


def _holding(tmp_path: Path, content: str) -> tuple[subprocess.Popen[str], list[Path]]:
    process = subprocess.Popen([sys.executable, "-c", HOLDING, content], stdout=subprocess.PIPE, text=True,
                               env=_in_user_tmp(tmp_path))
    assert process.stdout is not None
    return process, [Path(name) for name in process.stdout.readline().split()]


def _age(folder: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(folder, (then, then))


def test_folders_a_killed_process_left_are_removed_by_the_next_process_and_no_live_ones(tmp_path):
    """Short-lived folders live in memory (/dev/shm): a process killed with SIGKILL cannot remove its own, and each
    would keep its share of memory until the machine restarts. The next process that makes one removes those
    that no living process holds, once they are older than STALE_AFTER."""
    from conformance.kit.candidate import STALE_AFTER

    killed, left = _holding(tmp_path, "killed")
    alive, held = _holding(tmp_path, "alive")
    try:
        killed.kill()
        killed.wait(timeout=30)
        assert all(folder.is_dir() for folder in [*left, *held])
        for folder in [*left, *held]:
            _age(folder, STALE_AFTER + 60)
        young = left[0].parent / "made-a-moment-ago"  # a folder just made, before its maker holds it
        young.mkdir()
        subprocess.run([sys.executable, "-c", SWEEPING], env=_in_user_tmp(tmp_path), check=True, timeout=60)
        assert [folder.exists() for folder in left] == [False, False]
        assert [folder.exists() for folder in held] == [True, True] and young.exists()
    finally:
        alive.kill()
        alive.wait(timeout=30)


def test_a_sweep_leaves_what_is_recent_held_or_not_a_folder(tmp_path):
    from conformance.kit.candidate import STALE_AFTER, _hold, _sweep

    stale, recent, held = tmp_path / "stale", tmp_path / "recent", tmp_path / "held"
    for folder in (stale, recent, held):
        (folder / "inside").mkdir(parents=True)
    (tmp_path / "a-file").write_bytes(b"")
    hold = _hold(held)
    try:
        for path in (stale, held, tmp_path / "a-file"):
            _age(path, STALE_AFTER + 1)
        assert _sweep(tmp_path) == [stale]
        assert sorted(path.name for path in tmp_path.iterdir()) == ["a-file", "held", "recent"]
        assert _sweep(tmp_path, now=time.time() + STALE_AFTER + 1) == [recent]
    finally:
        assert hold is not None
        os.close(hold)
    assert _sweep(tmp_path) == [held]
