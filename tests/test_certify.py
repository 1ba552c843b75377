"""End to end: the reference conforms, and every deliberately wrong candidate is caught."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conformance.connection.connectors import connect
from conformance.core import surfaces
from conformance.run.runner import run_cases
from tests import wrong_candidates


def _run(corpus, spec, oracle, surface=None):
    candidate = connect(spec)
    try:
        chosen = [c for c in corpus if surface is None or c.case.surface == surface]
        return list(run_cases(chosen, candidate, oracle))
    finally:
        candidate.close()


def test_the_corpus_covers_every_surface(corpus):
    assert {c.case.surface for c in corpus} == set(surfaces.SURFACES)


@pytest.mark.slow
def test_recordings_agree_with_the_live_oracle(corpus, live_oracle):
    records = _run(corpus, "reference", live_oracle)
    stale = [(r.id, r.recording_mismatches) for r in records if r.recording != "agrees"]
    assert stale == []


@pytest.mark.slow
def test_reference_conforms_to_the_live_oracle(corpus, live_oracle):
    records = _run(corpus, "reference", live_oracle)
    assert [(r.id, r.outcome, r.mismatches, r.detail) for r in records if r.outcome != "pass"] == []


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(wrong_candidates.CAUGHT_AS))
def test_wrong_candidate_is_caught_with_the_right_class(name, corpus, live_oracle):
    surface, expected_class = wrong_candidates.CAUGHT_AS[name]
    records = _run(corpus, f"tests.wrong_candidates:{name}", live_oracle)
    failed = [r for r in records if r.outcome != "pass"]
    assert failed, f"{name} went unnoticed"
    # The bug shows where it lives and nowhere else, as a divergence (not a crash).
    assert {r.surface for r in failed} == {surface}
    assert {r.outcome for r in failed} == {"fail"}
    classes = {m.cls.value for r in failed for m in r.mismatches}
    assert expected_class in classes, f"{name}: caught as {sorted(classes)}"


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "conformance.cli.app", *args],
                          capture_output=True, text=True, cwd=cwd)


@pytest.mark.slow
def test_certify_cli_exit_codes_and_report(tmp_path):
    report = tmp_path / "ref.jsonl"
    ok = _cli("certify", "--candidate", "reference", "--oracle", "recorded", "--report", str(report))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "footer"
    assert lines[0]["candidate"]["implementation"]["name"] == "reference"
    assert lines[0]["nan_policy"]
    cases = [line for line in lines if line["type"] == "case"]
    assert lines[-1]["total"] == len(cases) > 0
    assert {c["outcome"] for c in cases} == {"pass"}

    bad = _cli("certify", "--candidate", "tests.wrong_candidates:empty_by_strip", "--oracle", "recorded",
               "--surface", "reward.parse", "--report", str(tmp_path / "bad.jsonl"))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "error-type" in bad.stdout

    usage = _cli("certify", "--candidate", "no-such-candidate", "--oracle", "recorded")
    assert usage.returncode == 2
    assert "unknown candidate" in usage.stderr


def test_exec_transport_carries_the_same_messages(corpus, live_oracle):
    records = _run(corpus, f"exec:{sys.executable} -m conformance.reference", live_oracle, "reward.parse")
    assert records and {r.outcome for r in records} == {"pass"}


@pytest.mark.slow
def test_pytest_items_run_the_cases(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "cases/pass_at_k", "--conformance-candidate", "reference",
         "--conformance-oracle", "recorded", "-q", "-p", "no:cacheprovider", "-n", "2"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert " passed" in proc.stdout
    wrong = subprocess.run(
        [sys.executable, "-m", "pytest", "cases/pass_at_k", "--conformance-candidate",
         "tests.wrong_candidates:pass_at_1", "--conformance-oracle", "recorded", "-q", "-p", "no:cacheprovider"],
        capture_output=True, text=True,
    )
    assert wrong.returncode == 1
    assert "extra-key" in wrong.stdout
