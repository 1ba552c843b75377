"""Stored inputs: a generator run with a seed that comes again sends the inputs an earlier run drew, not drawing them.

The runs are in process and need no harbor: the reference answers as the oracle, and the candidate is
``tests.flaky_candidates:counted`` (the reference, counting every input it is asked, in the order first asked) or
``always_wrong`` (a wrong answer to every reward.parse input). What the candidate was asked is the evidence: the
inputs of a replayed run are held to those of a live run by digest, never to what the store says it holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import app
from conformance.report.reader import read
from conformance.run import certification, stored_inputs
from tests import flaky_candidates

SURFACE = "reward.parse"
BUDGET = 40


@pytest.fixture
def store(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "inputs"
    monkeypatch.setenv(stored_inputs.FOLDER_ENV, str(folder))
    return folder


def _run(tmp_path: Path, name: str, candidate: str = "tests.flaky_candidates:counted", **options):
    flaky_candidates.ASKED.clear()
    settings = {"profile": "ci", "max_examples": BUDGET, **options}
    run = certification.certify(certification.Options(candidate=candidate, oracle="reference", surfaces=[SURFACE],
                                                      no_cases=True, **settings), tmp_path / f"{name}.jsonl")
    generated = read(tmp_path / f"{name}.jsonl").generated
    return run, dict(flaky_candidates.ASKED), {line.surface: line for line in generated}[SURFACE]


def test_a_replayed_run_asks_exactly_the_inputs_a_live_run_draws(tmp_path, store):
    _, live, live_line = _run(tmp_path, "live", input_cache=False)
    assert not store.exists(), "--no-input-cache stores nothing"
    _, first, first_line = _run(tmp_path, "first")
    assert first == live and first_line.replayed == 0
    assert len(list(store.glob("*/*.jsonl"))) == 1
    run, again, again_line = _run(tmp_path, "again")
    assert run.conforms
    assert list(again) == list(live), "the same inputs, in the order drawn"
    assert again == live, "each asked as often"
    assert again_line.replayed == live_line.drawn == sum(live.values()) > 0
    for field in ("inputs_run", "drawn", "features", "skipped", "rejected", "divergences"):
        assert getattr(again_line, field) == getattr(live_line, field), field


@pytest.mark.parametrize("other", [{"seed": 7}, {"max_examples": BUDGET + 1}, {"profile": "dev", "seed": 0}])
def test_another_key_draws_its_own_inputs(tmp_path, store, other):
    _run(tmp_path, "first")
    _, _, line = _run(tmp_path, "other", **other)
    assert line.replayed == 0
    assert len(list(store.glob("*/*.jsonl"))) == 2


def test_a_fresh_seed_is_never_stored(tmp_path, store):
    _run(tmp_path, "dev", profile="dev")
    assert not store.exists()


def test_a_divergence_on_a_replayed_input_hands_over_to_live_generation(tmp_path, store):
    _run(tmp_path, "conforming")
    # Unshrunk (--first-finding): what the hand-over draws is the question, not how it shrinks.
    wrong = {"candidate": "tests.flaky_candidates:always_wrong", "first_finding": True}
    run, _, line = _run(tmp_path, "replayed", **wrong)
    _, _, live = _run(tmp_path, "live", input_cache=False, **wrong)
    assert not run.conforms
    assert line.divergences == live.divergences != []
    assert line.replayed == 0, "the live run drew them again"
    assert len(list(store.glob("*/*.jsonl"))) == 1, "a run with findings stores nothing"


def test_a_damaged_sequence_is_drawn_again_and_written_anew(tmp_path, store):
    _, live, _ = _run(tmp_path, "first")
    (stored,) = store.glob("*/*.jsonl")
    header = stored.read_text().splitlines()[0]
    stored.write_text(header + "\n{not json\n")
    _, asked, line = _run(tmp_path, "again")
    assert line.replayed == 0 and asked == live
    assert stored.read_text().count("\n") == sum(live.values()) + 1


def test_a_foreign_sequence_under_the_name_is_not_sent(tmp_path, store):
    _run(tmp_path, "first")
    (stored,) = store.glob("*/*.jsonl")
    lines = stored.read_text().splitlines()
    key = json.loads(lines[0])
    stored.write_text("\n".join([json.dumps({**key, "seed": 99}), *lines[1:]]) + "\n")
    assert _run(tmp_path, "again")[2].replayed == 0


def test_the_key_follows_the_strategy_code(monkeypatch):
    before = stored_inputs.key(SURFACE, profile="ci", seed=0, budget=10, claimed=None)
    claimed = stored_inputs.key(SURFACE, profile="ci", seed=0, budget=10, claimed={"reward_txt": ["1"]})
    assert claimed.digest() != before.digest()
    monkeypatch.setattr(stored_inputs, "__version__", "another")
    stored_inputs.strategy_fingerprint.cache_clear()
    try:
        after = stored_inputs.key(SURFACE, profile="ci", seed=0, budget=10, claimed=None)
    finally:
        stored_inputs.strategy_fingerprint.cache_clear()
    assert after.strategy != before.strategy and after.digest() != before.digest()


def test_cache_info_and_clear_cover_the_stored_inputs(tmp_path, store, monkeypatch):
    monkeypatch.setenv("HARBOR_CONFORMANCE_ANSWER_CACHE", str(tmp_path / "answers"))
    _run(tmp_path, "first")
    info = CliRunner().invoke(app, ["cache", "info"], env={"COLUMNS": "300"})
    assert info.exit_code == 0 and "1 sequence(s) of generated inputs" in info.output
    assert f"{SURFACE}: 1 sequence(s)" in info.output
    cleared = CliRunner().invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0 and "removed 1 sequence(s) of stored inputs" in cleared.output
    assert not list(store.glob("*/*.jsonl"))


def test_a_first_finding_run_takes_the_replayed_divergence_as_it_is(tmp_path, store):
    _run(tmp_path, "conforming")
    wrong = {"candidate": "tests.flaky_candidates:always_wrong", "first_finding": True}
    _, _, line = _run(tmp_path, "replayed", **wrong)
    _, _, live_line = _run(tmp_path, "live", input_cache=False, **wrong)
    assert line.divergences == live_line.divergences != [], "the input a live run finds first"
    # always_wrong diverges on every input: the first one sent is the finding, and no live run follows it
    assert line.inputs_run == 1 and line.replayed == 0


REPLAY_IN_A_NEW_PROCESS = """
import sys
from pathlib import Path
from conformance.core import surfaces
from conformance.report.reader import read
from conformance.run import certification
report = Path(sys.argv[1])
run = certification.certify(certification.Options(
    candidate="reference", oracle="reference", surfaces=list(surfaces.SURFACES), no_cases=True, profile="ci",
    max_examples=3), report)
assert run.conforms, report.read_text()
replayed = {line.surface: line.replayed for line in read(report).generated}
drawing = sorted(m for m in sys.modules if m.split(".")[0] == "hypothesis" or m.endswith(".strategy"))
print(sorted(replayed.items()), drawing)
"""


def test_a_run_that_sends_stored_inputs_imports_no_hypothesis_and_no_strategy(tmp_path, store):
    """Sending stored inputs needs nothing of Hypothesis (a third of a second to import) nor of any strategy: the
    features of each input are computed without them."""
    import os
    import subprocess
    import sys

    from conformance.core import surfaces

    every = list(surfaces.SURFACES)
    certification.certify(certification.Options(candidate="reference", oracle="reference", surfaces=every,
                                                no_cases=True, profile="ci", max_examples=3), tmp_path / "first.jsonl")
    done = subprocess.run([sys.executable, "-c", REPLAY_IN_A_NEW_PROCESS, str(tmp_path / "again.jsonl")],
                          capture_output=True, text=True, env=os.environ, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == f"{sorted((name, 3) for name in every)} []"
