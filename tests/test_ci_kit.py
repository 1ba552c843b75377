"""The CI kit: the composite GitHub Action (action.yml and its scripts in .github/action/), the pre-commit hooks and
the example workflow of docs/examples/. Offline: the scripts run against the recorded oracle."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from conformance import __version__
from tests import wrong_candidates

REPO = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
HOOKS = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
EXAMPLE = REPO / "docs" / "examples" / "runner-conformance.yml"
CI_DOC = REPO / "docs" / "ci.md"

INPUTS = {"candidate", "surfaces", "profile", "expectations", "oracle", "args", "version", "python-version",
          "setup-python", "cache", "oracle-environment", "report-dir", "site"}
OUTPUTS = {"report", "markdown", "junit", "badge", "verdict", "exit-code", "suite-version", "site"}
FORMATS = ("report", "markdown", "junit", "badge")
INPUT_REFERENCE = re.compile(r"\binputs\.([A-Za-z0-9_-]+)")
STEP_REFERENCE = re.compile(r"\bsteps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)")


def _steps() -> list[dict]:
    steps: list[dict] = ACTION["runs"]["steps"]
    return steps


def _expressions(node: object) -> list[str]:
    """Every string of the action's steps and outputs that GitHub evaluates or hands on: values and `if:`s."""
    if isinstance(node, dict):
        return [text for value in node.values() for text in _expressions(value)]
    if isinstance(node, list):
        return [text for value in node for text in _expressions(value)]
    return [node] if isinstance(node, str) else []


# -- action.yml ---------------------------------------------------------------------------------------------

def test_the_action_declares_its_inputs_and_outputs():
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["inputs"]) == INPUTS
    assert set(ACTION["outputs"]) == OUTPUTS
    # An input that overrides the config file when it is left out would fight the file: those it gives are empty.
    assert ACTION["inputs"]["candidate"]["required"] is False
    defaults = {name: spec.get("default") for name, spec in ACTION["inputs"].items()}
    assert defaults["candidate"] == defaults["profile"] == defaults["oracle"] == ""
    assert defaults["report-dir"] == "conformance-report"
    assert defaults["python-version"] == "3.12"
    assert defaults["surfaces"] == defaults["expectations"] == defaults["version"] == ""
    assert defaults["site"] == "false"
    assert defaults["oracle-environment"] == "auto"
    for name, spec in {**ACTION["inputs"], **ACTION["outputs"]}.items():
        assert spec.get("description"), name


def test_every_input_the_action_reads_is_declared_and_every_declared_one_is_read():
    read = {name for text in _expressions(ACTION["runs"]) for name in INPUT_REFERENCE.findall(text)}
    assert read == INPUTS


def test_no_run_step_pastes_an_expression_into_shell_text():
    runs = [step for step in _steps() if "run" in step]
    assert runs
    for step in runs:
        assert "${{" not in step["run"], step["name"]
        assert step["shell"] == "bash"
        # Inputs arrive as environment variables, evaluated by GitHub, never by the shell.
        for value in step.get("env", {}).values():
            assert re.fullmatch(r"\$\{\{ (inputs|steps)\.[A-Za-z0-9_.-]+ \}\}", value), value


def test_run_steps_call_scripts_the_repository_ships():
    for step in (step for step in _steps() if "run" in step):
        scripts = re.findall(r'"\$GITHUB_ACTION_PATH/([^"]+)"', step["run"])
        assert scripts, step["run"]
        for script in scripts:
            path = REPO / script
            assert path.is_file() and os.access(path, os.X_OK), script
            assert subprocess.run(["bash", "-n", str(path)]).returncode == 0, script


def test_step_and_output_references_name_existing_steps_and_outputs():
    ids = [step["id"] for step in _steps() if "id" in step]
    assert len(ids) == len(set(ids))
    for text in _expressions(ACTION["runs"]) + _expressions(ACTION["outputs"]):
        for step_id, _ in STEP_REFERENCE.findall(text):
            assert step_id in ids, text
    wired = {name: STEP_REFERENCE.search(spec["value"]) for name, spec in ACTION["outputs"].items()}
    assert all(wired.values()), wired
    # Each output is one the step's script writes (checked against the scripts below, by running them).
    assert {name: (m.group(1), m.group(2)) for name, m in wired.items() if m} == {
        **{name: ("certify", name) for name in (*FORMATS, "verdict", "exit-code")},
        "suite-version": ("install", "suite-version"),
        "site": ("site", "site"),
    }


