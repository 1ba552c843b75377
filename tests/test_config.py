"""The config file: where it is found, what it gives certify, smoke and the pytest plugin, what it refuses and how
it says so, its published schema, and that its keys are the declared run options.

Runs offline: the recorded oracle, the reference and a wrong candidate from tests/wrong_candidates.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import hypothesis  # noqa: F401 - see below
import jsonschema
import pytest
import typer
from typer.testing import CliRunner

import conformance.pytest_plugin.session  # noqa: F401 - see below
import tests.wrong_candidates  # noqa: F401 - see below
from conformance.cli import app
from conformance.report.reader import read
from conformance.run import config
from conformance.run.flags import FLAGS

pytest_plugins = ["pytester"]
# pytester takes out of sys.modules what each run it makes imports: the modules every run imports are imported
# here once (as tests/test_pytest_plugin.py does), not once a run.

REPO = Path(__file__).resolve().parent.parent
WRONG = "tests.wrong_candidates:txt_before_json"  # reads reward.txt before reward.json: fails precedence cases
PRECEDENCE = "reward.parse/precedence.yaml"
SCHEMA = json.loads((REPO / "conformance" / "schemas" / "config.json").read_text())
# A run that needs no harbor and is quick: the recorded results of one case file.
OFFLINE = 'oracle = "recorded"\ncases = "corpus"\nprogress = "none"\n'


def _corpus(folder: Path) -> None:
    """One case file of the shipped corpus, as the corpus folder ``corpus`` beside a config file."""
    target = folder / "corpus" / PRECEDENCE
    target.parent.mkdir(parents=True)
    target.write_bytes((REPO / "cases" / PRECEDENCE).read_bytes())


def _certify(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["certify", *args])
    return result.exit_code, result.output


# -- where it is found ------------------------------------------------------------------------------------------


def test_found_in_the_current_folder_or_the_nearest_parent(tmp_path):
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert config.find(deep) is None
    (tmp_path / "conformance.toml").write_text("timeout = 3\n")
    assert config.find(deep) == tmp_path / "conformance.toml"
    (tmp_path / "a" / "conformance.toml").write_text("timeout = 4\n")
    assert config.find(deep) == tmp_path / "a" / "conformance.toml"
    assert config.find(tmp_path) == tmp_path / "conformance.toml"


def test_a_pyproject_counts_only_with_its_table_and_conformance_toml_wins(tmp_path):
    (tmp_path / "conformance.toml").write_text("timeout = 3\n")
    inner = tmp_path / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert config.find(inner) == tmp_path / "conformance.toml"  # no [tool.conformance]: the search goes on
    (inner / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.conformance]\ntimeout = 7\n")
    assert config.find(inner) == inner / "pyproject.toml"
    assert config.load(inner / "pyproject.toml").value("timeout") == 7
    (inner / "conformance.toml").write_text("timeout = 9\n")
    assert config.find(inner) == inner / "conformance.toml"


def test_the_search_stops_at_the_top_of_a_repository(tmp_path):
    (tmp_path / "conformance.toml").write_text("timeout = 3\n")
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / ".git").mkdir()
    assert config.find(repo / "src") is None
    (repo / "conformance.toml").write_text("timeout = 4\n")
    assert config.find(repo / "src") == repo / "conformance.toml"


# -- certify and smoke ------------------------------------------------------------------------------------------


def test_certify_with_no_option_runs_what_the_file_says(tmp_path, monkeypatch):
    _corpus(tmp_path)
    (tmp_path / "conformance.toml").write_text(f'candidate = "{WRONG}"\n{OFFLINE}report = "out/wrong.jsonl"\n'
                                               'markdown = "out/summary.md"\n')
    work = tmp_path / "sub"
    work.mkdir()
    monkeypatch.chdir(work)  # found from a subfolder; its paths are the file's folder's
    status, output = _certify()
    assert status == 1, output  # the wrong candidate fails precedence cases
    assert f"config: {tmp_path / 'conformance.toml'}" in output
    head = read(tmp_path / "out" / "wrong.jsonl").header
    assert head.candidate.spec == WRONG and head.oracle.spec == "recorded"
    assert head.cases_root == str(tmp_path / "corpus")
    assert (tmp_path / "out" / "summary.md").is_file()
    assert not (work / "out").exists()


def test_the_command_line_overrides_the_file(tmp_path, monkeypatch):
    _corpus(tmp_path)
    (tmp_path / "conformance.toml").write_text(f'candidate = "{WRONG}"\n{OFFLINE}report = "file.jsonl"\n')
    monkeypatch.chdir(tmp_path)
    status, output = _certify("--candidate", "reference", "--report", "given.jsonl")
    assert status == 0, output
    assert read(tmp_path / "given.jsonl").header.candidate.spec == "reference"
    assert not (tmp_path / "file.jsonl").exists()


def test_no_config_ignores_the_file_and_config_names_one(tmp_path, monkeypatch):
    _corpus(tmp_path)
    (tmp_path / "conformance.toml").write_text('timeout = "not a number"\n')
    monkeypatch.chdir(tmp_path)
    status, output = _certify("--no-config", "--oracle", "recorded", "--cases", "corpus", "--progress", "none",
                              "--report", "plain.jsonl")
    assert status == 0, output
    assert "config:" not in output
    elsewhere = tmp_path / "ci" / "run.toml"  # any name, anywhere: paths relative to its own folder
    elsewhere.parent.mkdir()
    elsewhere.write_text(f'candidate = "{WRONG}"\noracle = "recorded"\ncases = "../corpus"\nprogress = "none"\n'
                         'report = "named.jsonl"\n')
    status, output = _certify("--config", str(elsewhere))
    assert status == 1, output
    assert read(tmp_path / "ci" / "named.jsonl").header.candidate.spec == WRONG
    status, output = _certify("--config", str(tmp_path / "missing.toml"))
    assert status == 2 and "missing.toml: no such config file" in output


def test_smoke_takes_its_candidate_from_the_file(tmp_path, monkeypatch):
    (tmp_path / "conformance.toml").write_text(f'candidate = "{WRONG}"\n')
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["smoke"])
    assert f"{WRONG}: speaks the protocol" in result.output, result.output
    assert CliRunner().invoke(app, ["smoke", "--no-config"]).exit_code == 2  # no candidate at all


def test_config_says_which_file_and_what_it_gives(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.conformance]\nreport = "r/x.jsonl"\nsurface = ["pass_at_k"]\n')
    monkeypatch.chdir(tmp_path)
    shown = CliRunner().invoke(app, ["config"]).output
    assert f"# {tmp_path / 'pyproject.toml'}" in shown and 'surface = ["pass_at_k"]' in shown
    assert CliRunner().invoke(app, ["config", "report"]).output.strip() == str(tmp_path / "r" / "x.jsonl")
    assert CliRunner().invoke(app, ["config", "profile"]).output.strip() == ""
    assert CliRunner().invoke(app, ["config", "nope"]).exit_code == 2


def test_config_as_shell_assignments_survives_eval_whatever_the_values_hold(tmp_path):
    """What the Action's script evals: every key once, a value with quotes, `$(...)` and a newline kept as it is."""
    import subprocess
    import sys

    candidate = "exec:./run 'a b' \"$(touch pwned)\" `id`"
    (tmp_path / "conformance.toml").write_text(
        f"candidate = {json.dumps(candidate)}\nsurface = [\"pass_at_k\", \"reward.parse\"]\n")
    script = ('eval "$(' + f"{sys.executable} -m conformance config --shell" + ')" && '
              'printf "%s|" "$file_candidate" "$file_surface" "$file_profile" "$file_timeout_multiplier"')
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{candidate}|pass_at_k\nreward.parse|||"
    assert not (tmp_path / "pwned").exists()


