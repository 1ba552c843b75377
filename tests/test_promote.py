"""promote writes generated divergences only: never a skip, a pass, an xpass or a candidate given up on."""

from __future__ import annotations

import json

from conformance.corpus import cases as case_corpus
from conformance.corpus.promote import promote
from conformance.kit import wire
from conformance.report.reader import read
from conformance.run import generate
from tests.report_lines import footer_line, header_line


def _generated(outcome: str, value, **fields) -> dict:
    encoded = wire.encode(value)
    return {"type": "case", "id": generate.finding_id("reward.parse", value), "surface": "reward.parse",
            "outcome": outcome, "origin": "generated", "input": encoded, **fields}


def test_promote_writes_only_divergences(tmp_path):
    raised = {"raised": "VerifierOutputParseError"}
    fail = _generated("fail", {"reward_txt": b" "}, oracle=raised, candidate={"raised": "RewardFileEmptyError"},
                      mismatches=[{"cls": "error-type", "path": "$", "expected": "VerifierOutputParseError",
                                   "actual": "RewardFileEmptyError"}])
    xfail = _generated("xfail", {"reward_txt": b"\t"}, oracle=raised, candidate={"raised": "RewardFileEmptyError"})
    not_divergences = [
        _generated("skip", {"reward_txt": b"x"}, oracle=raised, detail="not implemented yet"),
        _generated("pass", {"reward_txt": b"y"}, oracle=raised, candidate=raised),
        _generated("xpass", {"reward_txt": b"z"}, oracle=raised, candidate=raised),
        _generated("broken", {"reward_txt": b"w"}, oracle=raised, detail="not run: gave up"),
    ]
    lines = [header_line(surfaces=["reward.parse"]), fail, *not_divergences, xfail,
             {"type": "generated", "surface": "reward.parse", "profile": "ci", "seed": 0, "max_examples": 5,
              "inputs_run": 5, "divergences": [fail["id"]], "skipped": 1, "skip_reason": "not implemented yet"},
             footer_line()]
    report = tmp_path / "report.jsonl"
    report.write_text("".join(json.dumps(line) + "\n" for line in lines))
    root = tmp_path / "cases"
    done = promote(read(report), root)
    assert [item.case_id for item in done] == [fail["id"], xfail["id"]]
    loaded, errors = case_corpus.load_file(root / "reward.parse" / "generated.yaml")
    assert errors == [] and [case.id for case in loaded] == [fail["id"], xfail["id"]]
    assert all(case.case.expect.raised == "VerifierOutputParseError" for case in loaded)