ORACLE_STEPS = ("oracle-python", "oracle-cache", "restore", "prepare", "actions/cache/save")
NEEDED = "steps.install.outputs.oracle-needed == 'true'"


def _names(steps: list[dict]) -> list[str]:
    return [step.get("id") or step.get("uses", "").split("@")[0] for step in steps]


def test_when_needed_the_oracle_gets_a_cpython_312_and_is_cached_before_certify():
    steps = _steps()
    names = _names(steps)
    harness, install = names.index("actions/setup-python"), names.index("install")
    assert harness < install == harness + 1  # the harness's Python, then the suite: it says what is needed
    oracle_python = steps[names.index("oracle-python")]
    assert oracle_python["uses"].startswith("actions/setup-python@")
    assert str(oracle_python["with"]["python-version"]) == "3.12"
    assert oracle_python["with"]["update-environment"] is False
    python, key, restore, prepare, save, certify = (names.index(n) for n in (*ORACLE_STEPS, "certify"))
    assert install < python < key < restore < prepare < save < certify
    assert steps[restore]["with"] == steps[save]["with"] == {
        "path": "${{ steps.oracle-cache.outputs.cache-dir }}", "key": "${{ steps.oracle-cache.outputs.cache-key }}"}
    # The key names the interpreter: it is worked out with the one just set up.
    assert steps[key]["env"]["CONFORMANCE_ORACLE_PYTHON"] == "${{ steps.oracle-python.outputs.python-path }}"
    assert steps[certify]["env"]["CONFORMANCE_ORACLE_PYTHON"] == "${{ steps.oracle-python.outputs.python-path }}"


def test_a_run_the_recordings_answer_skips_every_oracle_step():
    steps = _steps()
    names = _names(steps)
    for name in ORACLE_STEPS:
        condition = " ".join(steps[names.index(name)]["if"].split())
        # Conjunctions only: the output being anything but 'true' turns the step off.
        assert NEEDED in condition and "||" not in condition, (name, condition)
    assert steps[names.index("oracle-python")]["if"] == f"inputs.setup-python == 'true' && {NEEDED}"
    for name in ("actions/setup-python", "install", "certify"):
        assert "oracle-needed" not in steps[names.index(name)].get("if", ""), name
    # What install.sh is asked with is what certify.sh is given.
    install, certify = (steps[names.index(n)]["env"] for n in ("install", "certify"))
    for name in ("CONFORMANCE_ORACLE", "CONFORMANCE_PROFILE", "CONFORMANCE_ARGS"):
        assert install[name] == certify[name], name
    assert install["CONFORMANCE_ORACLE_ENVIRONMENT"] == "${{ inputs.oracle-environment }}"


def test_the_site_is_built_after_certify_whatever_its_verdict_and_uploaded_for_pages():
    steps = _steps()
    names = _names(steps)
    certify, site, upload = (names.index(n) for n in ("certify", "site", "actions/upload-pages-artifact"))
    assert certify < site < upload == len(steps) - 1
    # A failed certify (a candidate that does not conform) still gets its site; a cancelled run does not.
    for step in (steps[site], steps[upload]):
        assert "!cancelled()" in step["if"] and "inputs.site == 'true'" in step["if"], step["if"]
        assert "always()" not in step["if"]
    assert "steps.site.outputs.site != ''" in steps[upload]["if"]
    assert steps[upload]["with"] == {"path": "${{ steps.site.outputs.site }}"}
    assert steps[site]["env"]["CONFORMANCE_REPORT"] == "${{ steps.certify.outputs.report }}"
    assert steps[site]["env"]["CONFORMANCE_REPORT_DIR"] == steps[certify]["env"]["CONFORMANCE_REPORT_DIR"]


# -- .github/action/certify.sh ---------------------------------------------------------------------------

