"""Flaky answers: an input the candidate diverges on is asked once more, and two answers unlike each other are
``flaky``, never a pass, both kept.

Offline: the corpus's reward.parse cases against their recordings, through the
runner and through certify.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from conformance.connection.connectors import connect, parse
from conformance.core import surfaces
from conformance.core.compare import compare
from conformance.core.outcomes import Outcome
from conformance.report.model import OutputResult
from conformance.report.reader import read
from conformance.run import certification
from conformance.run.plan import Options
from conformance.run.runner import Oracle, run_cases
from tests import flaky_candidates
from tests.flaky_candidates import ASKED, SURFACE


@pytest.fixture
def reward_cases(corpus):
    found = [c for c in corpus if c.case.surface == SURFACE and c.case.expect is not None
             and c.case.expect.result().raised is None][:12]
    assert len(found) >= 6
    return found


@pytest.fixture(autouse=True)
def _forget():
    ASKED.clear()
    yield
    ASKED.clear()


def _records(candidate: str, cases):
    with connect(parse(f"tests.flaky_candidates:{candidate}")) as connection, Oracle(None) as oracle:
        return list(run_cases(cases, connection, oracle))


def test_answers_that_change_are_flaky_with_both_kept(reward_cases):
    records = _records("alternating", reward_cases)
    assert {r.outcome for r in records} == {Outcome.FLAKY}
    for record, item in zip(records, reward_cases, strict=True):
        assert isinstance(record.candidate, OutputResult)
        assert record.candidate.to_result().value == {"reward": -12.5}  # its first answer
        assert record.candidate_again is not None
        right = surfaces.get(SURFACE)  # its second answer: the right one, as the comparator sees it
        assert not compare(item.case.expect.result(), record.candidate_again.to_result(), right.policy,
                           right.unordered)
        assert record.mismatches  # against the oracle's answer, as any divergence
        assert record.input is not None
        assert "two ways" in record.first_difference()
    assert set(ASKED.values()) == {2}


def test_a_divergence_that_holds_still_stays_a_fail_for_one_more_request_each(reward_cases):
    records = _records("always_wrong", reward_cases)
    assert {r.outcome for r in records} == {Outcome.FAIL}
    assert all(r.candidate_again is None for r in records)
    assert set(ASKED.values()) == {2}  # asked once, and once more


def test_a_conforming_candidate_is_asked_each_input_once(reward_cases):
    records = _records("counted", reward_cases)
    assert {r.outcome for r in records} == {Outcome.PASS}
    assert set(ASKED.values()) == {1}
    assert len(ASKED) == len({json.dumps(c.case.model_dump(mode="json")["input"], sort_keys=True)
                              for c in reward_cases})


def test_two_wrong_answers_unlike_each_other_are_flaky(reward_cases):
    records = _records("wrong_two_ways", reward_cases)
    assert {r.outcome for r in records} == {Outcome.FLAKY}
    assert all(r.candidate_again is not None and r.candidate_again.to_result().value == {"reward": -2.0}
               for r in records)


def test_an_errored_reply_then_an_answer_is_flaky_and_says_so(reward_cases):
    records = _records("errored_first", reward_cases)
    assert {r.outcome for r in records} == {Outcome.FLAKY}
    for record in records:
        assert "worker pool not ready" in record.detail
        assert record.candidate_again is not None  # the answer it gave when asked again


def test_flaky_answers_in_a_report_console_junit_and_summary(tmp_path, reward_cases):
    from conformance.report import junit, markdown

    report = tmp_path / "report.jsonl"
    ids = [c.case.id for c in reward_cases]
    run = certification.certify(Options(candidate=parse("tests.flaky_candidates:alternating"), oracle="recorded",
                                        surfaces=[SURFACE], case_globs=ids), report)
    assert not run.conforms
    loaded = read(report)
    assert loaded.footer is not None and loaded.footer.outcomes[Outcome.FLAKY] == len(ids)
    assert not loaded.footer.conforms
    line = next(r for r in loaded.records if r.outcome is Outcome.FLAKY)
    assert line.candidate_again is not None  # written and read back

    root = ET.fromstring(junit.render(loaded))
    failures = list(root.iter("failure"))
    assert len(failures) == len(ids) and {f.get("type") for f in failures} == {"flaky"}
    assert all("asked again" in (f.text or "") for f in failures)
    summary = markdown.summary(loaded)
    assert "| flaky |" in summary or " flaky " in summary
    assert "answered two ways" in summary  # each flaky row says so, beside its first difference


def test_a_candidate_process_asks_each_diverging_input_again_in_turn(reward_cases):
    """A process is asked from a lane of its own. In one batch, each input three times: its first asking is
    wrong, then right (flaky); its second right (a pass); its third wrong, and wrong again (a fail)."""
    import sys

    n = len(reward_cases)
    with connect(parse(f"exec:{sys.executable} {flaky_candidates.__file__}")) as connection, \
            Oracle(None) as oracle:
        records = list(run_cases(reward_cases * 3, connection, oracle))
    assert [r.outcome for r in records] == [Outcome.FLAKY] * n + [Outcome.PASS] * n + [Outcome.FAIL] * n


def test_asked_one_input_at_a_time_the_second_asking_queues_behind_the_next_input(reward_cases):
    """Without batches the runner works one input ahead: an input's second asking goes after the next input's
    first, and is still that input's second answer."""
    import sys

    spec = parse(f"exec:{sys.executable} {flaky_candidates.__file__} --one-at-a-time")
    with connect(spec) as connection, Oracle(None) as oracle:
        assert connection.implementation is not None and not connection.implementation.batch
        records = list(run_cases(reward_cases * 2, connection, oracle))
    assert [r.outcome for r in records] == [Outcome.FLAKY] * (2 * len(reward_cases))
    assert all(r.candidate_again is not None for r in records)


def test_a_generator_keeps_one_flaky_finding_and_no_generator_error():
    from conformance.run import generate
    CI = generate.PROFILES["ci"]

    with connect(parse("tests.flaky_candidates:alternating")) as candidate, \
            Oracle(connect(parse("reference"))) as oracle:
        result = generate.generate(SURFACE, candidate, oracle, profile=CI, seed=3, max_examples=20)
    assert result.error is None  # answers that do not hold still are a finding, not Hypothesis's flaky test
    assert result.findings and {f.outcome for f in result.findings} == {Outcome.FLAKY}
    assert all(f.candidate_again is not None and f.generated for f in result.findings)
