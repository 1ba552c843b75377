"""The answers and ci inputs that ship with the suite (oracles/recordings/): a conforming candidate's ci run on a fresh
machine needs no oracle environment, a diverging one still reports what it found when none can be made, and a stale
recording is neither used nor let through lint.

These tests start no oracle: tests/conftest.py fails any test that asks for an oracle environment, which is the
evidence that none was needed.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance import ORACLE_RELEASE
from conformance.cli import app
from conformance.oracle import answers, environments, recordings
from conformance.report.reader import read
from conformance.run import certification, recording, stored_inputs

REPO = Path(__file__).resolve().parent.parent
ORACLE = f"harbor=={ORACLE_RELEASE}"
SURFACES = ["reward.parse", "pass_at_k"]


@pytest.fixture
def fresh(tmp_path, monkeypatch) -> Path:
    """A machine that has run nothing: empty answer cache and input store."""
    monkeypatch.setenv(answers.FOLDER_ENV, str(tmp_path / "answers"))
    monkeypatch.setenv(stored_inputs.FOLDER_ENV, str(tmp_path / "inputs"))
    return tmp_path


def _certify(folder: Path, candidate: str, name: str = "run", surfaces: list[str] = SURFACES
             ) -> tuple[certification.Run, object]:
    report = folder / f"{name}.jsonl"
    run = certification.certify(certification.Options(candidate=candidate, oracle=ORACLE, surfaces=surfaces,
                                                      profile="ci"), report)
    return run, read(report)


def test_the_shipped_recording_applies_as_it_is():
    assert recording.problems() == []
    assert recordings.load(ORACLE_RELEASE) is not None


@pytest.mark.slow
def test_a_conforming_ci_run_on_a_fresh_machine_asks_no_oracle(fresh):
    run, data = _certify(fresh, "reference")
    assert run.conforms
    footer = data.footer
    asked = footer.total + sum(line.inputs_run for line in data.generated)
    assert footer.recorded_answers == asked > 1000, "every answer from the recordings"
    assert footer.cached_answers == 0
    assert footer.recorded_inputs == len(SURFACES), "every generator's inputs sent, none drawn"
    assert all(line.replayed == line.inputs_run > 0 for line in data.generated)


def test_the_pinned_hypothesis_is_the_one_the_inputs_were_drawn_with():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (pin,) = extras["pinned"]
    header = recordings.read_header(recordings.path(ORACLE_RELEASE))
    assert header is not None and pin == f"hypothesis=={header.hypothesis}"
    assert "harbor-conformance[pinned]" in extras["test"]


@pytest.mark.slow
def test_a_divergence_without_an_oracle_environment_is_reported_with_what_to_install(fresh, monkeypatch):
    def no_python(harbor_version: str, log: object = None) -> answers.Identity:
        raise environments.OracleSetupError("the oracle needs CPython 3.12 and none was found")

    monkeypatch.setattr(answers, "identity", no_python)
    run, data = _certify(fresh, "tests.wrong_candidates:pass_at_1", surfaces=["pass_at_k"])
    assert not run.conforms
    findings = [r for r in data.records if r.generated]
    assert findings and all(r.outcome == "fail" for r in findings), "divergences, none of them the oracle's"
    (line,) = [g for g in data.generated if g.surface == "pass_at_k"]
    assert line.unanswered > 0 and "CPython 3.12" in (line.unanswered_reason or "")
    warned = [w for w in data.tally().warnings() if w.surface == "pass_at_k"]
    assert [w.name for w in warned] == ["oracle-unanswered"]


def _stale_copy(tmp_path: Path, monkeypatch, **changes: object) -> Path:
    copy = tmp_path / "oracles"
    shutil.copytree(recordings.folder(), copy / recordings.FOLDER)
    file = copy / recordings.FOLDER / f"harbor-{ORACLE_RELEASE}.jsonl"
    lines = file.read_text().splitlines(keepends=True)
    lines[0] = json.dumps({**json.loads(lines[0]), **changes}) + "\n"
    file.write_text("".join(lines))
    monkeypatch.setattr(recordings, "folder", lambda: copy / recordings.FOLDER)
    recordings.load.cache_clear()
    return file


@pytest.mark.parametrize(("changes", "words"), [
    ({"adapter": "0" * 16}, "recorded with adapter 0000000000000000"),
    ({"lock_hash": "f" * 16}, "recorded with lock"),
    ({"protocol": 99}, "recorded with protocol 99"),
])
def test_a_recording_of_another_oracle_is_not_used_and_fails_the_check(tmp_path, monkeypatch, changes, words):
    file = _stale_copy(tmp_path, monkeypatch, **changes)
    try:
        assert recordings.load(ORACLE_RELEASE) is None
        result = CliRunner().invoke(app, ["recordings", "check"])
        assert result.exit_code == 1
        assert words in result.output and str(file) in " ".join(result.output.split())
    finally:
        recordings.load.cache_clear()


def test_inputs_drawn_with_other_strategy_code_fail_the_check(monkeypatch):
    monkeypatch.setattr(stored_inputs, "__version__", "another")
    stored_inputs.strategy_fingerprint.cache_clear()
    try:
        found = recording.problems()
    finally:
        stored_inputs.strategy_fingerprint.cache_clear()
    assert len(found) == len([p for p in found if "no ci inputs recorded" in p]) > 0
    assert any(re.search(r"for reward\.parse with its strategy code", p) for p in found)


# -- does a run need the oracle environment? (`conformance recordings needed`, asked by the GitHub Action) ------

def _need(tmp_path: Path, *args: str, oracle: str | None = None, profile: str | None = None) -> recording.OracleNeed:
    return recording.oracle_environment(oracle, profile, list(args), where=tmp_path)


def test_a_ci_run_against_the_recorded_release_needs_no_oracle_environment(tmp_path):
    for found in (_need(tmp_path), _need(tmp_path, oracle=ORACLE, profile="ci"),
                  _need(tmp_path, "--surface", "reward.parse", "-k", "reward.parse::*", "--timeout-multiplier", "3",
                        "--validate-protocol", "--strict-warnings")):
        assert found.needed is False, found.reason
        assert "recordings answer" in found.reason


def test_the_recorded_oracle_never_needs_one(tmp_path):
    found = _need(tmp_path, "--seed", "3", "--no-oracle-cache", oracle="recorded", profile="dev")
    assert found.needed is False and "recorded oracle" in found.reason
    assert _need(tmp_path, "--oracle=recorded", oracle=ORACLE).needed is False  # the options certify is given last


def test_a_release_with_no_recording_needs_one(tmp_path):
    found = _need(tmp_path, oracle="harbor==0.25.0")
    assert found.needed is True and "harbor==0.25.0" in found.reason
    assert _need(tmp_path, oracle="exec:./my-oracle").needed is True


def test_a_stale_recording_needs_one(tmp_path, monkeypatch):
    _stale_copy(tmp_path, monkeypatch, adapter="0" * 16)
    try:
        found = _need(tmp_path)
    finally:
        recordings.load.cache_clear()
    assert found.needed is True and "recordings check" in found.reason


@pytest.mark.parametrize("args", [("--profile", "dev"), ("--profile=explore",)])
def test_a_profile_without_a_fixed_seed_needs_one(tmp_path, args):
    assert _need(tmp_path, profile="dev").needed is True
    found = _need(tmp_path, *args, profile="ci")  # given after --profile ci, as certify.sh puts them
    assert found.needed is True and "fresh seed" in found.reason


@pytest.mark.parametrize("args", [
    ("--seed", "3"), ("--seed=0",), ("--max-examples", "250"), ("--shard", "1/2"), ("--cases", "my-cases"),
    ("--no-oracle-cache",), ("--no-input-cache",), ("--example-database", "db"), ("--observations", "obs"),
    ("--oracle-processes", "2"),
])
def test_options_that_draw_or_ask_otherwise_need_one(tmp_path, args):
    found = _need(tmp_path, "--surface", "reward.parse", *args)
    assert found.needed is True
    assert args[0].split("=")[0] in found.reason


def test_the_config_file_is_read_as_certify_reads_it(tmp_path):
    config = tmp_path / "conformance.toml"
    config.write_text('profile = "dev"\n')
    assert _need(tmp_path).needed is True
    assert _need(tmp_path, profile="ci").needed is False  # an input given wins over the file
    config.write_text("no-oracle-cache = true\n")
    assert _need(tmp_path).needed is True
    assert _need(tmp_path, "--no-config").needed is False
    config.write_text("no-oracle-cache = false\nmax-examples = 9\n")
    found = _need(tmp_path)
    assert found.needed is True and "--max-examples" in found.reason and "--no-oracle-cache" not in found.reason
    other = tmp_path / "other.toml"
    other.write_text('oracle = "recorded"\n')
    assert _need(tmp_path, "--config", str(other)).needed is False


def test_cases_only_need_no_inputs(tmp_path):
    found = _need(tmp_path, "--no-generate", profile="dev")
    assert found.needed is False and "no generated inputs" in found.reason


def test_another_hypothesis_needs_one_and_says_to_pin_it(tmp_path, monkeypatch):
    monkeypatch.setattr(stored_inputs, "hypothesis_version", lambda: "6.0.0")
    found = _need(tmp_path)
    assert found.needed is True
    assert "6.0.0 is installed" in found.reason and "harbor-conformance[pinned]" in found.reason


def test_inputs_of_other_strategy_code_need_one(tmp_path, monkeypatch):
    monkeypatch.setattr(stored_inputs, "__version__", "another")
    stored_inputs.strategy_fingerprint.cache_clear()
    try:
        found = _need(tmp_path)
    finally:
        stored_inputs.strategy_fingerprint.cache_clear()
    assert found.needed is True and "strategy code" in found.reason


def test_the_command_prints_the_answer_for_github_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["recordings", "needed"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "needed=false\n"
    assert "not needed" in result.stderr
    result = CliRunner().invoke(app, ["recordings", "needed", "--oracle", ORACLE, "--", "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "needed=true\n" and "--seed" in result.stderr
