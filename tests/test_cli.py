"""The command's own conduct: version, help, defaults shown, stdout kept for data, unknown names refused,
options a run would ignore said so."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance import ORACLE_RELEASE, __version__
from conformance.cli import app
from conformance.core.surfaces import SURFACES
from tests import wrong_candidates

CAND = {"spec": "exec:/ci/a/cand", "implementation": {"name": "cand", "version": "2.0", "language": "go",
                                                   "surfaces": []}}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed command in a process of its own: stdout and stderr apart, as a pipe sees them."""
    return subprocess.run([sys.executable, "-m", "conformance", *args], capture_output=True, text=True)


def test_version_names_the_suite_and_the_oracle():
    for flag in ("--version", "-V"):
        result = CliRunner().invoke(app, [flag])
        assert result.exit_code == 0
        assert __version__ in result.output and f"harbor=={ORACLE_RELEASE}" in result.output


@pytest.mark.parametrize("command", [[], ["certify"], ["campaign"], ["cases"], ["cases", "list"],
                                     ["expectations", "update"], ["expectations", "check"]])
def test_h_is_help_everywhere(command):
    result = CliRunner().invoke(app, [*command, "-h"], prog_name="conformance")
    assert result.exit_code == 0 and f"Usage: {' '.join(['conformance', *command])} [OPTIONS]" in result.output


def test_help_shows_the_defaults_written_in_words():
    text = " ".join(CliRunner().invoke(app, ["certify", "--help"], env={"COLUMNS": "400"}).output.split())
    assert "[default: (reports/conformance-<name>-<version>.jsonl, named after the candidate's handshake" in text
    assert "[default: (the profile's, or a fresh one)]" in text
    assert "Report outputs" in text  # the shared group of --markdown, --junit, --badge


@pytest.mark.parametrize("command", [
    ["certify", "--oracle", "recorded"], ["cases", "list"], ["cases", "record"], ["gate", "0.25.0"],
    ["campaign", "--budget", "1m"],
])
def test_an_unknown_surface_is_refused_with_the_list_of_surfaces(command):
    result = CliRunner().invoke(app, [*command, "--surface", "reward.pars"])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "unknown surface 'reward.pars'" in text and all(name in text for name in SURFACES)


@pytest.mark.slow
def test_the_report_alone_on_stdout(tmp_path):
    done = run("certify", "-c", "reference", "--oracle", "recorded", "-s", "reason.normalize", "--report", "-")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]  # every line of stdout is a report line
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "footer" and lines[-1]["conforms"] is True
    assert "conforms" in done.stderr and not (tmp_path / "-").exists()


