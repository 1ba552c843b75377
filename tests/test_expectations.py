"""Expectation files: known divergences become xfail; anything else about them fails the run.

The runs use the corpus's recorded oracle results (``--oracle recorded``) and
the deliberately wrong candidate ``pass_at_1``, which adds a k=1 entry to
pass@k: on a case with two or more trials per task it diverges with an
``extra-key``; on a case whose groups are all disabled (a non-binary reward)
both sides give ``{}`` and it conforms.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import app
from conformance.run import certification, expectation_writing, expectations
from tests.report_lines import footer_line, header_line

WRONG = "tests.wrong_candidates:pass_at_1"
DIVERGES = "pass_at_k::all-null-rewards"  # two null trials of one task: pass@1 is extra
CONFORMS = "pass_at_k::half-disables-group"  # a 0.5 reward disables the only group: {} on both sides


def _file(tmp_path: Path, entries: list[dict]) -> Path:
    path = tmp_path / "known.yaml"
    lines = ["candidate: wrong", "divergences:"]
    for entry in entries:
        lines.append(f"  - id: {entry['id']}")
        for key in ("outcome", "classes", "reason", "link"):
            if key in entry:
                lines.append(f"    {key}: {json.dumps(entry[key])}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _certify(tmp_path: Path, known: Path | None, cases: list[str], candidate: str = WRONG):
    options = certification.Options(candidate=candidate, oracle="recorded", case_globs=cases, expectations=known)
    run = certification.certify(options, tmp_path / "report.jsonl")
    return run, {r["id"]: r for r in (line.to_json() for line in run.records)}


def test_a_listed_divergence_becomes_xfail_and_the_run_conforms(tmp_path):
    known = _file(tmp_path, [{"id": DIVERGES, "classes": ["extra-key"], "reason": "k=1 reported", "link": "x"}])
    run, records = _certify(tmp_path, known, [DIVERGES, CONFORMS])
    assert records[DIVERGES]["outcome"] == "xfail"
    assert records[DIVERGES]["expected_divergence"]["reason"] == "k=1 reported"
    assert records[DIVERGES]["mismatches"], "the divergence itself stays in the report"
    assert records[CONFORMS]["outcome"] == "pass"
    assert run.conforms and run.footer.outcomes["xfail"] == 1


def test_without_the_file_the_same_run_fails(tmp_path):
    run, records = _certify(tmp_path, None, [DIVERGES])
    assert records[DIVERGES]["outcome"] == "fail" and not run.conforms


def test_a_divergence_of_another_class_fails_and_says_what_was_listed(tmp_path):
    known = _file(tmp_path, [{"id": DIVERGES, "classes": ["ulp"], "reason": "r"}])
    run, records = _certify(tmp_path, known, [DIVERGES])
    assert records[DIVERGES]["outcome"] == "fail"
    assert "fail [ulp]" in records[DIVERGES]["detail"] and "fail [extra-key]" in records[DIVERGES]["detail"]
    assert not run.conforms


def test_another_outcome_is_another_divergence(tmp_path):
    known = _file(tmp_path, [{"id": DIVERGES, "outcome": "crash", "reason": "r"}])
    run, records = _certify(tmp_path, known, [DIVERGES])
    assert records[DIVERGES]["outcome"] == "fail" and not run.conforms


def test_a_listed_case_that_conforms_is_an_xpass_and_fails_the_run(tmp_path):
    known = _file(tmp_path, [{"id": CONFORMS, "classes": ["extra-key"], "reason": "r"}])
    run, records = _certify(tmp_path, known, [CONFORMS])
    assert records[CONFORMS]["outcome"] == "xpass"
    assert not run.conforms


def test_an_entry_naming_no_case_is_stale_and_fails_the_run(tmp_path):
    known = _file(tmp_path, [{"id": DIVERGES, "classes": ["extra-key"], "reason": "r"},
                             {"id": "pass_at_k::no-such-case", "classes": ["value"], "reason": "r"}])
    run, _ = _certify(tmp_path, known, ["pass_at_k::*"])
    assert run.footer.stale_expectations == ["pass_at_k::no-such-case"]
    assert not run.conforms


def test_entries_outside_the_selection_are_not_stale(tmp_path):
    # A run of one case says nothing of entries for other cases or surfaces.
    known = _file(tmp_path, [{"id": DIVERGES, "classes": ["extra-key"], "reason": "r"},
                             {"id": "reward.parse::txt-one", "classes": ["value"], "reason": "r"}])
    run, _ = _certify(tmp_path, known, [DIVERGES])
    assert run.footer.stale_expectations == [] and run.conforms


@pytest.mark.parametrize(("body", "line", "words"), [
    ("divergences:\n  - id: pass_at_k::a\n    reason: r\n  - id: pass_at_k::b\n    classes: [ulps]\n    reason: r\n",
     4, ["[pass_at_k::b]", "unknown mismatch class", "ulps"]),
    ("divergences:\n  - id: pass_at_k::a\n    outcome: xfail\n    reason: r\n", 2, ["[pass_at_k::a]", "outcome"]),
    ("divergences:\n  - id: pass_at_k::a\n", 2, ["[pass_at_k::a]", "reason", "Field required"]),
    ("divergences:\n  - id: pass_at_k::a\n    reason: r\n    why: x\n", 2, ["why", "Extra inputs"]),
    ("divergences:\n  - id: pass_at_k::a\n    reason: r\n  - id: pass_at_k::a\n    reason: s\n",
     4, ["[pass_at_k::a]", "listed twice", "line 2"]),
    ("divergences:\n  - id: [unclosed\n", 3, ["bad YAML"]),
])
def test_a_broken_expectation_file_names_file_line_and_id(tmp_path, body, line, words):
    path = tmp_path / "broken.yaml"
    path.write_text(body)
    with pytest.raises(expectations.ExpectationError) as info:
        expectations.load(path)
    message = str(info.value)
    assert f"{path}:{line}:" in message
    for word in words:
        assert word in message


def test_certify_refuses_a_broken_expectation_file_with_exit_2(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("divergences:\n  - id: nope\n    reason: r\n")
    proc = subprocess.run([sys.executable, "-m", "conformance.cli.app", "certify", "--oracle", "recorded",
                           "-c", "reference", "-k", DIVERGES, "--expectations", str(path),
                           "--report", str(tmp_path / "r.jsonl")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert f"{path}:2:" in proc.stderr and "[nope]" in proc.stderr


def _report(path: Path, lines: list[dict], surfaces: list[str], expectations_file: str | None = None) -> Path:
    head = header_line(surfaces=surfaces, expectations=expectations_file)
    body = [head, *({"type": "case", "seconds": 0.0, **line} for line in lines), footer_line()]
    path.write_text("".join(json.dumps(item) + "\n" for item in body))
    return path


def _mismatch(cls: str) -> dict:
    return {"cls": cls, "path": "$['reward']", "expected": "1.0", "actual": "2.0"}


def test_update_writes_every_divergence_and_keeps_reviewed_reasons(tmp_path):
    known = tmp_path / "known.yaml"
    known.write_text(
        "divergences:\n"
        "  - id: reward.parse::kept\n    classes: [value]\n    reason: reviewed\n    link: https://example.org/1\n"
        "  - id: reward.parse::class-changed\n    classes: [value]\n    reason: reviewed too\n"
        "  - id: reward.parse::now-passes\n    classes: [value]\n    reason: fixed since\n"
        "  - id: metric.compute::other-surface\n    classes: [ulp]\n    reason: not run here\n")
    report = _report(tmp_path / "r.jsonl", [
        {"id": "reward.parse::kept", "surface": "reward.parse", "outcome": "xfail", "mismatches": [_mismatch("value")],
         "expected_divergence": {"outcome": "fail", "classes": ["value"], "reason": "reviewed"}},
        {"id": "reward.parse::class-changed", "surface": "reward.parse", "outcome": "fail",
         "mismatches": [_mismatch("type")]},
        {"id": "reward.parse::now-passes", "surface": "reward.parse", "outcome": "xpass"},
        {"id": "reward.parse::new", "surface": "reward.parse", "outcome": "crash", "detail": "exited with status 1"},
        {"id": "reward.parse::fine", "surface": "reward.parse", "outcome": "pass"},
    ], ["reward.parse"], str(known))
    proc = subprocess.run([sys.executable, "-m", "conformance.cli.app", "expectations", "update", str(report)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    entries = {e.id: e for e in expectations.load(known).divergences}
    assert set(entries) == {"reward.parse::kept", "reward.parse::class-changed", "reward.parse::new",
                            "metric.compute::other-surface"}
    assert entries["reward.parse::kept"].reason == "reviewed"
    assert entries["reward.parse::kept"].link == "https://example.org/1"
    assert entries["reward.parse::class-changed"].classes == ["type"]
    assert entries["reward.parse::class-changed"].reason == "reviewed too"
    assert entries["reward.parse::new"].outcome == "crash" and entries["reward.parse::new"].classes == []
    assert entries["reward.parse::new"].reason.startswith("not yet reviewed")
    assert "pruned reward.parse::now-passes" in proc.stdout


@pytest.mark.slow
def test_update_then_certify_turns_the_run_green(tmp_path):
    report = tmp_path / "wrong.jsonl"
    run = certification.certify(certification.Options(candidate=WRONG, oracle="recorded", surfaces=["pass_at_k"]),
                                report)
    assert not run.conforms
    known = tmp_path / "wrong.yaml"
    proc = subprocess.run([sys.executable, "-m", "conformance.cli.app", "expectations", "update", str(report),
                           "--file", str(known)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    again, records = _certify(tmp_path, known, ["pass_at_k::*"])
    assert again.conforms
    assert {r["outcome"] for r in records.values()} == {"pass", "xfail"}
    # The reference, held to the wrong candidate's file, passes every listed case: each one an xpass.
    reference, records = _certify(tmp_path, known, ["pass_at_k::*"], candidate="reference")
    assert not reference.conforms
    assert {r["outcome"] for r in records.values()} == {"pass", "xpass"}


# -- refreshing a file written by hand: comments and order are the user's ---------------------------------------

HAND_WRITTEN = """\
# Known divergences of my-runner, reviewed by hand.
# Keep the notes: they say why.

