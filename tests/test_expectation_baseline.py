"""Expectation files as a baseline with history: entries first and last seen on the dates of the runs that saw
them, an ``expires`` date after which an entry no longer applies, and ``expectations update`` pruning only what a
run covered.

The reports ``update`` reads are written by hand with a fixed ``started_at``, so every date they stamp is known
here and none is today's. The runs use the corpus's recorded oracle results and the deliberately wrong candidate
``pass_at_1`` (see tests/test_expectations.py): on ``DIVERGES`` it adds an ``extra-key``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import app
from conformance.run import certification, expectations
from tests.report_lines import footer_line, header_line

WRONG = "tests.wrong_candidates:pass_at_1"
DIVERGES = "pass_at_k::all-null-rewards"
CONFORMS = "pass_at_k::half-disables-group"
STARTED = "2026-03-02T23:59:59+00:00"  # the run's date is 2026-03-02, whatever time it is here
MISMATCH = {"path": "$.reward", "expected": "1.0", "actual": "2.0"}


def _report(path: Path, lines: list[dict], surfaces: list[str], *, started_at: str = STARTED,
            finished: bool = True, **header: object) -> Path:
    body = [header_line(surfaces=surfaces, started_at=started_at, **header),
            *({"type": "case", "seconds": 0.0, "surface": line["id"].split("::")[0], **line} for line in lines)]
    body += [footer_line()] if finished else []
    path.write_text("".join(json.dumps(item) + "\n" for item in body))
    return path


def _diverged(case_id: str, cls: str = "value", **extra: object) -> dict:
    return {"id": case_id, "outcome": "fail", "mismatches": [{"cls": cls, **MISMATCH}], **extra}


def _invoke(*args: str):
    return CliRunner().invoke(app, [*args])


# -- expectations update: stamped, added, pruned, unobserved, expired ------------------------------------------

DATED = """\
# Baseline of my-runner. Dates are the runs'.
candidate: cand
oracle: harbor==0.13.1
divergences:
  # reviewed in January; until the fix ships
  - id: reward.parse::seen
    classes: [value]
    reason: >-
      harbor reads "1.0" as a float, the runner
      as a string   # not a comment: folded text
    link: https://example.org/seen  # the changelog
    first_seen: 2026-01-05
    last_seen: 2026-02-01   # stamped by update
    expires: 2026-06-30   # the release that fixes it

  - id: reward.parse::undated
    reason: written before the dates existed
  # fixed since: pruned with this comment
  - id: reward.parse::fixed
    reason: fixed upstream
    first_seen: 2026-01-05
    last_seen: 2026-01-20
  - id: reward.parse::overdue
    classes: [type]
    reason: was to be fixed by February
    first_seen: 2026-01-05
    expires: 2026-02-28
  # another surface: this run did not take it
  - id: metric.compute::elsewhere
    classes: [ulp]
    reason: not run here
    first_seen: 2026-01-05
    last_seen: 2026-01-06
# end
"""


def _dated_update(tmp_path: Path) -> tuple[Path, object]:
    known = tmp_path / "known.yaml"
    known.write_text(DATED)
    report = _report(tmp_path / "r.jsonl", [
        _diverged("reward.parse::seen", outcome="xfail",
                  expected_divergence={"outcome": "fail", "classes": ["value"], "reason": "r"}),
        {"id": "reward.parse::undated", "outcome": "crash", "detail": "exited with status 1"},
        {"id": "reward.parse::fixed", "outcome": "pass"},
        _diverged("reward.parse::overdue", "type"),
        _diverged("reward.parse::new", "ulp"),
    ], ["reward.parse"], expectations=str(known))
    return known, _invoke("expectations", "update", str(report))


def test_update_stamps_the_reports_date_and_keeps_what_a_person_wrote(tmp_path):
    known, result = _dated_update(tmp_path)
    assert result.exit_code == 0, result.output
    assert known.read_text() == """\
# Baseline of my-runner. Dates are the runs'.
candidate: cand
oracle: harbor==0.13.1
divergences:
  # reviewed in January; until the fix ships
  - id: reward.parse::seen
    classes: [value]
    reason: >-
      harbor reads "1.0" as a float, the runner
      as a string   # not a comment: folded text
    link: https://example.org/seen  # the changelog
    first_seen: 2026-01-05
    last_seen: 2026-03-02   # stamped by update
    expires: 2026-06-30   # the release that fixes it

  - id: reward.parse::undated
    outcome: crash
    reason: written before the dates existed
    last_seen: 2026-03-02
  - id: reward.parse::overdue
    classes: [type]
    reason: was to be fixed by February
    first_seen: 2026-01-05
    last_seen: 2026-03-02
    expires: 2026-02-28
  # another surface: this run did not take it
  - id: metric.compute::elsewhere
    classes: [ulp]
    reason: not run here
    first_seen: 2026-01-05
    last_seen: 2026-01-06
  - id: reward.parse::new
    outcome: fail
    classes: [ulp]
    reason: 'not yet reviewed: ulp at $.reward: oracle 1.0 / candidate 2.0'
    first_seen: 2026-03-02
    last_seen: 2026-03-02