@pytest.mark.slow
def test_the_markdown_alone_on_stdout(tmp_path):
    done = run("certify", "-c", "reference", "--oracle", "recorded", "-s", "reason.normalize",
               "--report", str(tmp_path / "r.jsonl"), "--markdown", "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"## ✅ `reference {__version__}` conforms") and "┃" not in done.stdout
    assert "conforms" in done.stderr  # the verdict and tables went to stderr
    summary = run("summary", str(tmp_path / "r.jsonl"), "--markdown", "-")
    assert summary.stdout == done.stdout


def test_the_report_and_the_markdown_cannot_both_be_stdout():
    result = CliRunner().invoke(app, ["certify", "--oracle", "recorded", "--report", "-", "--markdown", "-"])
    assert result.exit_code == 2 and "--report -" in result.output


@pytest.mark.slow
def test_generation_options_a_run_would_ignore_are_said_to_be_ignored(tmp_path):
    done = run("certify", "-c", "reference", "--oracle", "recorded", "-s", "reason.normalize", "--seed", "3",
               "--max-examples", "5", "--report", str(tmp_path / "r.jsonl"))
    assert done.returncode == 0
    assert "--seed, --max-examples ignored: generated inputs need a live oracle" in done.stderr
    quiet = run("certify", "-c", "reference", "--oracle", "recorded", "-s", "reason.normalize",
                "--report", str(tmp_path / "r.jsonl"))
    assert "ignored" not in quiet.stderr


def _one_surface_only():
    """A candidate that answers reward.parse only, wrongly (``empty_by_strip``), and skips every other surface."""
    from conformance.kit import Candidate, SkipSurface
    from tests.wrong_candidates import empty_by_strip

    def decline(request):
        raise SkipSurface("not implemented yet")

    partial = Candidate("partial", "0.1")
    partial.handlers = {name: decline for name in SURFACES}
    partial.handlers["reward.parse"] = empty_by_strip.handlers["reward.parse"]
    return partial


one_surface_only = _one_surface_only()


@pytest.mark.slow
def test_failures_come_first_and_skips_are_counted_not_listed(tmp_path, corpus):
    total = len(corpus)
    parse = sum(loaded.case.surface == "reward.parse" for loaded in corpus)
    done = run("certify", "-c", "tests.test_cli:one_surface_only", "--oracle", "recorded",
               "--report", str(tmp_path / "r.jsonl"))
    assert done.returncode == 1
    caught = len(wrong_candidates.caught_by_strip(corpus))
    lines = done.stdout.splitlines()
    assert lines[0] == f"{caught} failing case(s), by surface and mismatch class:"
    assert lines[1] == f"reward.parse — error-type: {caught} case(s)"
    first = lines[2:7]
    assert first[0].strip().startswith("FAIL reward.parse::")
    assert first[1].strip().startswith("input:") and first[2].strip().startswith("oracle:    raises ")
    assert "candidate: raises RewardFileEmptyError (reason code harbor_reward_empty): Reward file is empty" in first[3]
    assert first[4].strip().startswith("error-type at $: oracle VerifierOutputParseError / candidate ")
    skipped = lines.index(f"{total - parse} case(s) skipped (they count against conformance):")
    assert skipped > max(i for i, line in enumerate(lines) if "FAIL " in line)
    evsys = sum(loaded.case.surface == "evsys.metric" for loaded in corpus)
    assert lines[skipped + 1] == f"  evsys.metric: {evsys} — not implemented yet"
    assert sum(" SKIP " in f" {line} " for line in lines) == 0  # no skipped case is listed one by one
    # stderr is no terminal here: plain progress lines, each failure as it happened, skips not listed.
    log = done.stderr.splitlines()
    assert log[:2] == ["starting the candidate, tests.test_cli:one_surface_only",
                       f"running {total} case(s) of 9 surface(s)"]
    fails = [i for i, line in enumerate(log) if line.startswith("FAIL reward.parse::")]
    assert len(fails) == caught
    assert max(fails) < log.index(f"reward.parse: {parse} case(s) done ({caught} fail, {parse - caught} pass)")
    evsys = sum(loaded.case.surface == "evsys.metric" for loaded in corpus)
    assert f"evsys.metric: {evsys} case(s) done ({evsys} skip)" in log
    assert not [line for line in log if line.startswith("SKIP")]


@pytest.mark.slow
def test_a_report_keeps_each_sides_exception_message_and_a_failing_cases_input(tmp_path, corpus):
    report = tmp_path / "r.jsonl"
    run("certify", "-c", "tests.test_cli:one_surface_only", "--oracle", "recorded", "-s", "reward.parse",
        "--report", str(report))
    lines = [json.loads(line) for line in report.read_text().splitlines() if '"type": "case"' in line]
    failing = [line for line in lines if line["outcome"] == "fail"]
    assert sorted(line["id"] for line in failing) == wrong_candidates.caught_by_strip(corpus)
    assert all("input" in line for line in failing)
    assert all(line["candidate"]["message"].startswith("Reward file is empty") for line in failing)
    assert not any("input" in line for line in lines if line["outcome"] == "pass")


def test_tables_written_to_a_log_are_not_cut_to_eighty_columns(tmp_path):
    """Written to no terminal (a CI log), a table keeps its headings and cells whole where 80 columns would cut
    them; COLUMNS, when set, still decides."""
    import os

    from tests.report_lines import footer_line, header_line

    seeds = [4043979850, 3688760769, 2421669724, 2215188691]
    generated = {"type": "generated", "surface": "multi_step.reward", "profile": "explore", "seed": seeds,
                 "max_examples": 400, "inputs_run": 123456, "divergences": []}
    report = tmp_path / "campaign.jsonl"
    report.write_text("".join(json.dumps(line) + "\n" for line in (
        header_line(surfaces=["multi_step.reward"], candidate=CAND), generated, footer_line(conforms=True))))
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}

    def summary(**extra: str) -> str:
        done = subprocess.run([sys.executable, "-m", "conformance", "summary", str(report)], capture_output=True,
                              text=True, env={**env, **extra}, timeout=120)
        return done.stdout + done.stderr

    text = summary()
    (heading,) = [line for line in text.splitlines() if "surface" in line and "seed" in line]
    assert "inputs run" in heading and "divergences" in heading and "…" not in heading, text
    assert "multi_step.reward" in text and "123456" in text and "4043979850, 3688760769, 2421669724, …" in text
    # As certify ends: the candidate's name and version, its spec beside them.
    assert text.splitlines()[-1] == ("cand 2.0 (exec:/ci/a/cand): conforms (0 generated divergence(s)); "
                                     f"report: {report}")
    assert "inputs run" not in summary(COLUMNS="60")  # a narrow terminal asked for: Rich fits the table to it


