"""The upgrade gate end to end, and the expectation files the suite ships for harbor's releases.

The gate runs harbor 0.13.1 against a later release on one surface, with
cases only, to stay quick: with the release's committed expectation file it
passes; with an empty one every change it lists fails the gate and is named
in the Markdown report.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from conformance.corpus import cases
from conformance.run import expectations

ORACLES = Path(str(resources.files("oracles")))  # what the suite ships, wherever it is installed
SHIPPED = sorted((ORACLES / "expectations").glob("*.yaml"))


def _gate(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli.app", "gate", *args, "--no-generate",
                           "--out", str(tmp_path)], capture_output=True, text=True)


@pytest.mark.slow
def test_a_release_passes_its_gate_with_its_expectations_and_fails_without(tmp_path, harbor_release):
    harbor_release("0.24.0")
    # harbor 0.24.0 records a step's verifier timeout as VerifierTimeoutError, 0.13.1 as TimeoutError.
    listed = _gate(tmp_path / "listed", "0.24.0", "-s", "multi_step.reward")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    text = (tmp_path / "listed" / "harbor-0.24.0.md").read_text()
    assert "Gate: passed." in text and "VerifierTimeoutError" in text
    empty = tmp_path / "empty.yaml"
    empty.write_text("divergences: []\n")
    unlisted = _gate(tmp_path / "unlisted", "0.24.0", "-s", "multi_step.reward", "--expectations", str(empty))
    assert unlisted.returncode == 1
    text = (tmp_path / "unlisted" / "harbor-0.24.0.md").read_text()
    assert "Gate: FAILED." in text
    assert "### `multi_step.reward::timeout-is-plain-timeouterror`" in text
    assert "**not in the expectation file**" in text
    assert "harbor 0.13.1:" in text and "harbor 0.24.0:" in text


@pytest.mark.slow
def test_a_release_without_changes_says_so(tmp_path, harbor_release):
    harbor_release("0.13.0")
    proc = _gate(tmp_path, "0.13.0", "-s", "pass_at_k")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No scoring behaviour the suite checks changed" in (tmp_path / "harbor-0.13.0.md").read_text()


def test_the_gate_refuses_expectations_for_several_releases(tmp_path):
    (tmp_path / "x.yaml").write_text("")  # there (a missing one is refused first), yet of no one release
    proc = _gate(tmp_path, "0.24.0", "0.25.0", "--expectations", str(tmp_path / "x.yaml"))
    assert proc.returncode == 2 and "one release" in proc.stderr


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_expectations_are_reviewed_and_name_real_cases(path):
    document = expectations.load(path)
    assert document.candidate == f"harbor=={path.stem.removeprefix('harbor-')}"
    assert document.divergences, "a release without changes needs no file"
    ids = {item.id for item in cases.load_corpus(cases.default_root())}
    for entry in document.divergences:
        assert not entry.reason.startswith("not yet reviewed"), entry.id
        assert entry.link, entry.id
        generated = entry.id.split("::", 1)[1].startswith("gen-")
        assert generated or entry.id in ids, f"{entry.id} names no case"


def test_every_release_with_a_lock_from_0_14_0_on_has_expectations():
    # 0.14.0 is the first release the gate finds a change in (docs/harbor-changes.md): a trial result.json read
    # back is written with one more key (result.load).
    locks = ORACLES / "locks"
    versions = sorted((p.stem.removeprefix("harbor-") for p in locks.glob("harbor-*.lock")),
                      key=lambda v: tuple(map(int, v.split("."))))
    later = [v for v in versions if tuple(map(int, v.split("."))) >= (0, 14, 0)]
    assert later and [p.stem for p in SHIPPED] == [f"harbor-{v}" for v in later]