oracle: harbor==0.13.1  # the release we compare with
candidate: exec:./old-runner
divergences:
  # parsing
  - id: reward.parse::zeta
    reason: zeta reviewed   # checked on 2026-01-02
    classes: [value]
    link: https://example.org/zeta

  # its class changed: stays where it is
  - reason: alpha reviewed
    id: reward.parse::alpha
    # the classes follow the report
    classes: [value]   # was value
  # fixed since: goes with its entry
  - id: reward.parse::fixed
    classes: [ulp]
    reason: fixed upstream   # beside the dropped one
  - id: reward.parse::gamma
    reason: gamma reviewed
    classes: [value]
  # another surface, not run: kept
  - id: metric.compute::other
    classes: [ulp]
    reason: not run here
# end of the list
"""


def _update(report: Path, *args: str):
    return CliRunner().invoke(app, ["expectations", "update", str(report), *args])


def _hand_written_refreshed(tmp_path: Path) -> tuple[Path, Path]:
    known = tmp_path / "known.yaml"
    known.write_text(HAND_WRITTEN)
    mismatch = {"path": "$.reward", "expected": "1.0", "actual": "2.0"}
    report = _report(tmp_path / "r.jsonl", [
        {"id": "reward.parse::zeta", "surface": "reward.parse", "outcome": "xfail",
         "mismatches": [{"cls": "value", **mismatch}],
         "expected_divergence": {"outcome": "fail", "classes": ["value"], "reason": "zeta reviewed"}},
        {"id": "reward.parse::alpha", "surface": "reward.parse", "outcome": "fail",
         "mismatches": [{"cls": "type", **mismatch}]},
        {"id": "reward.parse::fixed", "surface": "reward.parse", "outcome": "xpass"},
        {"id": "reward.parse::gamma", "surface": "reward.parse", "outcome": "crash", "detail": "exited with status 3"},
        {"id": "reward.parse::new", "surface": "reward.parse", "outcome": "crash", "detail": "exited with status 1"},
        {"id": "reward.parse::beta", "surface": "reward.parse", "outcome": "fail",
         "mismatches": [{"cls": "type", **mismatch}]},
        {"id": "reward.parse::fine", "surface": "reward.parse", "outcome": "pass"},
    ], ["reward.parse"], str(known))
    return known, report


def test_update_changes_a_hand_written_file_in_place(tmp_path):
    known, report = _hand_written_refreshed(tmp_path)
    result = _update(report)
    assert result.exit_code == 0, result.output
    # Every comment stays but the dropped entry's own (beside it, and right above it); the keys keep their order
    # in each entry, the entries theirs; alpha gets its new classes and gamma its outcome in place; each entry
    # the run saw is stamped last seen on the report's date (its header's, 2026-01-01), the one of another
    # surface is left as it was; the new entries come last, in id order, first and last seen on that date, before
    # the file's closing comment.
    assert known.read_text() == """\