def test_a_command_printed_for_copy_and_paste_is_shell_quoted():
    import shlex

    from conformance.cli.console import command

    words = ["certify", "-c", "exec:/opt/my runner/bin/run --fast", "--example-database", "/tmp/it's $HOME"]
    printed = command(*words)
    assert printed.startswith("conformance certify -c '") and "$HOME'" in printed
    assert shlex.split(printed) == ["conformance", *words]  # pasted into a shell, each word arrives as it was
    assert command("promote", "reports/reference.jsonl") == "conformance promote reports/reference.jsonl"


# -- the report's default name ----------------------------------------------------------------------------------

GLOB = "reward.parse::txt-n*"  # a few cases, quick
HOSTILE = Path(__file__).resolve().parent / "hostile_reply_candidate.py"


def _certify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, list[Path]]:
    """certify in ``tmp_path``, without --report: its exit status, its verdict line, what is under reports/."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["certify", "--oracle", "recorded", "-k", GLOB, "--progress", "none", *args])
    verdict = [line for line in result.stdout.splitlines() if "; report: " in line]
    assert len(verdict) == 1, result.output
    return result.exit_code, verdict[0], sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())


@pytest.mark.slow
def test_the_default_report_is_named_after_the_candidate_s_handshake(tmp_path, monkeypatch):
    status, verdict, files = _certify(tmp_path, monkeypatch, "-c", "reference")
    named = Path("reports") / f"conformance-reference-{__version__}.jsonl"
    assert status == 0 and files == [named]  # the .partial file it was written as is gone
    assert re.fullmatch(rf"reference {re.escape(__version__)} \(reference\): conforms \((\d+)/\1 cases pass\); "
                        rf"report: {re.escape(str(named))}", verdict), verdict
    header = json.loads(named.read_text(encoding="utf-8").splitlines()[0])
    assert header["candidate"]["spec"] == "reference" and header["candidate"]["implementation"]["name"] == "reference"


@pytest.mark.slow
def test_a_candidate_that_never_started_names_its_report_by_its_spec(tmp_path, monkeypatch):
    spec = f"exec:{sys.executable} -c pass"  # exits at once: no handshake
    status, verdict, files = _certify(tmp_path, monkeypatch, "-c", spec)
    assert status == 1 and verdict.startswith(f"{spec} (never started): does not conform (")
    (report,) = files
    assert report.parent == Path("reports") and report.name.startswith("conformance-never-started-exec_")
    assert verdict.endswith(f"; report: {report}")


@pytest.mark.slow
def test_a_hostile_name_makes_one_safe_report_file(tmp_path, monkeypatch):
    # Its handshake's name climbs up with ../, clears the terminal, and is 5000 characters long.
    (tmp_path / "cwd").mkdir()
    status, verdict, files = _certify(tmp_path / "cwd", monkeypatch, "-c",
                                      f"exec:{sys.executable} {HOSTILE} ok path-name")
    (report,) = files
    assert status == 0 and report.parent == Path("reports")
    assert re.fullmatch(r"conformance-[A-Za-z0-9._-]+-1\.0\.jsonl", report.name) and len(report.name) <= 255
    assert not any(p for p in tmp_path.iterdir() if p.name != "cwd")  # nothing written outside
    assert "\x1b" not in verdict and verdict.startswith("../../\ufffd[2J/etc/passwd")  # the escape shown as U+FFFD
    assert "… ../1.0\ufffd (exec:" in verdict  # the name cut, the version's newline shown


@pytest.mark.slow
def test_resume_finds_an_interrupted_run_s_report_under_its_spec(tmp_path, monkeypatch):
    # An interrupted run of the reference: its report at the default while-running name, cut after two cases.
    monkeypatch.chdir(tmp_path)
    partial = Path("reports") / "reference.partial.jsonl"
    done = CliRunner().invoke(app, ["certify", "--oracle", "recorded", "-k", GLOB, "--progress", "none",
                                    "--report", str(partial)])
    assert done.exit_code == 0, done.output
    partial.write_text("".join(partial.read_text(encoding="utf-8").splitlines(keepends=True)[:3]), encoding="utf-8")
    result = CliRunner().invoke(app, ["certify", "--oracle", "recorded", "-k", GLOB, "--progress", "none", "--resume"])
    assert result.exit_code == 0, result.output
    assert f"resuming {partial}: 2 finished case(s)" in result.output
    named = Path("reports") / f"conformance-reference-{__version__}.jsonl"
    assert sorted(Path("reports").iterdir()) == [named]
    assert json.loads(named.read_text(encoding="utf-8").splitlines()[0])["resumed"][0]["kept"] == 2