# end
"""


def test_update_says_what_it_did_to_each_entry(tmp_path):
    known, result = _dated_update(tmp_path)
    assert result.output.splitlines() == [
        "added reward.parse::new", "updated reward.parse::undated", "pruned reward.parse::fixed",
        "expired reward.parse::overdue",
        f"{known}: 5 known divergence(s) on 2026-03-02; 4 kept, 3 stamped, 1 added, 1 updated, 1 pruned (fixed), "
        "1 unobserved, 1 expired"]


def test_a_second_update_from_the_same_report_changes_nothing(tmp_path):
    known, result = _dated_update(tmp_path)
    first = known.read_text()
    assert _invoke("expectations", "update", str(tmp_path / "r.jsonl")).exit_code == 0
    assert known.read_text() == first


def test_an_older_report_does_not_take_last_seen_back(tmp_path):
    known = tmp_path / "known.yaml"
    known.write_text("divergences:\n- id: reward.parse::a\n  reason: r\n  classes: [value]\n"
                     "  first_seen: 2026-01-05\n  last_seen: 2026-03-01\n")
    report = _report(tmp_path / "r.jsonl", [_diverged("reward.parse::a")], ["reward.parse"],
                     started_at="2026-02-15T08:00:00+00:00")
    assert _invoke("expectations", "update", str(report), "--file", str(known)).exit_code == 0
    assert expectations.load(known).divergences[0].last_seen == date(2026, 3, 1)


@pytest.mark.parametrize(("header", "lines", "finished", "unobserved"), [
    # --case globs: a case of the surface they leave out was not run
    ({"case_globs": ["reward.parse::a*"]}, [_diverged("reward.parse::another")], True, "reward.parse::other"),
    # a run cut short speaks only for the cases it got to
    ({}, [_diverged("reward.parse::another")], False, "reward.parse::other"),
    # cases of the surface ran, its generator did not
    ({}, [_diverged("reward.parse::another")], True, "reward.parse::gen-0123456789ab"),
])
def test_an_entry_the_run_did_not_cover_is_kept_untouched(tmp_path, header, lines, finished, unobserved):
    known = tmp_path / "known.yaml"
    entry = f"- id: {unobserved}\n  reason: r  # mine\n  last_seen: 2026-01-01\n"
    known.write_text("divergences:\n" + entry)
    report = _report(tmp_path / "r.jsonl", lines, ["reward.parse"], finished=finished, **header)
    result = _invoke("expectations", "update", str(report), "--file", str(known))
    assert result.exit_code == 0, result.output
    assert f"divergences:\n{entry}- id: reward.parse::another\n" in known.read_text()
    assert "1 unobserved" in result.output and "0 pruned" in result.output


def test_an_entry_the_run_covered_and_did_not_see_is_pruned(tmp_path):
    known = tmp_path / "known.yaml"
    known.write_text("divergences:\n- id: reward.parse::other\n  reason: r\n")
    report = _report(tmp_path / "r.jsonl", [_diverged("reward.parse::another")], ["reward.parse"],
                     case_globs=["reward.parse::*"])
    result = _invoke("expectations", "update", str(report), "--file", str(known))
    assert "pruned reward.parse::other" in result.output
    assert [e.id for e in expectations.load(known).divergences] == ["reward.parse::another"]


# -- a run: an expired entry no longer applies -----------------------------------------------------------------

def _known(tmp_path: Path, *entries: str) -> Path:
    path = tmp_path / "known.yaml"
    path.write_text("divergences:\n" + "".join(entries))
    return path


def _entry(case_id: str, **dates: str) -> str:
    return (f"- id: {case_id}\n  classes: [extra-key]\n  reason: k=1 reported\n"
            + "".join(f"  {key}: {value}\n" for key, value in dates.items()))


def _certify(tmp_path: Path, known: Path, **options: object):
    run = certification.certify(certification.Options(candidate=WRONG, oracle="recorded", expectations=known,
                                                      **options), tmp_path / "report.jsonl")
    return run, {r.id: r for r in run.records}


def test_an_expired_entry_makes_its_divergence_fail_the_run_and_is_named(tmp_path):
    known = _known(tmp_path, _entry(DIVERGES, first_seen="2000-01-01", expires="2000-01-31"))
    run, records = _certify(tmp_path, known, case_globs=[DIVERGES, CONFORMS])
    assert records[DIVERGES].outcome == "fail" and records[DIVERGES].expected_divergence is None
    assert "expired on 2000-01-31" in records[DIVERGES].detail
    assert run.footer.expired_expectations == [DIVERGES]
    assert run.footer.stale_expectations == []
    assert not run.conforms


def test_an_entry_expiring_later_still_applies(tmp_path):
    known = _known(tmp_path, _entry(DIVERGES, expires="2999-12-31"))
    run, records = _certify(tmp_path, known, case_globs=[DIVERGES])
    assert records[DIVERGES].outcome == "xfail"
    assert run.footer.expired_expectations == [] and run.conforms


@pytest.mark.slow
def test_certify_and_summary_name_the_expired_entry(tmp_path):
    known = _known(tmp_path, _entry(DIVERGES, expires="2000-01-31"))
    report = tmp_path / "r.jsonl"
    proc = subprocess.run([sys.executable, "-m", "conformance.cli.app", "certify", "--oracle", "recorded",
                           "-c", WRONG, "-k", DIVERGES, "--expectations", str(known), "--report", str(report)],
                          capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert proc.returncode == 1, proc.stderr
    said = " ".join(proc.stdout.split())  # the console wraps long lines
    assert f"1 expired expectation(s), their divergences counted as new: {DIVERGES}" in said
    summary = _invoke("summary", str(report), "--markdown", str(tmp_path / "r.md"))
    assert summary.exit_code == 1
    assert f"1 expired expectation(s), their divergences counted as new: {DIVERGES}" in " ".join(summary.output.split())
    assert f"### Expired expectations\n\nEntries past their `expires` date, their divergences counted as new:\n\n" \
           f"- `{DIVERGES}`" in (tmp_path / "r.md").read_text()


def test_an_entry_of_a_surface_not_run_is_not_stale(tmp_path):
    # --surface pass_at_k: the reward.parse entries are unobserved, even one naming no case; in pass_at_k, it is
    # stale.
    known = _known(tmp_path, _entry(DIVERGES), "- id: reward.parse::txt-one\n  classes: [value]\n  reason: r\n",
                   "- id: reward.parse::no-such-case\n  reason: r\n", "- id: pass_at_k::no-such-case\n  reason: r\n")
    run, records = _certify(tmp_path, known, surfaces=["pass_at_k"], no_generate=True)
    assert records[DIVERGES].outcome == "xfail"
    assert run.footer.stale_expectations == ["pass_at_k::no-such-case"]


# -- dates a file cannot have -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("entry", "said"), [
    ("  expires: 2026-13-01\n", "divergences.1.expires"),
    ("  expires: 2026-1-5\n", "a date is written YYYY-MM-DD, got '2026-1-5'"),
    ("  last_seen: 1767225600\n", "a date is written YYYY-MM-DD, got 1767225600"),
    ("  first_seen: 2026-01-01T10:00:00\n", "a date is written YYYY-MM-DD"),
    ("  first_seen: 2026-02-01\n  expires: 2026-01-31\n", "expires 2026-01-31 is before first_seen 2026-02-01"),
    ("  first_seen: 2026-02-01\n  last_seen: 2026-01-31\n", "last_seen 2026-01-31 is before first_seen 2026-02-01"),
])
def test_a_bad_date_is_named_by_file_and_line_and_exits_2(tmp_path, entry, said):
    good = "- id: reward.parse::good\n  reason: r\n  first_seen: 2026-01-01\n  expires: 2026-01-01\n"
    path = _known(tmp_path, good, "- id: reward.parse::bad\n  reason: r\n" + entry)
    result = _invoke("expectations", "check", str(path))
    assert result.exit_code == 2
    assert result.output.startswith(f"{path}:6: [reward.parse::bad] "), result.output
    assert said in result.output


def test_certify_refuses_a_bad_date_before_it_runs_a_case(tmp_path):
    good = "- id: reward.parse::good\n  reason: r\n  first_seen: 2026-01-01\n  expires: 2026-01-01\n"
    path = _known(tmp_path, good, "- id: reward.parse::bad\n  reason: r\n  expires: 2026-1-5\n")
    proc = subprocess.run([sys.executable, "-m", "conformance.cli.app", "certify", "--oracle", "recorded",
                           "-c", "reference", "-k", DIVERGES, "--expectations", str(path),
                           "--report", str(tmp_path / "r.jsonl")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert f"{path}:6: [reward.parse::bad]" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_a_file_without_dates_stays_valid(tmp_path):
    path = _known(tmp_path, "- id: reward.parse::a\n  reason: r\n")
    entry = expectations.load(path).divergences[0]
    assert (entry.first_seen, entry.last_seen, entry.expires) == (None, None, None)


def test_check_with_a_report_names_expired_and_unobserved_entries(tmp_path):
    path = _known(tmp_path, "- id: reward.parse::a\n  reason: r\n  expires: 2026-03-01\n",
                  "- id: reward.parse::b\n  reason: r\n  expires: 2026-03-02\n",
                  "- id: metric.compute::c\n  reason: r\n")
    report = _report(tmp_path / "r.jsonl", [_diverged("reward.parse::a")], ["reward.parse"])
    result = _invoke("expectations", "check", str(path), "--report", str(report))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"{path}: 3 known divergence(s)",
        f"{path}:2: [reward.parse::a] expired on 2026-03-01 (the run is of 2026-03-02)",
        f"{path}:8: [metric.compute::c] unobserved: the run did not cover it"]