# -- what it refuses --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "line", "key", "problem"), [
    ('oracle = "recorded"\n\ntimout = 3\n', 3, "timout", "unknown key (did you mean 'timeout'?)"),
    ('oracle = "recorded"\ntimeout_multiplier = 3\n', 2, "timeout_multiplier",
     "unknown key (did you mean 'timeout-multiplier'?)"),
    ('# one run\nresume = true\n', 2, "resume", "not taken by a config file"),
    ('oracle = "recorded"\nprofile = "ci"\ntimeout = 0\n', 3, "timeout", "greater than 0"),
    ('broken-after = "5"\n', 1, "broken-after", "valid integer"),
    ('seed = 1.5\n', 1, "seed", "valid integer"),
    ('progress = "loud"\n', 1, "progress", "'auto', 'live', 'lines' or 'none'"),
    ('\n\nsurface = ["reward.parse", "reward.pars"]\n', 3, "surface", "unknown surface 'reward.pars'"),
    ('profile = "fast"\n', 1, "profile", "unknown profile 'fast'"),
    ('oracle = "recorded"\ncandidate = "referense"\n', 2, "candidate", "unknown candidate 'referense'"),
])
def test_a_bad_key_or_value_exits_2_naming_file_line_and_key(tmp_path, monkeypatch, text, line, key, problem):
    (tmp_path / "conformance.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    status, output = _certify()
    message = " ".join(output.split())  # rich may wrap a long line
    assert status == 2, output
    assert f"{tmp_path / 'conformance.toml'}:{line}: {key}: " in message and problem in message, message
    assert "Traceback" not in output


def test_a_pyproject_error_names_the_line_in_its_table(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ntimeout = "ok here"\n\n[tool.conformance]\n'
                                             'oracle = "recorded"\ntimeout = -1\n')
    monkeypatch.chdir(tmp_path)
    status, output = _certify()
    assert status == 2 and f"{tmp_path / 'pyproject.toml'}:7: timeout: " in " ".join(output.split()), output


def test_several_problems_are_each_said(tmp_path, monkeypatch):
    (tmp_path / "conformance.toml").write_text("seed = -1\nmax-examples = 0\n")
    monkeypatch.chdir(tmp_path)
    status, output = _certify()
    assert status == 2 and "2 problems in" in output
    assert ":1: seed: " in output and ":2: max-examples: " in output


@pytest.mark.parametrize(("text", "line"), [
    ('oracle = "recorded"\ntimeout = = 3\n', 2),
    ('oracle = "recorded"\ntimeout = 3\ntimeout = 4\n', 3),
    ('oracle = "recorded"\nsurface = ["a",\n', 2),
])
def test_a_toml_syntax_error_names_file_and_line(tmp_path, monkeypatch, text, line):
    (tmp_path / "conformance.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    status, output = _certify()
    assert status == 2 and f"{tmp_path / 'conformance.toml'}:{line}: TOML syntax: " in " ".join(output.split())


# -- the pytest plugin ------------------------------------------------------------------------------------------


def _plugin_corpus(pytester: pytest.Pytester) -> None:
    target = pytester.path / "cases" / PRECEDENCE
    target.parent.mkdir(parents=True)
    target.write_bytes((REPO / "cases" / PRECEDENCE).read_bytes())


def test_the_plugin_reads_the_file_and_its_options_override_it(pytester):
    _plugin_corpus(pytester)
    (pytester.path / "conformance.toml").write_text('oracle = "recorded"\nreport = "reports/from-file.jsonl"\n'
                                                    'candidate = "tests.wrong_candidates:nothing_such"\n')
    # The file's candidate does not turn the plugin on, nor replace the one given.
    result = pytester.runpytest("cases", "--conformance-candidate", WRONG)
    assert result.ret == 1, result.stdout.str()
    head = read(pytester.path / "reports" / "from-file.jsonl").header
    assert head.oracle.spec == "recorded" and head.candidate.spec == WRONG
    result = pytester.runpytest("cases", "--conformance-candidate", "reference",
                                "--conformance-report", "given.jsonl")
    assert result.ret == 0, result.stdout.str()
    assert read(pytester.path / "given.jsonl").header.candidate.spec == "reference"
    # Without its candidate the plugin stays off, whatever the file says.
    assert pytester.runpytest("cases").ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_the_plugin_refuses_a_bad_file_naming_file_line_and_key(pytester):
    _plugin_corpus(pytester)
    (pytester.path / "conformance.toml").write_text('oracle = "recorded"\nmax-examples = 0\n')
    result = pytester.runpytest("cases", "--conformance-candidate", WRONG)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{pytester.path / 'conformance.toml'}:2: max-examples: *"])
    assert pytester.runpytest("cases", "--conformance-candidate", WRONG, "--conformance-no-config",
                              "--conformance-oracle", "recorded").ret == 1


# -- the schema and the declaration -----------------------------------------------------------------------------


def test_the_schema_takes_an_example_file_and_refuses_a_bad_one():
    import tomllib

    example = tomllib.loads(f'"$schema" = "conformance/schemas/config.json"\ncandidate = "exec:./bin/r"\n'
                            f'surface = ["reward.parse", "pass_at_k"]\ntimeout = 5\nno-oracle-cache = true\n'
                            f'{OFFLINE}junit = "out/junit.xml"\nseed = 3\n')
    jsonschema.validate(example, SCHEMA)
    for bad in ({"timout": 5}, {"timeout": "5"}, {"timeout": 0}, {"surface": "reward.parse"},
                {"progress": "loud"}, {"resume": True}, {"no-cases": "yes"}, {"seed": 1.5}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, SCHEMA)


def test_the_published_schema_is_the_models():
    assert SCHEMA == config.schema()


def test_every_declared_option_is_a_key_or_left_out_on_purpose():
    keys = set(SCHEMA["properties"]) - {config.SCHEMA_KEY}
    assert keys == {name for name, flag in FLAGS.items() if flag.in_file}
    assert {name for name, flag in FLAGS.items() if not flag.in_file} == {"resume", "shard", "config", "no-config"}
    for name, flag in FLAGS.items():
        if flag.in_file:
            assert SCHEMA["properties"][name]["description"] == flag.help
            assert (SCHEMA["properties"][name].get("type") == "array") == flag.repeatable, name


def test_every_option_of_the_commands_that_read_the_file_is_declared():
    """An option added to certify or smoke with typer alone would be no key: it must be declared in FLAGS."""
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    for name in ("certify", "smoke"):
        for param in commands[name].params:
            long = [opt[2:] for opt in param.opts if opt.startswith("--")]
            assert long == ["help"] or long[0] in FLAGS, f"{name} {long}: not declared in conformance.run.flags"


def test_the_progress_choices_are_the_commands():
    from conformance.cli.progress import ProgressMode

    assert FLAGS["progress"].choices == tuple(mode.value for mode in ProgressMode)
