"""``conformance replay``: a report's findings (or an example database's) run again, each judged fixed, failing,
flaky or error.

The reports are made by ``certify`` with the recorded oracle and a deliberately wrong candidate; the replays
need no oracle (a report holds its answers). The example database is replayed against the reference standing
in for the oracle, in process: what is tested there is which entries leave the database, not harbor.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli.app import app
from conformance.core.compare import NanPolicy
from conformance.core.outcomes import Outcome
from conformance.report.reader import ReportError, read
from conformance.report.writer import dumps
from conformance.run import replay as replaying
from conformance.run.examples import open_database, save_finding, stored_findings
from tests import flaky_candidates, wrong_candidates
from tests.report_lines import footer_line, header_line

WRONG = "tests.wrong_candidates:empty_by_strip"
SURFACE, CLASS = wrong_candidates.CAUGHT_AS["empty_by_strip"]


@pytest.fixture(autouse=True)
def _wide_console(monkeypatch):
    """Wide enough that no row of the table wraps, whatever terminal (or none) the tests run in."""
    from conformance.cli.console import out

    monkeypatch.setattr(out, "width", 400)


def _cli(*args: str):
    return CliRunner().invoke(app, ["replay", *args])


@pytest.fixture(scope="module")
def wrong_report(tmp_path_factory) -> Path:
    """The wrong candidate certified on its surface's cases against the recorded oracle."""
    path = tmp_path_factory.mktemp("replay") / "wrong.jsonl"
    made = CliRunner().invoke(app, ["certify", "-c", WRONG, "--oracle", "recorded", "-s", SURFACE,
                                    "--report", str(path), "--progress", "none"])
    assert made.exit_code == 1, made.output
    return path


def _not_conforming(path: Path) -> list[dict]:
    lines = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line["type"] == "case" and line["outcome"] not in ("pass", "xfail")]


def _verdicts(tmp_path: Path, *args: str) -> tuple[int, dict, str]:
    out = tmp_path / "verdicts.json"
    done = _cli(*args, "--json", str(out))
    data = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    return done.exit_code, data, done.output


def test_a_fixed_candidate_has_every_finding_fixed(wrong_report, tmp_path):
    failing = _not_conforming(wrong_report)
    assert failing, "the wrong candidate must fail some case for this test to mean anything"
    code, data, output = _verdicts(tmp_path, str(wrong_report), "-c", "reference")
    assert code == 0, output
    assert data["candidate"]["spec"] == "reference"
    assert data["candidate"]["implementation"]["name"] == "reference"  # as its handshake names it
    assert [f["id"] for f in data["findings"]] == [line["id"] for line in failing]
    assert {f["verdict"] for f in data["findings"]} == {"fixed"}
    assert all([run["outcome"] for run in f["runs"]] == ["pass"] * 3 for f in data["findings"])
    assert "FIXED" in output and f"{len(failing)} fixed, 0 failing, 0 flaky, 0 error" in output


def test_the_same_wrong_candidate_is_still_failing_and_the_table_says_how(wrong_report, tmp_path):
    code, data, output = _verdicts(tmp_path, str(wrong_report))  # the report's own candidate
    assert code == 1, output
    assert data["candidate"]["spec"] == WRONG
    assert {f["verdict"] for f in data["findings"]} == {"failing"}
    assert all([run["outcome"] for run in f["runs"]] == ["fail"] * 3 for f in data["findings"])
    assert all(run["difference"].startswith(f"{CLASS} at ") for f in data["findings"] for run in f["runs"])
    for name in ("id", "surface", "verdict", "runs", "first difference"):
        assert name in output
    for line in _not_conforming(wrong_report):
        row = next(text for text in output.splitlines() if line["id"] in text)
        assert "FAILING" in row and "fail, fail, fail" in row and f"{CLASS} at $" in row


