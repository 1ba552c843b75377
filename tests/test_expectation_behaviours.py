"""Behaviour entries (``SURFACE::gen-*``): a known divergence of a surface's generated inputs, whichever input shows
it.

A generator draws other inputs of the same bug from one run to the next (a fresh seed, a candidate that answers a
little differently), so an entry naming one input by its digest goes stale while the bug stays. A behaviour entry
holds every generated input of its surface that diverges with its signature; it is never stale and never pruned, and
an entry naming an input comes first.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import app
from conformance.core.outcomes import Outcome
from conformance.report.model import CaseLine
from conformance.run import expectations
from conformance.run.expectations import Coverage, Expectations
from tests.report_lines import footer_line, header_line

STARTED = "2026-03-02T12:00:00+00:00"
FILE = """\
divergences:
- id: job.result::gen-*
  classes: [error-vs-value]
  reason: a resume runs again the trials it cannot read
  last_seen: 2026-01-01
- id: job.result::gen-*
  classes: [value]
  reason: another behaviour of the same surface
- id: job.result::gen-aaaaaaaaaaaa
  classes: [value]
  reason: this very input
"""


def _line(case_id: str, cls: str | None, origin: str = "generated") -> dict:
    mismatches = [{"cls": cls, "path": "$", "expected": "1", "actual": "2"}] if cls else []
    return {"id": case_id, "surface": case_id.split("::")[0], "origin": origin, "outcome": "fail" if cls else "pass",
            "input": {"dict": []}, "mismatches": mismatches}


def _record(case_id: str, cls: str | None, origin: str = "generated") -> CaseLine:
    return CaseLine.model_validate({"type": "case", "seconds": 0.0, **_line(case_id, cls, origin)})


def _known(tmp_path: Path, text: str = FILE) -> Expectations:
    path = tmp_path / "known.yaml"
    path.write_text(text)
    return Expectations.from_file(path)


def test_any_generated_input_of_the_surface_with_the_signature_is_expected(tmp_path):
    known = _known(tmp_path)
    for digest in ("gen-111111111111", "gen-222222222222"):
        applied = known.apply(_record(f"job.result::{digest}", "error-vs-value"))
        assert applied.outcome is Outcome.XFAIL
        assert applied.expected_divergence is not None
        assert applied.expected_divergence.reason == "a resume runs again the trials it cannot read"
    other = known.apply(_record("job.result::gen-333333333333", "value"))
    assert other.outcome is Outcome.XFAIL and other.expected_divergence is not None
    assert other.expected_divergence.reason == "another behaviour of the same surface"


@pytest.mark.parametrize(("case_id", "cls", "origin"), [
    ("job.result::gen-111111111111", "missing-key", "generated"),  # another signature
    ("result.load::gen-111111111111", "error-vs-value", "generated"),  # another surface
    ("job.result::resume-unreadable", "error-vs-value", "case"),  # a case is named by its id, never by behaviour
])
def test_a_behaviour_holds_only_its_surfaces_generated_inputs_with_its_signature(tmp_path, case_id, cls, origin):
    assert _known(tmp_path).apply(_record(case_id, cls, origin)).outcome is Outcome.FAIL


def test_an_entry_naming_the_input_comes_before_the_behaviour(tmp_path):
    # listed as `value`, it diverges with `error-vs-value`: the behaviour of that signature does not excuse it
    applied = _known(tmp_path).apply(_record("job.result::gen-aaaaaaaaaaaa", "error-vs-value"))
    assert applied.outcome is Outcome.FAIL
    assert "known divergence in known.yaml is fail [value]" in (applied.detail or "")


def test_a_behaviour_no_input_met_is_not_stale(tmp_path):
    known = _known(tmp_path)
    known.apply(_record("job.result::gen-aaaaaaaaaaaa", "value"))
    assert known.stale(Coverage(case_surfaces=frozenset({"job.result"}),
                                generators=frozenset({"job.result"}))) == []


def test_an_expired_behaviour_counts_as_new_and_is_named(tmp_path):
    known = _known(tmp_path, FILE.replace("  last_seen: 2026-01-01\n", "  expires: 2026-02-01\n")).dated(
        date(2026, 3, 2))
    applied = known.apply(_record("job.result::gen-111111111111", "error-vs-value"))
    assert applied.outcome is Outcome.FAIL and "expired on 2026-02-01" in (applied.detail or "")
    assert known.expired(["job.result::gen-111111111111"]) == ["job.result::gen-* fail [error-vs-value]"]


@pytest.mark.parametrize(("text", "line", "words"), [
    ("divergences:\n- id: job.result::gen-*\n  reason: a\n- id: job.result::gen-*\n  reason: b\n", 4,
     "[job.result::gen-* fail] listed twice (first at line 2)"),
    ("divergences:\n- id: job.result::gen-*x\n  reason: a\n", 2, "id: String should match pattern"),
])
def test_a_behaviour_listed_twice_or_misspelt_is_a_problem_of_the_file(tmp_path, text, line, words):
    path = tmp_path / "known.yaml"
    path.write_text(text)
    document, problems = expectations.checked(path)
    assert document is None
    assert any(p.startswith(f"{path}:{line}:") and words in p for p in problems), problems


def test_update_stamps_a_behaviour_once_and_lists_no_input_it_holds(tmp_path):
    known = tmp_path / "known.yaml"
    known.write_text(FILE)
    lines = [_line("job.result::gen-111111111111", "error-vs-value"),
             _line("job.result::gen-222222222222", "error-vs-value"),
             _line("job.result::gen-444444444444", "missing-key")]
    generated = {"type": "generated", "surface": "job.result", "profile": "ci", "seed": 0, "max_examples": 10,
                 "inputs_run": 10, "divergences": [line["id"] for line in lines]}
    body = [header_line(surfaces=["job.result"], started_at=STARTED, expectations=str(known)),
            *({"type": "case", "seconds": 0.0, **line} for line in lines), generated, footer_line()]
    report = tmp_path / "r.jsonl"
    report.write_text("".join(json.dumps(item) + "\n" for item in body))
    result = CliRunner().invoke(app, ["expectations", "update", str(report)])
    assert result.exit_code == 0, result.output
    entries = {e.key: e for e in expectations.load(known).divergences}
    assert set(entries) == {"job.result::gen-* fail [error-vs-value]", "job.result::gen-* fail [value]",
                            "job.result::gen-444444444444"}
    assert entries["job.result::gen-* fail [error-vs-value]"].last_seen == date(2026, 3, 2)
    # the run's generator did not meet the `value` behaviour: kept as it was; the input named and not met is fixed
    assert entries["job.result::gen-* fail [value]"].last_seen is None
    assert "pruned job.result::gen-aaaaaaaaaaaa" in result.output
    assert "added job.result::gen-444444444444" in result.output
    assert "1 stamped, 1 added" in result.output
