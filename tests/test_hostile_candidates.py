"""Candidates that misbehave: each misbehaviour is its own outcome, the run goes on, the report stays whole.

The chaos candidate (tests/chaos_candidate.py) answers like the reference
implementation except where its plan says otherwise, request by request. The
cases are reward.parse's, checked against their recorded results, so every
case it answers correctly passes and nothing else can make one fail.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.connection.replies import PROTOCOL_ERRORS
from conformance.corpus import cases as case_corpus
from conformance.report import junit, markdown
from conformance.report import reader as report
from conformance.run import certification

CHAOS = Path(__file__).resolve().parent / "chaos_candidate.py"
GLOB = "reward.parse::*"


def chaos(tmp_path: Path, **plan) -> str:
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    return f"exec:{sys.executable} {CHAOS} {tmp_path / 'plan.json'}"


def certify(tmp_path: Path, candidate: str, **options) -> certification.Run:
    options = {"oracle": "recorded", "case_globs": [GLOB], "no_generate": True, "timeout": 10.0,
               "timeout_multiplier": 0.3, **options}  # a hang costs 3 s, a stop 3 s
    return certification.certify(certification.Options(candidate=candidate, **options), tmp_path / "report.jsonl")


def requests(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]


def reward_parse_ids(glob: str = GLOB) -> list[str]:
    loaded = certification.load_corpus(case_corpus.default_root())
    return [i.id for i in case_corpus.select(loaded, ids=[glob], harbor_version="0.13.1")]


def assert_whole_report(path: Path, ids: list[str]) -> report.Report:
    """Every selected case recorded exactly once, in a report with its header and footer."""
    data = report.read(path)
    assert data.header is not None and data.footer is not None and not data.truncated
    assert [r.id for r in data.records] == ids
    assert data.footer.total == len(ids)
    return data


# (behaviour of the n-th run request, outcome of the n-th case, protocol error name)
MISBEHAVIOURS = [
    ("ok", "pass", None),
    ("hang", "timeout", None),
    ("ok", "pass", None),  # the process was killed and is restarted: the run goes on
    ("crash", "crash", None),
    ("wrong-seq", "protocol-error", "wrong-seq"),
    ("malformed-json", "protocol-error", "malformed-json"),
    ("not-protocol", "protocol-error", "not-protocol"),
    ("split-reply", "protocol-error", "split-reply"),
    ("split-writes", "pass", None),  # a line may come in any number of writes
    ("huge", "protocol-error", "oversized-line"),
    ("slow", "pass", None),
    ("bare-number", "protocol-error", "invalid-reply"),
    ("exit-quietly", "crash", None),
    ("float-seq", "pass", None),  # lenient without --validate-protocol
    ("double", "pass", None),
    ("ok", "protocol-error", "unsolicited-reply"),  # the second reply is found before the next request
    ("ok", "pass", None),
]


@pytest.mark.slow
def test_each_misbehaviour_is_its_own_outcome_and_the_run_goes_on(tmp_path):
    plan = [behaviour for behaviour, _, _ in MISBEHAVIOURS]
    run = certify(tmp_path, chaos(tmp_path, runs=plan), broken_after=100)
    ids = reward_parse_ids()
    data = assert_whole_report(tmp_path / "report.jsonl", ids)
    got = [(r.outcome, r.protocol_error) for r in data.records[:len(MISBEHAVIOURS)]]
    assert got == [(outcome, error) for _, outcome, error in MISBEHAVIOURS]
    assert all(r.outcome == "pass" for r in data.records[len(MISBEHAVIOURS):])
    assert "chaos: crash on seq" in data.records[3].detail  # the stderr tail
    assert data.footer.protocol_errors == {"invalid-reply": 1, "malformed-json": 1, "not-protocol": 1,
                                              "oversized-line": 1, "split-reply": 1, "unsolicited-reply": 1,
                                              "wrong-seq": 1}
    assert not run.conforms and data.footer.conforms is False
    # Every start was in one fresh folder, removed when the run ended.
    folders = {line["cwd"] for line in requests(tmp_path)}
    assert len(folders) == 1 and Path(folders.pop()).name.startswith("conformance-candidate-")
    assert not Path(requests(tmp_path)[0]["cwd"]).exists()


def test_validate_protocol_holds_replies_to_the_schema(tmp_path):
    run = certify(tmp_path, chaos(tmp_path, runs=["float-seq", "ok"]), validate_protocol=True,
                  case_globs=["reward.parse::txt-*"])
    first, second = run.records[:2]
    assert (first.outcome, first.protocol_error) == ("protocol-error", "schema-violation")
    assert "seq" in first.detail and "integer" in first.detail
    assert second.outcome == "pass"


@pytest.mark.slow
def test_an_answer_for_a_surface_the_handshake_does_not_list(tmp_path):
    candidate = chaos(tmp_path, surfaces=["pass_at_k"])
    run = certify(tmp_path, candidate, case_globs=["reward.parse::txt-*"], broken_after=100)
    assert {(r.outcome, r.protocol_error) for r in run.records} == {("protocol-error", "undeclared-surface")}


@pytest.mark.slow
def test_consecutive_crashes_declare_the_candidate_broken_and_every_case_is_still_recorded(tmp_path):
    run = certify(tmp_path, chaos(tmp_path, runs=["ok", "crash", "ok", "crash", "crash", "crash"]),
                  broken_after=3)
    ids = reward_parse_ids()
    data = assert_whole_report(tmp_path / "report.jsonl", ids)
    outcomes = [r.outcome for r in data.records]
    # The streak is reset by a pass: broken after the 4th, 5th and 6th requests crash.
    assert outcomes[:6] == ["pass", "crash", "pass", "crash", "crash", "crash"]
    assert set(outcomes[6:]) == {"broken"} and len(outcomes[6:]) == len(ids) - 6
    assert "3 consecutive" in data.records[6].detail and "chaos: crash" not in data.records[6].detail
    assert len([line for line in requests(tmp_path) if line["cmd"] == "run"]) == 6  # nothing sent once broken
    assert not run.conforms


@pytest.mark.slow
def test_a_candidate_that_hangs_on_start_is_killed_and_every_case_recorded(tmp_path):
    run = certify(tmp_path, chaos(tmp_path, starts=["hang"]), timeout_multiplier=0.02)  # start: 2.4 s
    data = assert_whole_report(tmp_path / "report.jsonl", reward_parse_ids())
    assert {r.outcome for r in data.records} == {"broken"}
    assert data.candidate_problems[0].stage == "start" and data.candidate_problems[0].outcome == "timeout"
    assert data.footer.candidate_problems == ["start: timeout"]
    assert data.header.candidate.implementation is None
    assert not run.conforms
    assert "The candidate failed to start: timeout" in markdown.summary(data)
    assert junit.render(data).count("<error") == len(data.records)  # each case not run is an error, not a pass


# Each a restart that fails and one that works (a second each): one in the offline tier.
@pytest.mark.parametrize(("behaviour", "outcome", "error"), [
    ("crash", "crash", None),
    pytest.param("garbage", "protocol-error", "not-protocol", marks=pytest.mark.slow),
    pytest.param("bad-handshake", "protocol-error", "bad-handshake", marks=pytest.mark.slow),
])
def test_a_failed_restart_is_that_cases_outcome_and_the_next_case_tries_again(tmp_path, behaviour, outcome, error):
    run = certify(tmp_path, chaos(tmp_path, runs=["crash"], starts=["ok", behaviour]),
                  case_globs=["reward.parse::txt-*"])
    got = [(r.outcome, r.protocol_error) for r in run.records[:3]]
    assert got == [("crash", None), (outcome, error), ("pass", None)]
    assert "could not restart" in run.records[1].detail


@pytest.mark.slow
def test_a_candidate_that_hangs_on_stop_is_killed_and_recorded(tmp_path):
    run = certify(tmp_path, chaos(tmp_path, stop="hang"), case_globs=["reward.parse::txt-*"])
    data = report.read(tmp_path / "report.jsonl")
    assert all(r.outcome == "pass" for r in data.records)
    assert [(p.stage, p.outcome) for p in data.candidate_problems] == [("stop", "timeout")]
    assert not run.conforms and data.footer.conforms is False


def test_every_protocol_error_name_is_tried_here():
    """Every protocol error has a test above, or in tests/test_hostile_replies.py, that provokes it."""
    from tests.test_hostile_replies import PROVOKED

    provoked = {error for _, _, error in MISBEHAVIOURS if error} | {"schema-violation", "undeclared-surface",
                                                                    "bad-handshake"}
    assert provoked | PROVOKED == set(PROTOCOL_ERRORS)


@pytest.mark.slow
@pytest.mark.parametrize("behaviour", ["hang", "crash", "short", "garbage"])
def test_a_batch_that_fails_as_a_whole_is_asked_again_one_request_at_a_time(tmp_path, behaviour):
    run = certify(tmp_path, chaos(tmp_path, batch=True, batches=[behaviour]), case_globs=["reward.parse::txt-*"])
    selected = len(reward_parse_ids("reward.parse::txt-*"))
    sent = [line["cmd"] for line in requests(tmp_path) if line["cmd"] in ("run", "batch")]
    assert sent == ["batch"] + ["run"] * selected  # each case asked on its own after the batch failed
    assert {r.outcome for r in run.records} == {"pass"} and len(run.records) == selected
    assert run.footer.batch_fallbacks == 1
    assert not any(r.protocol_error for r in run.records)


def test_a_batch_answers_every_case_in_one_message(tmp_path):
    run = certify(tmp_path, chaos(tmp_path, batch=True), case_globs=["reward.parse::txt-*"])
    assert [line["cmd"] for line in requests(tmp_path)] == ["start", "batch", "stop"]
    assert {r.outcome for r in run.records} == {"pass"} and run.footer.batch_fallbacks == 0


def test_a_wrong_reply_inside_a_batch_is_that_cases_outcome(tmp_path):
    run = certify(tmp_path, chaos(tmp_path, batch=True, batches=["first-wrong-seq"]),
                  case_globs=["reward.parse::txt-*"])
    assert (run.records[0].outcome, run.records[0].protocol_error) == ("protocol-error", "wrong-seq")
    assert {r.outcome for r in run.records[1:]} == {"pass"} and run.footer.batch_fallbacks == 0
