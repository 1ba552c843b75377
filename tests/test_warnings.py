"""Guards against an empty pass: runs that diverge nowhere but prove nothing are never a plain "conforms".

Each warning of the catalogue (docs/warnings.md) is brought about by a real run of a candidate chosen for it
(tests/empty_pass_candidates.py), and not by the reference's run; every reader of the report (the verdict line,
the Markdown summary, the badge, the site, the pytest plugin) names it, and a report read back gives the same
warnings. Offline: the cases against their recordings, generated inputs against the reference standing in for
the oracle.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import conformance.pytest_plugin.session  # noqa: F401 - imported once, not by each pytester run
import tests.empty_pass_candidates  # noqa: F401 - as above
from conformance.cli.app import app
from conformance.connection.connectors import connect, parse
from conformance.core.outcomes import Outcome, RunWarning
from conformance.report import markdown
from conformance.report.model import Warned
from conformance.report.reader import ReportFile, read
from conformance.run import certification
from conformance.run.plan import Options, make_plan
from conformance.run.runner import Oracle
from conformance.site.collect import collect

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parent.parent
CANDIDATES = "tests.empty_pass_candidates"


def _names(warnings: list[Warned]) -> set[tuple[str, str | None]]:
    return {(w.name.value, w.surface) for w in warnings}


def _recorded(candidate: str, report: Path, **options) -> certification.Run:
    return certification.certify(Options(candidate=parse(candidate), oracle="recorded", **options), report)


def _read_back(path: Path) -> list[Warned]:
    """The warnings a reader finds in the report on disk, from its lines (the footer's own left aside)."""
    whole, streamed = read(path).tally().warnings(), ReportFile(path).overview().tally().warnings()
    assert whole == streamed
    return whole


@pytest.fixture
def reference_oracle():
    """The reference, standing in for harbor: generated inputs need a live oracle, and these need no harbor."""
    with Oracle(connect(parse("reference"))) as oracle:
        yield oracle


def _generated(candidate: str, report: Path, oracle: Oracle, **options) -> certification.Run:
    plan = make_plan(Options(candidate=parse(candidate), oracle="harbor==0.13.1", no_cases=True, profile="ci",
                             **options), report)
    return certification.execute(plan, oracle=oracle)


def _cli(*args: str):
    return CliRunner().invoke(app, list(args))


# -- the catalogue ----------------------------------------------------------------------------------------------


def test_each_warning_has_a_name_a_meaning_a_hint_and_a_section_in_the_docs():
    doc = (REPO / "docs" / "warnings.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## `([a-z-]+)`$", doc, re.M)
    assert sections == [w.value for w in RunWarning]
    for warning in RunWarning:
        assert warning.meaning and warning.hint and "\n" not in warning.meaning + warning.hint


# -- not raised by the reference ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_reference_s_run_of_every_case_warns_nothing(tmp_path):
    run = _recorded("reference", tmp_path / "r.jsonl")
    assert run.conforms and run.footer.warnings == []
    assert _read_back(tmp_path / "r.jsonl") == []


def test_the_reference_s_generated_inputs_of_the_surfaces_with_rejections_warn_nothing(tmp_path, reference_oracle):
    """Its drawn inputs are mostly scored, some rejected: the guard counts rejections, it does not fire on one."""
    run = _generated("reference", tmp_path / "g.jsonl", reference_oracle,
                     surfaces=["evsys.metric", "metric.compute"], max_examples=30)
    assert run.conforms and run.footer.warnings == []
    assert all(line.inputs_run > 0 for line in run.tally.generated.values())


# -- each warning, by a run chosen for it -----------------------------------------------------------------------


def test_a_candidate_that_declines_most_of_a_surface_warns_mostly_skipped(tmp_path):
    run = _recorded(f"{CANDIDATES}:skips_json", tmp_path / "s.jsonl", surfaces=["reward.parse", "pass_at_k"])
    assert _names(run.footer.warnings) == {("mostly-skipped", "reward.parse")}  # pass_at_k was answered whole
    skipped, cases = run.tally.outcomes[Outcome.SKIP], sum(run.tally.by_surface["reward.parse"].values())
    assert 2 * skipped > cases
    assert not run.conforms  # skips count against conformance as they always did
    assert _read_back(tmp_path / "s.jsonl") == run.footer.warnings


def test_skips_listed_as_known_conform_with_warnings_and_exit_0_unless_strict(tmp_path):
    """The empty pass the guard is for: an expectation file that lists every skip makes the run conform."""
    first = tmp_path / "first.jsonl"
    result = _cli("certify", "-c", f"{CANDIDATES}:skips_json", "--oracle", "recorded", "-s", "reward.parse",
                  "--report", str(first))
    assert result.exit_code == 1, result.output
    known = tmp_path / "known.yaml"
    assert _cli("expectations", "update", str(first), "--file", str(known)).exit_code == 0
    report, summary, shield = tmp_path / "r.jsonl", tmp_path / "summary.md", tmp_path / "badge.json"
    args = ["certify", "-c", f"{CANDIDATES}:skips_json", "--oracle", "recorded", "-s", "reward.parse",
            "--expectations", str(known), "--report", str(report), "--markdown", str(summary), "--badge", str(shield)]
    result = _cli(*args)
    assert result.exit_code == 0, result.output
    verdict = next(line for line in result.output.splitlines() if "; report: " in line)
    assert ": conforms, with warnings: mostly-skipped (" in verdict
    assert "mostly-skipped (reward.parse): " in result.output and RunWarning.MOSTLY_SKIPPED.hint in result.output

    text = summary.read_text(encoding="utf-8")
    assert re.match(r"## ⚠️ `skips-json [^`]+` conforms to `recorded`, with warnings: mostly-skipped\n", text)
    assert "- **mostly-skipped** on `reward.parse`: " in text
    shown = json.loads(shield.read_text(encoding="utf-8"))
    assert shown["color"] == "orange" and "conforms with warnings: mostly-skipped" in shown["message"]

    strict = _cli(*args, "--strict-warnings")
    assert strict.exit_code == 1, strict.output
    assert ": conforms, with warnings: mostly-skipped (" in strict.output


def test_a_scope_of_unknown_metric_names_warns_rejected_before_scoring_on_its_cases(tmp_path):
    run = _recorded(f"{CANDIDATES}:unknown_metrics", tmp_path / "u.jsonl")
    assert run.conforms  # the reference raises KeyError as the oracle does: nothing diverges
    assert {r.surface for r in run.records} == {"evsys.metric"}
    assert {r.oracle.raised for r in run.records} == {"KeyError"}  # type: ignore[union-attr]
    assert _names(run.footer.warnings) == {("rejected-before-scoring", "evsys.metric")}
    assert _read_back(tmp_path / "u.jsonl") == run.footer.warnings
    summary = markdown.summary(read(tmp_path / "u.jsonl"))
    assert "conforms to `recorded`, with warnings: rejected-before-scoring" in summary.splitlines()[0]


def test_a_scope_of_unknown_metric_names_warns_rejected_before_scoring_on_generated_inputs(tmp_path,
                                                                                          reference_oracle):
    run = _generated(f"{CANDIDATES}:unknown_metrics", tmp_path / "g.jsonl", reference_oracle, max_examples=15)
    drawn = run.tally.generated["evsys.metric"]
    assert run.conforms and drawn.inputs_run > 0 and drawn.rejected == drawn.inputs_run
    assert _names(run.footer.warnings) == {("rejected-before-scoring", "evsys.metric")}
    assert _read_back(tmp_path / "g.jsonl") == run.footer.warnings


@pytest.mark.slow
def test_a_scope_the_suite_leaves_out_generates_nothing_and_warns_it(tmp_path, reference_oracle):
    """Every value drawn holds the claimed reward.json, nested past the suite's limit: none may be sent."""
    run = _generated(f"{CANDIDATES}:too_deep", tmp_path / "d.jsonl", reference_oracle, max_examples=5)
    assert run.tally.generated["reward.parse"].inputs_run == 0
    assert _names(run.footer.warnings) == {("nothing-generated", "reward.parse"), ("nothing-ran", None)}
    assert not run.conforms  # the generator could draw nothing: its error says so
    assert _read_back(tmp_path / "d.jsonl") == run.footer.warnings


# -- a --case glob that matches nothing -------------------------------------------------------------------------


def test_each_case_glob_must_match_a_case_on_the_command_line_and_in_the_config_file(tmp_path, monkeypatch):
    given = ["--case", "reward.parse::neither-file", "--case", "reward.parse::no-such-*"]
    result = _cli("certify", "-c", "reference", "--oracle", "recorded", "--report", str(tmp_path / "r.jsonl"),
                  *given)
    assert result.exit_code == 2
    assert "--case: 'reward.parse::no-such-*' matches no case of the run" in result.output
    assert not (tmp_path / "r.jsonl").exists()

    (tmp_path / "conformance.toml").write_text('candidate = "reference"\noracle = "recorded"\n'
                                               'case = ["reward.parse::neither-file", "reward.parse::no-such-*"]\n')
    monkeypatch.chdir(tmp_path)
    result = _cli("certify", "--report", str(tmp_path / "c.jsonl"))
    assert result.exit_code == 2
    assert "'reward.parse::no-such-*' matches no case of the run" in result.output

    # A glob of a surface left out by --surface matches nothing of the run either.
    result = _cli("certify", "-c", "reference", "--oracle", "recorded", "-s", "pass_at_k", "--case",
                  "reward.parse::neither-file", "--report", str(tmp_path / "s.jsonl"))
    assert result.exit_code == 2


# -- the site and the pytest plugin -----------------------------------------------------------------------------


def test_the_site_names_the_warnings_of_a_report(tmp_path):
    _recorded(f"{CANDIDATES}:unknown_metrics", tmp_path / "u.jsonl")
    _recorded("reference", tmp_path / "r.jsonl", surfaces=["pass_at_k"])
    rows = {row.title: row for row in collect([tmp_path / "u.jsonl", tmp_path / "r.jsonl"]).index.rows}
    assert rows["unknown-metrics"].verdict_text == "conforms, with warnings: rejected-before-scoring"
    assert rows["unknown-metrics"].verdict.key == "warn"
    assert (rows["reference"].verdict_text, rows["reference"].verdict.key) == ("conforms", "pass")


def test_the_plugin_s_summary_names_the_warnings_and_strict_fails_the_run(pytester):
    folder = pytester.path / "cases" / "evsys.metric"
    folder.mkdir(parents=True)
    (folder / "names.yaml").write_bytes((REPO / "cases" / "evsys.metric" / "names.yaml").read_bytes())
    args = ["cases", "--conformance-candidate", f"{CANDIDATES}:unknown_metrics", "--conformance-oracle", "recorded",
            "--conformance-no-generate", "-k", "unknown"]  # the names no metric is registered under
    result = pytester.runpytest(*args)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["harbor-conformance: warnings rejected-before-scoring: the run is no evidence*",
                                 "  rejected-before-scoring (evsys.metric): the oracle answered all * with KeyError*"])
    assert pytester.runpytest(*args, "--conformance-strict-warnings").ret == pytest.ExitCode.TESTS_FAILED
