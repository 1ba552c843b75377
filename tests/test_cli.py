"""The command's own conduct: version, help, defaults shown, stdout kept for data, unknown names refused,
options a run would ignore said so."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from conformance import ORACLE_RELEASE, __version__
from conformance.cli import app
from conformance.core.surfaces import SURFACES


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed command in a process of its own: stdout and stderr apart, as a pipe sees them."""
    return subprocess.run([sys.executable, "-m", "conformance", *args], capture_output=True, text=True)


def test_version_names_the_suite_and_the_oracle():
    for flag in ("--version", "-V"):
        result = CliRunner().invoke(app, [flag])
        assert result.exit_code == 0
        assert __version__ in result.output and f"harbor=={ORACLE_RELEASE}" in result.output


@pytest.mark.parametrize("command", [[], ["certify"], ["cases"], ["cases", "list"], ["expectations", "update"]])
def test_h_is_help_everywhere(command):
    result = CliRunner().invoke(app, [*command, "-h"], prog_name="conformance")
    assert result.exit_code == 0 and f"Usage: {' '.join(['conformance', *command])} [OPTIONS]" in result.output


def test_help_shows_the_defaults_written_in_words():
    text = " ".join(CliRunner().invoke(app, ["certify", "--help"], env={"COLUMNS": "400"}).output.split())
    assert "[default: (reports/<candidate>.jsonl)]" in text
    assert "[default: (the profile's, or a fresh one)]" in text
    assert "Report outputs" in text  # the shared group of --markdown, --junit, --badge


@pytest.mark.parametrize("command", [
    ["certify", "--oracle", "recorded"], ["cases", "list"], ["cases", "record"], ["gate", "0.25.0"],
])
def test_an_unknown_surface_is_refused_with_the_list_of_surfaces(command):
    result = CliRunner().invoke(app, [*command, "--surface", "reward.pars"])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "unknown surface 'reward.pars'" in text and all(name in text for name in SURFACES)


def test_the_report_alone_on_stdout(tmp_path):
    done = run("certify", "-c", "reference", "--oracle", "recorded", "-s", "reason.normalize", "--report", "-")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]  # every line of stdout is a report line
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "footer" and lines[-1]["conforms"] is True
    assert "conforms" in done.stderr and not (tmp_path / "-").exists()


def test_the_markdown_alone_on_stdout(tmp_path):
    done = run("certify", "-c", "reference", "--oracle", "recorded", "-s", "reason.normalize",
               "--report", str(tmp_path / "r.jsonl"), "--markdown", "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("## ✅ `reference` conforms") and "┃" not in done.stdout
    assert "conforms" in done.stderr  # the verdict and tables went to stderr
    summary = run("summary", str(tmp_path / "r.jsonl"), "--markdown", "-")
    assert summary.stdout == done.stdout


def test_the_report_and_the_markdown_cannot_both_be_stdout():
    result = CliRunner().invoke(app, ["certify", "--oracle", "recorded", "--report", "-", "--markdown", "-"])
    assert result.exit_code == 2 and "--report -" in result.output


def test_generation_options_a_run_would_ignore_are_said_to_be_ignored(tmp_path):
    done = run("certify", "-c", "reference", "--oracle", "recorded", "-s", "reason.normalize", "--seed", "3",
               "--max-examples", "5", "--report", str(tmp_path / "r.jsonl"))
    assert done.returncode == 0
    assert "--seed, --max-examples ignored: generated inputs need a live oracle" in done.stderr
    quiet = run("certify", "-c", "reference", "--oracle", "recorded", "-s", "reason.normalize",
                "--report", str(tmp_path / "r.jsonl"))
    assert "ignored" not in quiet.stderr