def _environment(tmp_path: Path, **values: str) -> dict[str, str]:
    """The environment GitHub gives the certify step: the inputs as action.yml maps them, and the two files."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("GITHUB_", "CONFORMANCE_", "RUNNER_"))}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    (tmp_path / "github_output").write_text("")
    (tmp_path / "step_summary").write_text("")
    env["GITHUB_OUTPUT"] = str(tmp_path / "github_output")
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "step_summary")
    env.update(values)
    return env


def _mapped_names(step_id: str) -> set[str]:
    return set(next(step for step in _steps() if step.get("id") == step_id)["env"])


def _script(name: str, env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(REPO / ".github" / "action" / name), *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _outputs(tmp_path: Path) -> dict[str, str]:
    lines = (tmp_path / "github_output").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def _certify(tmp_path: Path, cwd: Path, **inputs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    values = {"CONFORMANCE_PROFILE": "ci", "CONFORMANCE_ORACLE": "recorded", **inputs}
    assert {name for name in values if name.startswith("CONFORMANCE_")} <= _mapped_names("certify")
    proc = _script("certify.sh", _environment(tmp_path, **values), cwd)
    return proc, _outputs(tmp_path)


def _lines(report: str) -> list[dict]:
    return [json.loads(line) for line in Path(report).read_text().splitlines()]


@pytest.mark.slow
def test_certify_script_on_a_conforming_candidate(tmp_path):
    work = tmp_path / "workspace"
    work.mkdir()
    proc, outputs = _certify(tmp_path, work, CONFORMANCE_CANDIDATE="reference",
                             CONFORMANCE_SURFACES="reward.parse", GITHUB_ACTIONS="true")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert set(outputs) == {*FORMATS, "verdict", "exit-code"}
    assert outputs["verdict"] == "conforms" and outputs["exit-code"] == "0"
    for name, file in zip(FORMATS, ("report.jsonl", "summary.md", "junit.xml", "badge.json"), strict=True):
        assert outputs[name] == str(work / "conformance-report" / file)  # report-dir's default, made absolute
        assert Path(outputs[name]).is_file(), name
    lines = _lines(outputs["report"])
    assert lines[0]["surfaces"] == ["reward.parse"] and lines[0]["oracle"]["spec"] == "recorded"
    assert lines[-1]["conforms"] is True
    assert json.loads(Path(outputs["badge"]).read_text())["color"] == "brightgreen"
    summary = (tmp_path / "step_summary").read_text()
    assert summary.startswith(Path(outputs["markdown"]).read_text())
    assert f"`reference {__version__}` conforms" in summary  # named by its handshake
    # What certify prints (the candidate's stderr tail among it) cannot act as a workflow command.
    token = re.search(r"^::stop-commands::(\S+)$", proc.stdout, re.M)
    assert token and f"\n::{token.group(1)}::\n" in proc.stdout
    assert proc.stdout.index("::stop-commands::") < proc.stdout.index(f"reference {__version__} (reference): conforms")


@pytest.mark.slow
def test_certify_script_on_a_wrong_candidate_fails_with_its_outputs_written(tmp_path):
    reports = tmp_path / "out"
    proc, outputs = _certify(tmp_path, REPO, CONFORMANCE_CANDIDATE="tests.wrong_candidates:empty_by_strip",
                             CONFORMANCE_SURFACES="reward.parse", CONFORMANCE_REPORT_DIR=str(reports))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert outputs["verdict"] == "does-not-conform" and outputs["exit-code"] == "1"
    for name in FORMATS:
        assert Path(outputs[name]).is_file() and Path(outputs[name]).parent == reports, name
    lines = _lines(outputs["report"])
    failed = [line["id"] for line in lines if line["type"] == "case" and line["outcome"] == "fail"]
    assert "reward.parse::json-whitespace-only" in failed
    assert json.loads(Path(outputs["badge"]).read_text())["color"] == "red"
    assert "does not conform" in (tmp_path / "step_summary").read_text()
    assert "::error title=harbor conformance::the candidate does not conform" in proc.stdout


@pytest.mark.slow
def test_certify_script_takes_surfaces_by_comma_space_or_newline_and_the_expectation_file(tmp_path, corpus):
    expectations = tmp_path / "conformance-expectations.yaml"
    caught = wrong_candidates.caught_by_strip(corpus)
    expectations.write_text(
        "divergences:\n"
        + "".join(f"- id: {case_id}\n  outcome: fail\n  classes: [error-type]\n  reason: strip()\n"
                  for case_id in caught))
    proc, outputs = _certify(tmp_path, REPO, CONFORMANCE_CANDIDATE="tests.wrong_candidates:empty_by_strip",
                             CONFORMANCE_SURFACES="reward.parse,\n  reason.normalize ",
                             CONFORMANCE_EXPECTATIONS=str(expectations),
                             CONFORMANCE_REPORT_DIR=str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = _lines(outputs["report"])
    assert sorted(lines[0]["surfaces"]) == ["reason.normalize", "reward.parse"]
    assert lines[-1]["outcomes"]["xfail"] == len(caught) and lines[-1]["conforms"] is True


@pytest.mark.slow
def test_certify_script_on_a_usage_error_exits_2_and_says_so(tmp_path):
    proc, outputs = _certify(tmp_path, tmp_path, CONFORMANCE_CANDIDATE="reference",
                             CONFORMANCE_SURFACES="no.such.surface")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "unknown surface 'no.such.surface'" in proc.stderr
    assert outputs["verdict"] == "error" and outputs["exit-code"] == "2"
    assert all(outputs[name] == "" for name in FORMATS)
    assert "certify exited 2" in (tmp_path / "step_summary").read_text()


def test_certify_script_without_a_candidate_refuses(tmp_path):
    proc = _script("certify.sh", _environment(tmp_path), tmp_path)
    assert proc.returncode == 2
    assert "no candidate given" in proc.stdout
    assert not (tmp_path / "conformance-report").exists()


@pytest.mark.slow
def test_certify_script_leaves_what_the_config_file_gives_to_it(tmp_path):
    """Inputs left empty give no option: the file's candidate, oracle, profile, surfaces and report path stand."""
    work = tmp_path / "workspace"
    work.mkdir()
    (work / "conformance.toml").write_text('candidate = "tests.wrong_candidates:empty_by_strip"\n'
                                           'oracle = "recorded"\nprofile = "dev"\nsurface = ["reward.parse"]\n'
                                           'report = "out/mine.jsonl"\n')
    env = _environment(tmp_path, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = _script("certify.sh", env, work)
    outputs = _outputs(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert outputs["report"] == str(work / "out" / "mine.jsonl")
    assert outputs["junit"] == str(work / "conformance-report" / "junit.xml")  # no path in the file
    assert "--profile" not in proc.stdout.splitlines()[0] and "--candidate" not in proc.stdout.splitlines()[0]
    head = _lines(outputs["report"])[0]
    assert head["candidate"]["spec"] == "tests.wrong_candidates:empty_by_strip"
    assert head["oracle"]["spec"] == "recorded" and head["surfaces"] == ["reward.parse"]
    # Given, an input wins over the file.
    proc = _script("certify.sh", {**env, "CONFORMANCE_CANDIDATE": "reference"}, work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # A broken file stops the step with its line.
    (work / "conformance.toml").write_text('oracle = "recorded"\ntimeout = 0\n')
    proc = _script("certify.sh", env, work)
    assert proc.returncode == 2 and "conformance.toml:2: timeout" in " ".join(proc.stderr.split())


@pytest.mark.slow
def test_a_report_left_by_an_earlier_run_is_not_taken_for_this_one(tmp_path):
    stale = tmp_path / "conformance-report" / "report.jsonl"
    stale.parent.mkdir()
    stale.write_text("{}\n")
    proc, outputs = _certify(tmp_path, tmp_path, CONFORMANCE_CANDIDATE="reference",
                             CONFORMANCE_SURFACES="no.such.surface")
    assert proc.returncode == 2 and outputs["report"] == "" and not stale.exists()


# -- .github/action/site.sh ---------------------------------------------------------------------------------

def _site(tmp_path: Path, cwd: Path, **values: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    assert {name for name in values if name.startswith("CONFORMANCE_")} <= _mapped_names("site")
    proc = _script("site.sh", _environment(tmp_path, **values), cwd)
    return proc, _outputs(tmp_path)


@pytest.mark.slow
def test_site_script_builds_the_site_of_a_failing_run(tmp_path):
    reports = tmp_path / "out"
    proc, outputs = _certify(tmp_path, REPO, CONFORMANCE_CANDIDATE="tests.wrong_candidates:empty_by_strip",
                             CONFORMANCE_SURFACES="reward.parse", CONFORMANCE_REPORT_DIR=str(reports))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    proc, site = _site(tmp_path, REPO, CONFORMANCE_REPORT=outputs["report"], CONFORMANCE_REPORT_DIR=str(reports))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert site == {"site": str(reports / "site")}
    page = (reports / "site" / "candidates" / "wrong-empty-by-strip.html").read_text()  # its handshake's name
    failed = [line["id"] for line in _lines(outputs["report"]) if line.get("outcome") == "fail"]
    assert failed and all(f'data-id="{case_id}"' in page for case_id in failed)
    assert (reports / "site" / "index.html").is_file() and (reports / "site" / "assets" / "site.js").is_file()


def test_site_script_without_a_report_builds_none_and_removes_an_earlier_one(tmp_path):
    earlier = tmp_path / "conformance-report" / "site"
    earlier.mkdir(parents=True)
    (earlier / "site.json").write_text("{}")
    proc, outputs = _site(tmp_path, tmp_path, CONFORMANCE_REPORT="")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs == {"site": ""} and not earlier.exists()


def test_site_script_fails_on_a_report_it_cannot_read(tmp_path):
    broken = tmp_path / "report.jsonl"
    broken.write_text("not json\n{}\n")
    proc, outputs = _site(tmp_path, tmp_path, CONFORMANCE_REPORT=str(broken))
    assert proc.returncode == 2 and outputs == {"site": ""}
    assert f"{broken}:1" in proc.stderr and "conformance site exited 2" in proc.stdout
    assert not (tmp_path / "conformance-report" / "site").exists()


# -- .github/action/install.sh and oracle.sh --------------------------------------------------------------

@pytest.mark.parametrize(("version", "requirement"), [
    ("latest", "harbor-conformance[pinned]"),
    ("0.2.0", "harbor-conformance[pinned]==0.2.0"),
    (">=0.2,<0.3", "harbor-conformance[pinned]>=0.2,<0.3"),
    ("==0.2.1", "harbor-conformance[pinned]==0.2.1"),
    ("installed", ""),
    ("./harbor-conformance", "./harbor-conformance"),
    ("dist/harbor_conformance-0.2.0-py3-none-any.whl", "dist/harbor_conformance-0.2.0-py3-none-any.whl"),
    ("git+https://github.com/harbor-conformance/harbor-conformance@main",
     "git+https://github.com/harbor-conformance/harbor-conformance@main"),
    ("harbor-conformance[test]==0.2.0", "harbor-conformance[test]==0.2.0"),
])
def test_install_script_turns_the_version_input_into_a_requirement(tmp_path, version, requirement):
    proc = _script("install.sh", _environment(tmp_path, CONFORMANCE_VERSION=version), tmp_path, "--print-requirement")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == requirement + "\n"


def test_install_script_by_default_installs_the_release_the_action_belongs_to(tmp_path):
    own = re.search(r'^__version__ = "(.+)"', (REPO / "conformance" / "__init__.py").read_text(), re.M).group(1)
    proc = _script("install.sh", _environment(tmp_path), tmp_path, "--print-requirement")
    assert proc.stdout == f"harbor-conformance[pinned]=={own}\n"  # with the Hypothesis the recorded inputs need


def _install(tmp_path: Path, **values: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    values = {"CONFORMANCE_VERSION": "installed", **values}
    assert {name for name in values if name.startswith("CONFORMANCE_")} <= _mapped_names("install")
    (tmp_path / "github_output").write_text("")
    proc = _script("install.sh", _environment(tmp_path, **values), tmp_path)
    return proc, _outputs(tmp_path)


@pytest.mark.slow
def test_install_script_says_the_recordings_answer_a_ci_run(tmp_path):
    proc, outputs = _install(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs == {"suite-version": metadata.version("harbor-conformance"), "oracle": "harbor==0.13.1",
                       "oracle-needed": "false"}
    assert "oracle environment not needed" in proc.stderr
    proc, outputs = _install(tmp_path, CONFORMANCE_ORACLE="recorded", CONFORMANCE_PROFILE="dev")
    assert proc.returncode == 0 and outputs["oracle"] == "recorded" and outputs["oracle-needed"] == "false"


# Each an install script run (three commands started): one in the offline tier, `recordings needed` itself is
# checked condition by condition in tests/test_recordings.py.
@pytest.mark.parametrize("values", [
    {"CONFORMANCE_PROFILE": "dev"},
    # split as certify.sh splits it
    pytest.param({"CONFORMANCE_ARGS": "--surface reward.parse\n --seed 7"}, marks=pytest.mark.slow),
    pytest.param({"CONFORMANCE_ORACLE": "harbor==0.25.0"}, marks=pytest.mark.slow),
    pytest.param({"CONFORMANCE_ORACLE_ENVIRONMENT": "always"}, marks=pytest.mark.slow),
])
def test_install_script_says_when_the_oracle_environment_is_needed(tmp_path, values):
    proc, outputs = _install(tmp_path, **values)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs["oracle-needed"] == "true"


def test_install_script_refuses_an_unknown_oracle_environment(tmp_path):
    proc, outputs = _install(tmp_path, CONFORMANCE_ORACLE_ENVIRONMENT="sometimes")
    assert proc.returncode == 2 and outputs == {}
    assert "'auto' or 'always'" in proc.stdout


def test_install_script_sets_the_oracle_up_when_the_suite_cannot_say(tmp_path):
    # A release from before `recordings needed`: its `conformance` knows no such command.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "conformance"
    fake.write_text('#!/bin/sh\ncase "$1" in --version) echo "harbor-conformance 0.1.0" ;; config) echo "" ;;\n'
                    '*) echo "No such command \'$1\'." >&2; exit 2 ;; esac\n')
    fake.chmod(0o755)
    env = _environment(tmp_path, CONFORMANCE_VERSION="installed")
    env["PATH"] = os.pathsep.join([str(bin_dir), env["PATH"]])
    proc = _script("install.sh", env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _outputs(tmp_path)["oracle-needed"] == "true"
    assert "::warning title=harbor conformance::cannot tell whether the run needs the oracle environment" in proc.stdout


@pytest.mark.slow
def test_cache_key_script_names_the_cache_folder_and_key(tmp_path):
    env = _environment(tmp_path, CONFORMANCE_ORACLE="harbor==0.13.1",
                       RUNNER_OS="Linux", RUNNER_ARCH="X64", HARBOR_CONFORMANCE_CACHE=str(tmp_path / "cache"))
    assert {"CONFORMANCE_ORACLE", "CONFORMANCE_ORACLE_PYTHON"} == _mapped_names("oracle-cache")
    proc = _script("cache_key.sh", env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outputs = _outputs(tmp_path)
    assert set(outputs) == {"cache-dir", "cache-key"}
    assert outputs["cache-dir"] == str(tmp_path / "cache" / "oracle-envs")
    key = outputs["cache-key"]
    suite = metadata.version("harbor-conformance")
    assert key.startswith(f"harbor-conformance-oracle-v1-Linux-X64-harbor-0.13.1-{suite}-py")
    assert not (tmp_path / "cache").exists()  # named, not made: no oracle environment is created here
    other = _script("cache_key.sh", {**env, "CONFORMANCE_ORACLE": "harbor==0.25.0"}, tmp_path)
    assert other.returncode == 0
    assert _outputs(tmp_path)["cache-key"] != key  # the second run's lines come last


def test_install_script_refuses_windows(tmp_path):
    proc = _script("install.sh", _environment(tmp_path, CONFORMANCE_VERSION="installed", RUNNER_OS="Windows"),
                   tmp_path)
    assert proc.returncode == 2
    assert "Linux and macOS only" in proc.stdout


def test_oracle_script_prepares_nothing_for_the_recorded_oracle(tmp_path):
    proc = _script("oracle.sh", _environment(tmp_path, CONFORMANCE_ORACLE="recorded"), tmp_path)
    assert proc.returncode == 0 and _outputs(tmp_path) == {"ready": "false"}


@pytest.mark.slow
def test_oracle_script_leaves_a_broken_oracle_to_certify(tmp_path):
    # A cache path that is a file: no environment can be found or made, and certify will say so (exit 2).
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    env = _environment(tmp_path, CONFORMANCE_ORACLE="harbor==0.13.1", HARBOR_CONFORMANCE_CACHE=str(blocked))
    proc = _script("oracle.sh", env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _outputs(tmp_path) == {"ready": "false"}
    assert "could not be prepared" in proc.stdout


# -- .pre-commit-hooks.yaml ---------------------------------------------------------------------------------

def _hook(hook_id: str) -> dict:
    return next(hook for hook in HOOKS if hook["id"] == hook_id)


def _cli(*words: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *words], capture_output=True, text=True, cwd=cwd)


def test_hooks_are_declared():
    assert [hook["id"] for hook in HOOKS] == ["conformance-cases-check", "conformance-expectations-check"]
    for hook in HOOKS:
        assert hook["language"] == "python" and hook["name"] and hook["entry"].startswith("conformance ")
        re.compile(hook["files"])


@pytest.mark.slow
@pytest.mark.parametrize("hook_id", ["conformance-cases-check", "conformance-expectations-check"])
def test_each_hook_entry_is_a_command_of_the_cli(hook_id):
    words = _hook(hook_id)["entry"].split()[1:]
    result = _cli(*words, "--help")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_the_cases_hook_checks_a_folder_once_and_passes_on_this_corpus():
    hook = _hook("conformance-cases-check")
    assert hook["pass_filenames"] is False
    files = re.compile(hook["files"])
    assert files.search("cases/reward.parse/reward_txt.yaml") and files.search("runner/cases/x/y.yml")
    assert files.search("cases/metric.compute/scripts/mean.py")
    assert not files.search("src/showcases.yaml") and not files.search("docs/cases.md")
    # As pre-commit runs it: the entry, then the hook's args, no file names.
    result = _cli(*hook["entry"].split()[1:], *hook["args"])
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_expectations_hook_gets_the_changed_expectation_files():
    hook = _hook("conformance-expectations-check")
    assert hook.get("pass_filenames", True) is True
    files = re.compile(hook["files"])
    for path in ("conformance-expectations.yaml", "ci/my-runner.conformance-expectations.yml",
                 "expectations/my-runner.yaml", "oracles/expectations/harbor-0.25.0.yaml"):
        assert files.search(path), path
    for path in ("cases/reward.parse/x.yaml", "expectations.md", "src/expectations.yaml", ".github/ci.yml"):
        assert not files.search(path), path


# -- docs/examples/runner-conformance.yml and docs/ci.md ----------------------------------------------------

def test_the_example_workflow_uses_the_action_and_keeps_the_report():
    workflow = yaml.safe_load(EXAMPLE.read_text())
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert {"push", "pull_request"} <= set(triggers)
    steps = workflow["jobs"]["conformance"]["steps"]
    uses = [step.get("uses", "") for step in steps]
    assert uses[0].startswith("actions/checkout@")
    action = next(step for step in steps if step.get("uses", "").startswith("harbor-conformance/"))
    assert action["uses"] == "harbor-conformance/harbor-conformance@v0"
    assert set(action["with"]) <= INPUTS and action["with"]["candidate"].startswith("exec:")
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert "always()" in upload["if"]
    assert upload["with"]["path"].rstrip("/") == ACTION["inputs"]["report-dir"]["default"]
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step
    badge = workflow["jobs"]["badge"]
    assert badge["needs"] == "conformance" and badge["permissions"] == {"contents": "write"}
    assert "badge.json" in badge["steps"][-1]["run"]


def test_every_action_name_in_the_docs_is_one_the_action_has():
    # The example and the guide name the action the same way, and only inputs and outputs it declares.
    text = CI_DOC.read_text()
    for name in INPUTS | OUTPUTS:
        assert f"`{name}`" in text, name
    assert "examples/runner-conformance.yml" in text
    for uses in re.findall(r"uses: (harbor-conformance/\S+)", text + EXAMPLE.read_text()):
        assert uses.startswith("harbor-conformance/harbor-conformance@"), uses
