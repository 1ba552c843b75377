"""A setting given by hand (an environment variable, an option, a config file's key) that names a path which is not
there is an error naming the setting and the path, never passed over for a default."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli.app import app
from conformance.oracle import environments

VARIABLE = "HARBOR_CONFORMANCE_PYTHON"
RUNNING = "{}.{}".format(*sys.version_info[:2])
OTHER = "3.12" if RUNNING != "3.12" else "3.11"  # a series the running interpreter is not


@pytest.fixture
def fake_python(tmp_path, monkeypatch) -> Path:
    """A ``python3.12`` on an otherwise empty PATH that reports ``3.12``, no pyenv: what find_python would take
    were it to look past the interpreter set by hand."""
    folder = tmp_path / "bin"
    folder.mkdir()
    exe = folder / f"python{OTHER}"
    exe.write_text(f"#!/bin/sh\necho {OTHER}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    monkeypatch.delenv(VARIABLE, raising=False)
    return exe


def _refused(series: str = OTHER) -> str:
    with pytest.raises(environments.OracleSetupError) as info:
        environments.find_python(series)
    return str(info.value)


def test_unset_the_interpreter_is_looked_for(fake_python):
    assert environments.find_python(OTHER) == str(fake_python)


def test_a_missing_path_is_an_error_not_another_interpreter(fake_python, tmp_path, monkeypatch):
    missing = tmp_path / "gone" / "python3"
    monkeypatch.setenv(VARIABLE, str(missing))
    message = _refused()
    assert f"{VARIABLE} names {missing}, which does not exist" in message
    assert "Unset it" in message and f"python{OTHER}" in message


def test_an_interpreter_of_another_series_is_an_error_saying_what_it_reports(fake_python, monkeypatch):
    monkeypatch.setenv(VARIABLE, sys.executable)
    message = _refused()
    assert f"{VARIABLE} names {sys.executable}, which reports {RUNNING}" in message
    assert f"needs a CPython {OTHER}" in message


def test_a_file_that_is_no_program_is_an_error(fake_python, tmp_path, monkeypatch):
    plain = tmp_path / "python"
    plain.write_text("not a program\n")
    monkeypatch.setenv(VARIABLE, str(plain))
    assert f"{VARIABLE} names {plain}, which is not an executable file" in _refused()
    monkeypatch.setenv(VARIABLE, str(tmp_path))  # a folder
    assert f"{VARIABLE} names {tmp_path}, which is not an executable file" in _refused()


def test_a_command_name_is_looked_up_on_path(fake_python, monkeypatch):
    monkeypatch.setenv(VARIABLE, fake_python.name)
    assert environments.find_python(OTHER) == str(fake_python)
    monkeypatch.setenv(VARIABLE, "python-that-is-nowhere")
    assert f"{VARIABLE} names python-that-is-nowhere, which is no command on PATH" in _refused()


def test_the_candidates_environment_says_so_too(fake_python, tmp_path, monkeypatch):
    """Exec candidates and the oracle are started with script_environment: a wrong interpreter set by hand stops
    them, where one found gives UV_PYTHON and none found at all leaves it unset."""
    monkeypatch.setattr(environments, "PYTHON_SERIES", OTHER)
    monkeypatch.delenv("UV_PYTHON", raising=False)
    environments.script_environment.cache_clear()
    try:
        monkeypatch.setenv(VARIABLE, str(tmp_path / "gone"))
        with pytest.raises(environments.OracleSetupError, match=f"{VARIABLE} names .*gone, which does not exist"):
            environments.script_environment()
        monkeypatch.delenv(VARIABLE)
        assert environments.script_environment()["UV_PYTHON"] == str(fake_python)
        environments.script_environment.cache_clear()
        fake_python.unlink()
        assert "UV_PYTHON" not in environments.script_environment()
    finally:
        environments.script_environment.cache_clear()


# -- options naming a path to read ------------------------------------------------------------------------------


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


RECORDED = ("--candidate", "python:conformance.reference:Reference", "--oracle", "recorded", "--progress", "none")


@pytest.mark.parametrize("args, option", [
    (("certify", *RECORDED, "--cases", "{missing}"), "--cases"),
    (("certify", *RECORDED, "--expectations", "{missing}"), "--expectations"),
    (("certify", *RECORDED, "--config", "{missing}"), "--config"),
    (("smoke", "--candidate", "exec:true", "--cases", "{missing}"), "--cases"),
    (("cases", "list", "--cases", "{missing}"), "--cases"),
    (("promote", "r.jsonl", "--cases", "{missing}"), "--cases"),
    (("site", "r.jsonl", "--out", "site", "--cases", "{missing}"), "--cases"),
    (("repro", "r.jsonl", "--cases", "{missing}"), "--cases"),
    (("mutants", "--cases", "{missing}"), "--cases"),
    (("coverage", "--cases", "{missing}"), "--cases"),
    (("gate", "0.14.0", "--expectations", "{missing}"), "--expectations"),
    (("expectations", "check", "e.yaml", "--report", "{missing}"), "--report"),
    (("replay", "--example-database", "{missing}", "--candidate", "python:conformance.reference:Reference",
      "--oracle", "reference"), "--example-database"),
    (("config", "--config", "{missing}"), "--config"),
])
def test_a_missing_path_named_by_an_option_exits_2_naming_both(args, option, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "not-there"
    status, output = _run(*(arg.format(missing=missing) for arg in args))
    assert status == 2, output
    assert f"error: {option}: {missing}: no such" in " ".join(output.split()), output


def test_an_expectation_file_that_is_a_folder_is_refused(tmp_path):
    status, output = _run("certify", *RECORDED, "--expectations", str(tmp_path))
    assert status == 2 and f"--expectations: {tmp_path}: not a file" in output, output


def test_a_config_files_missing_path_says_it_is_the_files(tmp_path, monkeypatch):
    (tmp_path / "conformance.toml").write_text('cases = "corpus"\n')
    monkeypatch.chdir(tmp_path)
    status, output = _run("certify", *RECORDED)
    assert status == 2, output
    assert f"--cases: {tmp_path / 'corpus'}: no such folder (the config file's value)" in output