def test_a_candidate_answering_two_ways_in_each_run_is_flaky(wrong_report, tmp_path):
    flaky_candidates.ASKED.clear()
    code, data, output = _verdicts(tmp_path, str(wrong_report), "-c", "tests.flaky_candidates:alternating_strip")
    assert code == 1, output
    assert {f["verdict"] for f in data["findings"]} == {"flaky"}
    # each run asks an input twice (it diverged): wrong, then right
    assert all([run["outcome"] for run in f["runs"]] == ["flaky"] * 3 for f in data["findings"])
    for finding in data["findings"]:
        row = next(text for text in output.splitlines() if finding["id"] in text)
        assert "FLAKY" in row and "flaky, flaky, flaky" in row


def test_a_candidate_wrong_in_one_run_and_right_in_the_others_is_flaky(wrong_report, tmp_path):
    flaky_candidates.ASKED.clear()
    code, data, output = _verdicts(tmp_path, str(wrong_report), "-c", "tests.flaky_candidates:settling_strip")
    assert code == 1, output
    assert {f["verdict"] for f in data["findings"]} == {"flaky"}
    assert all([run["outcome"] for run in f["runs"]] == ["fail", "pass", "pass"] for f in data["findings"])
    for finding in data["findings"]:  # the table shows the last diverging run's first difference
        row = next(text for text in output.splitlines() if finding["id"] in text)
        assert "FLAKY" in row and "fail, pass, pass" in row and f"{CLASS} at $" in row


def test_the_number_of_runs_is_an_option(wrong_report, tmp_path):
    flaky_candidates.ASKED.clear()
    code, data, _ = _verdicts(tmp_path, str(wrong_report), "-c", "tests.flaky_candidates:settling_strip",
                              "--runs", "1")
    assert code == 1 and {f["verdict"] for f in data["findings"]} == {"failing"}  # wrong twice in its one run
    code, data, _ = _verdicts(tmp_path, str(wrong_report), "-c", "reference", "--runs", "5")
    assert code == 0 and all(len(f["runs"]) == 5 for f in data["findings"])
    assert _cli(str(wrong_report), "--runs", "0").exit_code == 2


def test_a_line_without_the_oracles_answer_is_an_error(wrong_report, tmp_path):
    report = read(wrong_report)
    assert report.header is not None and report.footer is not None
    first = next(line for line in report.records if not line.conforms)
    unanswered = first.amended(id=f"{SURFACE}::no-oracle-answer", oracle=None, candidate=None, mismatches=[],
                               outcome=Outcome.ERROR, detail="oracle crash: it died")
    path = tmp_path / "unanswered.jsonl"
    path.write_text("".join(dumps(line) + "\n" for line in [report.header, *report.records, unanswered,
                                                             report.footer]), encoding="utf-8")
    code, data, output = _verdicts(tmp_path, str(path), "-c", "reference")
    assert code == 1, output
    verdicts = {f["id"]: f for f in data["findings"]}
    assert verdicts[unanswered.id]["verdict"] == "error" and verdicts[unanswered.id]["runs"] == []
    assert "no oracle answer" in verdicts[unanswered.id]["reason"]
    assert "oracle crash: it died" in verdicts[unanswered.id]["reason"]
    assert {f["verdict"] for i, f in verdicts.items() if i != unanswered.id} == {"fixed"}


def test_a_candidate_that_does_not_start_leaves_every_finding_an_error(wrong_report, tmp_path):
    code, data, output = _verdicts(tmp_path, str(wrong_report), "-c", "exec:python3 -c 'raise SystemExit(3)'")
    assert code == 1, output
    assert {f["verdict"] for f in data["findings"]} == {"error"}
    assert all("did not start" in f["reason"] for f in data["findings"])


def test_a_report_that_cannot_be_read_is_a_usage_error_naming_file_and_line(wrong_report, tmp_path):
    lines = wrong_report.read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([lines[0], lines[1], "{not json", *lines[2:]]) + "\n", encoding="utf-8")
    done = _cli(str(broken), "-c", "reference")
    assert done.exit_code == 2
    assert f"{broken}:3: not a JSON line" in done.output

    missing = _cli(str(tmp_path / "absent.jsonl"))
    assert missing.exit_code == 2 and "absent.jsonl: cannot read" in missing.output


