"""A run killed midway: its report is read, summarised and resumed without repeating finished cases."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.corpus import cases
from conformance.report import reader as report
from conformance.run import resume
from conformance.run.certification import Options
from conformance.run.generate import PROFILES
from tests.report_lines import header_line
from tests.test_hostile_candidates import chaos, requests

GLOB = "reward.parse::txt-*"
SELECTED = sum(fnmatch.fnmatchcase(loaded.id, GLOB) for loaded in cases.load_corpus(cases.default_root()))


def certify_argv(candidate: str, path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "conformance", "certify", "-c", candidate, "--oracle", "recorded",
            "--case", GLOB, "--no-generate", "--report", str(path), *extra]


def case_lines(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(1 for line in path.read_text().splitlines() if line.startswith('{"type": "case"'))


@pytest.mark.slow
def test_a_killed_run_is_summarised_and_resumed_without_repeating_finished_cases(tmp_path):
    path = tmp_path / "report.jsonl"
    candidate = chaos(tmp_path, runs=["slow"] * 5)  # half a second for each of the first cases: time to kill it midway
    proc = subprocess.Popen(certify_argv(candidate, path), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while case_lines(path) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)  # the harness and its candidate, mid-run
    proc.wait()
    for folder in {line["cwd"] for line in requests(tmp_path)}:  # what SIGKILL left no one to remove
        shutil.rmtree(folder, ignore_errors=True)
    with path.open("a") as handle:
        handle.write('{"type": "case", "id": "reward.parse::tx')  # and a last line cut short
    interrupted = report.read(path)
    finished = len(interrupted.records)
    assert interrupted.footer is None and interrupted.truncated and 3 <= finished < SELECTED

    summary = subprocess.run([sys.executable, "-m", "conformance", "summary", str(path)],
                             capture_output=True, text=True)
    assert summary.returncode == 1 and "did not finish" in summary.stdout + summary.stderr

    (tmp_path / "log.jsonl").unlink()
    (tmp_path / "state.json").unlink()
    resumed = subprocess.run(certify_argv(candidate, path, "--resume"), capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    sent = [line for line in requests(tmp_path) if line["cmd"] == "run"]
    assert len(sent) == SELECTED - finished  # the finished cases were not sent again
    done = report.read(path)
    ids = [r.id for r in done.records]
    assert len(ids) == SELECTED and len(set(ids)) == SELECTED and done.footer.total == SELECTED and not done.truncated
    assert [r.id for r in done.records[:finished]] == [r.id for r in interrupted.records]
    resumed = [r.model_dump() for r in done.header.resumed]
    assert resumed == [{"started_at": interrupted.header.started_at, "kept": finished}]
    assert done.footer.conforms is True


@pytest.mark.slow
def test_sigterm_stops_the_candidate_removes_its_folder_and_leaves_an_unfinished_report(tmp_path):
    path = tmp_path / "report.jsonl"
    proc = subprocess.Popen(certify_argv(chaos(tmp_path, runs=["slow"] * 100), path),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while case_lines(path) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)  # as a cancelled CI job is stopped
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "--resume" in stderr
    data = report.read(path)
    assert data.footer is None and not data.truncated and len(data.records) >= 3
    seen = requests(tmp_path)
    assert seen[-1]["cmd"] == "stop"  # the candidate was told to stop ...
    assert not Path(seen[0]["cwd"]).exists()  # ... and its folder removed


@pytest.mark.slow
def test_resuming_a_finished_report_runs_nothing_again(tmp_path):
    path = tmp_path / "report.jsonl"
    candidate = chaos(tmp_path)
    assert subprocess.run(certify_argv(candidate, path), capture_output=True).returncode == 0
    (tmp_path / "log.jsonl").unlink()
    again = subprocess.run(certify_argv(candidate, path, "--resume"), capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert [line["cmd"] for line in requests(tmp_path)] == ["start", "stop"]
    assert report.read(path).footer.total == SELECTED


@pytest.mark.slow
def test_resume_refuses_the_report_of_another_run(tmp_path):
    path = tmp_path / "report.jsonl"
    assert subprocess.run(certify_argv(chaos(tmp_path), path), capture_output=True).returncode == 0
    before = path.read_bytes()
    other = subprocess.run(certify_argv("reference", path, "--resume"), capture_output=True, text=True)
    assert other.returncode == 2
    assert "another run" in other.stderr and "candidate" in other.stderr
    assert path.read_bytes() == before  # refused: the report is untouched


def _line(**fields) -> str:
    return json.dumps(fields)


GENERATED = {"profile": "ci", "seed": 7, "max_examples": 250, "inputs_run": 250}


def test_what_a_resumed_run_keeps(tmp_path):
    """Finished cases and finished generators are kept; cases not run and a generator cut off are not."""
    path = tmp_path / "r.jsonl"
    generation = {"profile": "ci", "seed": 7, "max_examples": 250}
    path.write_text("\n".join([
        json.dumps(header_line(candidate={"spec": "exec:c"}, oracle={"spec": "harbor==o"}, nan_policy="p",
                               generation=generation, started_at="t0")),
        _line(type="case", id="pass_at_k::a", surface="pass_at_k", outcome="pass"),
        _line(type="case", id="pass_at_k::b", surface="pass_at_k", outcome="broken"),
        _line(type="candidate", stage="start", outcome="timeout", detail=""),
        _line(type="case", id="reward.parse::gen-1", surface="reward.parse", outcome="fail", origin="generated"),
        _line(type="case", id="pass_at_k::gen-2", surface="pass_at_k", outcome="fail", origin="generated"),
        _line(type="generated", surface="pass_at_k", divergences=["pass_at_k::gen-2"], **GENERATED),
        _line(type="generated", surface="metric.compute", divergences=[], error="not run: broken", **GENERATED),
        '{"type": "case", "id": "pass_at_k::c", "surf',
    ]) + "\n")
    options = Options(candidate="exec:c", oracle="harbor==o", profile="ci")
    kept = resume.resumable(path, options, PROFILES["ci"], "p", lambda message: None)
    assert [(line.type, getattr(line, "id", line.surface)) for line in kept.kept] == [
        ("case", "pass_at_k::a"), ("case", "pass_at_k::gen-2"), ("generated", "pass_at_k")]
    assert kept.cases == {"pass_at_k::a"} and kept.generated == {"pass_at_k"} and kept.seed == 7
    assert [run.model_dump() for run in kept.history] == [{"started_at": "t0", "kept": 3}]


def test_a_missing_report_is_a_fresh_start(tmp_path):
    kept = resume.resumable(tmp_path / "none.jsonl", Options(), PROFILES["ci"], "p", lambda message: None)
    assert kept.kept == [] and kept.seed is None
