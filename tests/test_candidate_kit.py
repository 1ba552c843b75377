"""The candidate kit's working folder: the files an input names, as the current directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.kit.candidate import working_folder


def test_files_are_written_under_their_relative_names_and_cwd_is_restored():
    before = os.getcwd()
    with working_folder({"m.py": b"a", "sub/dir/n.py": b"\x00b"}) as folder:
        assert Path.cwd() == folder
        assert Path("m.py").read_bytes() == b"a" and Path("sub/dir/n.py").read_bytes() == b"\x00b"
    assert os.getcwd() == before and not folder.exists()


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

    def no_folder(files):
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
