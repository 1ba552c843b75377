"""``conformance cases record``: the live oracle's result written into cases without one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.connection.replies import Reply
from conformance.corpus import cases as case_corpus
from conformance.corpus.record import record

CASE_FILE = """\
# a comment that stays
surface: reward.parse
cases:
  - id: reward.parse::half
    description: "0.5"
    spec: seed-003 §1
    input: {reward_txt: !bytes "0.5"}

  # between two cases
  - id: reward.parse::recorded-already
    description: "kept as it is, even though it is wrong"
    spec: seed-003 §1
    input: {reward_txt: !bytes "1"}
    expect: {output: {"reward": !float 2.0}}
  - id: reward.parse::empty
    description: "empty"
    spec: seed-003 §1
    input: {reward_txt: !bytes ""}
"""


def _corpus(tmp_path: Path) -> Path:
    (tmp_path / "reward.parse").mkdir()
    (tmp_path / "reward.parse" / "t.yaml").write_text(CASE_FILE)
    return tmp_path


def _expectations(root: Path) -> dict[str, object]:
    loaded = case_corpus.load_corpus(root)
    return {item.id: item.case.expect.result() if item.case.expect else None for item in loaded}


def test_recording_from_the_live_oracle_fills_only_the_missing_expectations(tmp_path, live_oracle):
    root = _corpus(tmp_path)
    done = record(root, live_oracle.connection)
    assert [(d.case_id, d.expect is not None) for d in done] == [("reward.parse::half", True),
                                                                  ("reward.parse::empty", True)]
    got = _expectations(root)
    assert got["reward.parse::half"].value == {"reward": 0.5}  # float("0.5")
    assert got["reward.parse::empty"].raised == "RewardFileEmptyError"
    # "Reward file is empty at ...": agent-challenge reads the message as harbor_reward_empty.
    assert got["reward.parse::empty"].reason_code == "harbor_reward_empty"
    assert got["reward.parse::recorded-already"].value == {"reward": 2.0}  # left alone
    text = (root / "reward.parse" / "t.yaml").read_text()
    assert text.startswith("# a comment that stays\n") and "  # between two cases\n" in text
    # The expectation closes its own case, before the blank line and the comment.
    assert '    input: {reward_txt: !bytes "0.5"}\n    expect: ' in text
    assert record(root, live_oracle.connection) == []  # nothing left to record


class _Failing:
    spec = "stub"
    implementation: dict = {}

    def run(self, seq, surface, input_wire):
        return Reply("errored", detail="adapter bug")


def test_an_oracle_without_a_result_records_nothing(tmp_path):
    root = _corpus(tmp_path)
    before = (root / "reward.parse" / "t.yaml").read_text()
    done = record(root, _Failing())
    assert {d.expect for d in done} == {None}
    assert all("errored" in d.reason and "adapter bug" in d.reason for d in done)
    assert (root / "reward.parse" / "t.yaml").read_text() == before


@pytest.mark.usefixtures("harbor_env")
def test_the_cli_records_and_says_how_many(tmp_path):
    root = _corpus(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "conformance.cli.app", "cases", "record", str(root)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "recorded 2 case(s) from harbor==0.13.1; 0 left without a result" in proc.stdout
    assert all(v is not None for v in _expectations(root).values())
