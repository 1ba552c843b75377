"""job.result's resume input: nonsense combinations are refused with a message naming them, and the
reference runs again exactly the trials a resume leaves out (values worked out from the input by hand)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from conformance.surfaces.job_result import JobResultInput, reference

TWO_TASKS = {"agents": [{"name": "nop"}],
             "tasks": [{"name": "a", "trials": [{"reward_txt": b"1"}]},
                       {"name": "b", "trials": [{"reward_txt": b"1"}, {"reward_txt": b"0"}]}]}


@pytest.mark.parametrize(("resume", "outcome", "message"), [
    ({"stop_after": 2}, None, "stops before the last one starts (at most 1)"),
    ({"stop_after": 0, "trial_results": [{"trial": 1}]}, None, "the earlier run starts 1 (trial 0 to 0)"),
    ({"trial_results": [{"trial": 0}, {"trial": 0, "replace": b"{"}]}, None, "changes a trial's result.json once"),
    ({"trial_results": [{"trial": 0, "replace": b'{"trial_name": "x"}'}]}, None, "one with 'trial_name' may be read"),
    ({"job_result": {"replace": b'{"id": "x"}'}}, None, "one with 'id' may be read"),
    ({"stop_after": 1}, {"raises": "interrupt", "raises_in": "agent"}, "not by an outcome that raises 'interrupt'"),
])
def test_a_nonsense_resume_is_refused_naming_what_is_wrong(resume, outcome, message):
    tasks = [dict(task) for task in TWO_TASKS["tasks"]]
    if outcome is not None:
        tasks[0] = {"name": "a", "trials": [outcome]}
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        JobResultInput.model_validate({**TWO_TASKS, "tasks": tasks, "resume": resume})


def test_a_resumed_task_may_list_outcomes_for_both_runs_and_no_more():
    three = {"name": "a", "trials": [{}, {}, {}]}
    with pytest.raises(ValidationError, match="twice when it is resumed"):
        JobResultInput.model_validate({"agents": [{"name": "nop"}], "tasks": [three], "resume": {}})
    JobResultInput.model_validate({**TWO_TASKS, "resume": {}})


def test_the_stopped_trial_is_removed_and_run_again_with_its_tasks_next_outcome():
    # Trial 0 (a) scores 1; trial 1 (b) is interrupted, taking b's first outcome; the resume runs b again
    # as trial-2, with b's second outcome, 0.
    done = reference.answer({**TWO_TASKS, "resume": {"stop_after": 1}})
    assert done["resumed"] == {"ran": ["trial-2"], "kept": ["trial-0"], "removed": ["trial-1"]}
    assert [(t["trial"], t["task_name"], t["verifier_result"]) for t in done["trials"]] == [
        ("trial-0", "a", {"rewards": {"reward": 1.0}}), ("trial-2", "b", {"rewards": {"reward": 0.0}})]
    assert done["stats"]["n_cancelled_trials"] == 0


def test_an_empty_filter_keeps_the_cancelled_trial_and_the_finished_job_counts_it():
    done = reference.answer({**TWO_TASKS, "resume": {"stop_after": 1, "filter_error_types": []}})
    assert done["resumed"] == {"ran": [], "kept": ["trial-0", "trial-1"], "removed": []}
    assert (done["stats"]["n_cancelled_trials"], done["trials"][1]["exception_type"]) == (1, "CancelledError")


@pytest.mark.parametrize("resume", [
    {"stop_after": 1, "trial_results": [{"trial": 0, "replace": b"{"}]},
    {"stop_after": 1, "job_result": {"replace": b""}},
])
def test_a_result_json_harbor_cannot_read_fails_the_resume(resume):
    with pytest.raises(Exception) as raised:
        reference.answer({**TWO_TASKS, "resume": resume})
    assert type(raised.value).__name__ == "ValidationError"


def test_a_nan_reward_written_as_null_fails_the_resume_only_once_it_is_resumed():
    nan_first = {**TWO_TASKS, "tasks": [{"name": "a", "trials": [{"reward_txt": b"nan"}]}, TWO_TASKS["tasks"][1]]}
    assert reference.answer(nan_first)["trials"][0]["verifier_result"] == {"rewards": {"reward": None}}
    with pytest.raises(Exception) as raised:
        reference.answer({**nan_first, "resume": {"stop_after": 1}})
    assert type(raised.value).__name__ == "ValidationError"


def test_without_the_jobs_result_json_n_retries_starts_again():
    retried = {"agents": [{"name": "nop"}], "retry": {"max_retries": 1},
               "tasks": [{"name": "a", "trials": [{"raises": "RuntimeError", "raises_in": "agent"},
                                                  {"reward_txt": b"1"}]},
                         {"name": "b", "trials": [{"reward_txt": b"1"}, {"reward_txt": b"0"}]}]}
    assert reference.answer({**retried, "resume": {"stop_after": 1}})["stats"]["n_retries"] == 1
    assert reference.answer({**retried, "resume": {"stop_after": 1, "job_result": {}}})["stats"]["n_retries"] == 0


def test_outcome_summary_refuses_a_job_with_a_resume_it_would_not_run():
    from conformance.surfaces.outcome_summary import OutcomeInput

    with pytest.raises(ValidationError, match="resume is not read"):
        OutcomeInput.model_validate({"job": {**TWO_TASKS, "resume": {}}})
    OutcomeInput.model_validate({"job": {**TWO_TASKS, "tasks": TWO_TASKS["tasks"][:1]}})