def test_a_header_whose_nan_policy_is_not_registered_is_a_usage_error(tmp_path):
    path = tmp_path / "policy.jsonl"
    path.write_text(json.dumps(header_line(nan_policy="no-such-policy")) + "\n", encoding="utf-8")
    done = _cli(str(path), "-c", "reference")
    assert done.exit_code == 2 and f"{path}:1: the header's NaN policy" in done.output
    with pytest.raises(ReportError, match="no-such-policy"):
        replaying.from_report(path)


def test_the_nan_policy_is_the_one_the_header_names():
    one = replaying.Policies.named("bitwise")
    assert one.of("reward.parse") is NanPolicy.BITWISE and one.of("metric.compute") is NanPolicy.BITWISE
    each = replaying.Policies.named("metric.compute=bitwise, reward.parse=any-nan-equal")
    assert each.of("metric.compute") is NanPolicy.BITWISE and each.of("reward.parse") is NanPolicy.ANY
    assert each.of("pass_at_k") is None  # not named: the surface's own
    assert replaying.Policies.named("").of("reward.parse") is None


def test_nothing_to_replay_conforms(wrong_report, tmp_path):
    clean = tmp_path / "clean.jsonl"
    clean.write_text(json.dumps(header_line(candidate={"spec": "reference"})) + "\n"
                     + json.dumps(footer_line(conforms=True)) + "\n", encoding="utf-8")
    done = _cli(str(clean))
    assert done.exit_code == 0 and "nothing to replay" in done.output
    other = _cli(str(wrong_report), "-s", "metric.compute")  # the findings of other surfaces are left out
    assert other.exit_code == 0 and "nothing to replay" in other.output


@pytest.mark.parametrize("args, said", [
    ((), "give a REPORT or --example-database"),
    (("r.jsonl", "--example-database", "db"), "give a REPORT or --example-database"),
    (("--example-database", "db"), "needs --candidate"),
    (("--example-database", "db", "-c", "reference", "--oracle", "recorded"), "need a live oracle"),
    (("--example-database", "no-such-db", "-c", "reference", "--oracle", "reference"),
     "--example-database: no-such-db: no such folder"),
])
def test_usage_errors(args, said, tmp_path):
    done = _cli(*args)
    assert done.exit_code == 2 and said in done.output


def test_a_report_takes_no_oracle(wrong_report):
    done = _cli(str(wrong_report), "--oracle", "reference")
    assert done.exit_code == 2 and "--oracle goes with --example-database" in done.output


def test_the_example_database_loses_its_fixed_findings_and_keeps_the_failing(tmp_path):
    database_path = tmp_path / "examples"
    database = open_database(database_path)
    still_wrong = {"reward_json": b" "}  # whitespace only: the wrong candidate calls it empty, harbor does not
    fixed = {"reward_json": b'{"reward": 1.0}'}  # both answer alike: a finding the candidate no longer has
    for value in (still_wrong, fixed):
        save_finding(database, SURFACE, value)
    assert len(stored_findings(database, SURFACE)) == 2
    code, data, output = _verdicts(tmp_path, "--example-database", str(database_path), "-c", WRONG,
                                   "--oracle", "reference")
    assert code == 1, output
    by_verdict = {f["verdict"]: f for f in data["findings"]}
    assert set(by_verdict) == {"fixed", "failing"}
    assert by_verdict["failing"]["difference"].startswith(f"{CLASS} at ")
    assert data["removed"] == 1 and "removed 1 fixed finding(s) from the example database" in output
    assert stored_findings(open_database(database_path), SURFACE) == [still_wrong]

    again = _cli("--example-database", str(database_path), "-c", "reference", "--oracle", "reference")
    assert again.exit_code == 0 and "removed 1 fixed" in again.output
    assert stored_findings(open_database(database_path), SURFACE) == []