# Known divergences of my-runner, reviewed by hand.
# Keep the notes: they say why.

oracle: harbor==0.13.1  # the release we compare with
candidate: cand
divergences:
  # parsing
  - id: reward.parse::zeta
    reason: zeta reviewed   # checked on 2026-01-02
    classes: [value]
    link: https://example.org/zeta
    last_seen: 2026-01-01

  # its class changed: stays where it is
  - reason: alpha reviewed
    id: reward.parse::alpha
    # the classes follow the report
    classes: [type]    # was value
    last_seen: 2026-01-01
  - id: reward.parse::gamma
    outcome: crash
    reason: gamma reviewed
    classes: []
    last_seen: 2026-01-01
  # another surface, not run: kept
  - id: metric.compute::other
    classes: [ulp]
    reason: not run here
  - id: reward.parse::beta
    outcome: fail
    classes: [type]
    reason: 'not yet reviewed: type at $.reward: oracle 1.0 / candidate 2.0'
    first_seen: 2026-01-01
    last_seen: 2026-01-01
  - id: reward.parse::new
    outcome: crash
    classes: []
    reason: 'not yet reviewed: exited with status 1'
    first_seen: 2026-01-01
    last_seen: 2026-01-01
# end of the list
"""
    assert result.output.splitlines() == [
        "added reward.parse::new", "added reward.parse::beta", "updated reward.parse::alpha",
        "updated reward.parse::gamma", "pruned reward.parse::fixed",
        f"{known}: 6 known divergence(s) on 2026-01-01; 4 kept, 3 stamped, 2 added, 2 updated, 1 pruned (fixed), "
        "1 unobserved, 0 expired"]


def test_a_second_update_from_the_same_report_changes_nothing(tmp_path):
    known, report = _hand_written_refreshed(tmp_path)
    assert _update(report).exit_code == 0
    first = known.read_text()
    assert _update(report).exit_code == 0
    assert known.read_text() == first


def test_an_unchanged_entry_keeps_its_lines_however_long_or_folded(tmp_path):
    # ruamel.yaml alone would fold the long line at 110 columns and join the folded one.
    long = "harbor keeps " + "a very long reason " * 8 + "on one line"
    text = ("candidate: cand\n"
            "oracle: harbor==0.13.1\n"
            "divergences:\n"
            f"- id: reward.parse::long\n  reason: {long}  # beside it\n  classes: [value]\n"
            "- id: reward.parse::folded\n  reason: a reason folded\n    by hand\n  classes: [value]\n"
            "- id: reward.parse::changed\n  reason: a reason folded\n    by hand too\n  classes: [value]\n")
    known = tmp_path / "known.yaml"
    known.write_text(text)
    report = _report(tmp_path / "r.jsonl", [
        {"id": f"reward.parse::{name}", "surface": "reward.parse", "outcome": "fail",
         "mismatches": [_mismatch(cls)]} for name, cls in (("long", "value"), ("folded", "value"), ("changed", "ulp"))
    ], ["reward.parse"], str(known))
    assert _update(report).exit_code == 0
    # Each entry the run saw gets its last_seen line, after its last key; no other line changes.
    expected = text
    for before, after in (("# beside it\n  classes: [value]\n", "# beside it\n  classes: [value]\n"),
                          ("by hand\n  classes: [value]\n", "by hand\n  classes: [value]\n"),
                          ("by hand too\n  classes: [value]\n", "by hand too\n  classes: [ulp]\n")):
        expected = expected.replace(before, after + "  last_seen: 2026-01-01\n")
    assert known.read_text() == expected


@pytest.mark.slow
def test_the_shipped_files_come_back_unchanged_when_nothing_changed():
    for path in sorted((Path(__file__).parent.parent / "oracles" / "expectations").glob("*.yaml")):
        text = path.read_text()
        document = expectations.load(path)
        assert expectation_writing.rewritten(text, document, document) == text, path.name


def test_dropping_every_entry_keeps_the_other_comments(tmp_path):
    known = tmp_path / "known.yaml"
    known.write_text("# mine\ncandidate: cand  # the runner\noracle: harbor==0.13.1\ndivergences:\n"
                     "  - id: reward.parse::fixed\n    reason: r\n\n# closing note\n")
    report = _report(tmp_path / "r.jsonl", [{"id": "reward.parse::fixed", "surface": "reward.parse",
                                             "outcome": "xpass"}], ["reward.parse"], str(known))
    assert _update(report).exit_code == 0
    assert known.read_text() == ("# mine\ncandidate: cand  # the runner\noracle: harbor==0.13.1\n"
                                 "\n# closing note\ndivergences: []\n")
    assert expectations.load(known).divergences == []


def test_a_new_file_gets_the_header_comment(tmp_path):
    report = _report(tmp_path / "r.jsonl", [{"id": "reward.parse::new", "surface": "reward.parse",
                                             "outcome": "crash", "detail": "exited with status 1"}], ["reward.parse"])
    known = tmp_path / "new.yaml"
    assert _update(report, "--file", str(known)).exit_code == 0
    assert known.read_text() == (
        "# Known divergences of this candidate from the oracle, by case id: `conformance certify\n"
        "# --expectations FILE` turns them into xfail. Refresh with `conformance expectations update`.\n"
        "candidate: cand\noracle: harbor==0.13.1\ndivergences:\n- id: reward.parse::new\n  outcome: crash\n"
        "  classes: []\n  reason: 'not yet reviewed: exited with status 1'\n  first_seen: 2026-01-01\n"
        "  last_seen: 2026-01-01\n")


# -- expectations check: what a pre-commit hook runs -------------------------------------------------------------

def _check(*paths: Path):
    return CliRunner().invoke(app, ["expectations", "check", *map(str, paths)])


def test_check_passes_good_files_with_a_line_each(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(HAND_WRITTEN)
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing known yet\n")
    result = _check(good, empty)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [f"{good}: 5 known divergence(s)", f"{empty}: 0 known divergence(s)"]


@pytest.mark.parametrize(("body", "expected"), [
    ("divergences:\n  - id: nope\n    reason: r\n",
     ["2: [nope] divergences.0.id: String should match pattern"]),
    ("divergences:\n  - id: pass_at_k::a\n    reason: r\n    why: x\n",
     ["2: [pass_at_k::a] divergences.0.why: Extra inputs are not permitted"]),
    ("divergences:\n  - id: pass_at_k::a\n    reason: r\n  - id: pass_at_k::b\n    reason: r\n"
     "  - id: pass_at_k::a\n    reason: s\n",
     ["6: [pass_at_k::a] listed twice (first at line 2)"]),
    ("divergences:\n  - id: pass_at_k::a\n    reason: r\n    reason: s\n", ["4: key 'reason' given twice"]),
    ("divergences:\n  - id: [unclosed\n", ["3: bad YAML: expected ',' or ']'"]),
    # Every problem of a file, in line order.
    ("divergences:\n  - id: Bad\n    reason: r\n  - id: pass_at_k::a\n    classes: [ulps]\n    reason: r\n",
     ["2: [Bad] divergences.0.id:", "4: [pass_at_k::a] divergences.1.classes: Value error, unknown mismatch class"]),
])
def test_check_names_file_and_line_of_each_problem_and_exits_2(tmp_path, body, expected):
    good = tmp_path / "good.yaml"
    good.write_text("divergences: []\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text(body)
    result = _check(broken, good)
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert len(lines) == len(expected) + 1
    for line, start in zip(lines, expected, strict=False):
        assert line.startswith(f"{broken}:{start}"), line
    assert lines[-1] == f"{good}: 0 known divergence(s)"
