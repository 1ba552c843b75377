"""The oracle's job.result: harbor 0.13.1's own Job over the suite's scripted sandbox and agent.

Expectations come from how harbor documents a job (trials ordered attempt,
task, agent; one evals key per agent, model and dataset; a dataset's
registry metrics before the job's; the default mean; result.json written by
pydantic, where NaN and inf are null) and from reward.parse, not from the
code under test. The trial order is built here from the input, independently.
"""

from __future__ import annotations

import itertools

import pytest

from conformance.kit import wire

SURFACE = "job.result"
_seq = itertools.count(1)


def output(conn, request):
    reply = conn.run(next(_seq), SURFACE, wire.encode(request))
    assert reply.kind == "output", (reply.kind, reply.value, reply.detail)
    return reply.value


def txt(text: str) -> dict:
    return {"reward_txt": text.encode()}


@pytest.mark.slow
def test_trials_run_attempt_then_task_then_agent(conn):
    agents = [{"name": "first"}, {"name": "second", "model": "p/m"}]
    tasks = ["t1", "t2"]
    # A reward per trial that names its position in the documented order.
    order = [(attempt, task, agent["name"]) for attempt in range(2) for task in tasks for agent in agents]
    reward = {key: f"0.{i + 1}" for i, key in enumerate(order)}
    request = {"agents": agents, "n_attempts": 2, "tasks": [
        {"name": task, "trials": [txt(reward[a, task, agent["name"]]) for a in range(2) for agent in agents]}
        for task in tasks
    ]}
    out = output(conn, request)
    assert [(t["trial"], t["task_name"], t["agent"]) for t in out["trials"]] == [
        (f"trial-{i}", task, agent) for i, (_, task, agent) in enumerate(order)
    ]
    assert [t["verifier_result"]["rewards"]["reward"] for t in out["trials"]] == [
        float(reward[key]) for key in order
    ]
    assert list(out["stats"]["evals"]) == ["first__adhoc", "second__m__adhoc"]
    assert out["n_total_trials"] == out["stats"]["n_completed_trials"] == 8


def test_output_is_the_scoring_part_only(conn):
    out = output(conn, {"agents": [{"name": "nop"}], "tasks": [{"name": "a", "trials": [txt("1")]}]})
    assert list(out) == ["n_total_trials", "stats", "trials", "snapshots"]
    assert list(out["stats"]) == ["n_completed_trials", "n_errored_trials", "n_cancelled_trials", "evals"]
    assert list(out["stats"]["evals"]["nop__adhoc"]) == [
        "n_trials", "n_errors", "metrics", "pass_at_k", "reward_stats", "exception_stats"]
    assert list(out["trials"][0]) == ["trial", "task_name", "source", "agent", "verifier_result", "exception_type"]


def test_registry_metrics_come_before_the_jobs_and_ints_stay_ints(conn):
    out = output(conn, {
        "agents": [{"name": "nop"}], "metrics": [{"type": "mean"}],
        "datasets": [{"name": "ds", "metrics": [{"type": "sum"}, {"type": "max"}], "tasks": [
            {"name": "a", "trials": [{"reward_json": b'{"reward": 2}'}]},
            {"name": "b", "trials": [{"reward_json": b'{"reward": 3}'}]},
        ]}],
    })
    metrics = out["stats"]["evals"]["nop__ds"]["metrics"]
    assert metrics == [{"sum": 5}, {"max": 3}, {"mean": 2.5}]
    assert type(metrics[0]["sum"]) is int and type(metrics[2]["mean"]) is float
    assert out["trials"][0]["source"] == "ds"


def test_nan_and_inf_are_written_as_null(conn):
    out = output(conn, {"agents": [{"name": "nop"}], "metrics": [{"type": "max"}],
                        "tasks": [{"name": "a", "trials": [txt("inf")]}, {"name": "b", "trials": [txt("nan")]}]})
    evals = out["stats"]["evals"]["nop__adhoc"]
    assert evals["metrics"] == [{"max": None}]
    assert [t["verifier_result"] for t in out["trials"]] == [{"rewards": {"reward": None}}] * 2
    assert list(evals["reward_stats"]["reward"]) == ["inf", "nan"]


def test_an_agent_timeout_keeps_the_verifiers_reward(conn):
    out = output(conn, {"agents": [{"name": "nop"}], "tasks": [
        {"name": "a", "trials": [{"raises": "timeout", "raises_in": "agent", **txt("1")}]}]})
    (trial,) = out["trials"]
    assert trial["exception_type"] == "AgentTimeoutError"
    assert trial["verifier_result"] == {"rewards": {"reward": 1.0}}
    assert out["stats"]["n_errored_trials"] == 1
    assert out["stats"]["evals"]["nop__adhoc"]["n_trials"] == 1


@pytest.mark.parametrize(("stage", "recorded"), [
    ("environment", "EnvironmentStartTimeoutError"),
    ("agent_setup", "AgentSetupTimeoutError"),
    ("verifier", "VerifierTimeoutError"),
])
def test_a_timeout_is_named_after_its_stage_and_leaves_no_result(conn, stage, recorded):
    out = output(conn, {"agents": [{"name": "nop"}], "tasks": [
        {"name": "a", "trials": [{"raises": "timeout", "raises_in": stage, **txt("1")}]}]})
    assert [(t["verifier_result"], t["exception_type"]) for t in out["trials"]] == [(None, recorded)]
    assert out["stats"]["evals"]["nop__adhoc"]["exception_stats"] == {recorded: ["trial-0"]}


def test_a_failing_metric_ends_the_job_with_an_exception_group(conn):
    huge = str(10**400).encode()
    reply = conn.run(next(_seq), SURFACE, wire.encode({"agents": [{"name": "nop"}], "tasks": [
        {"name": "a", "trials": [{"reward_json": b'{"reward": ' + huge + b"}"}]}]}))
    assert (reply.kind, reply.value) == ("raised", "ExceptionGroup")


# -- retries and cancellation -------------------------------------------------------------
#
# Expectations from harbor's TrialQueue._execute_trial_with_retries (a run with exception_info runs again
# while attempts remain and _should_retry_exception allows it: exclude_exceptions first, then a non-empty
# include_exceptions; RetryConfig's default exclusions are AgentTimeoutError, VerifierTimeoutError and the
# three reward-file errors), Job._remove_completed_attempt_for_retry (the retry's START takes the earlier
# run out of the running stats, JobStats.remove_trial leaving emptied lists, and counts n_retries), and
# from asyncio.TaskGroup (a child task that ends cancelled is skipped, the others go on; cancelling the
# parent cancels every child still waiting), so Job.run raises CancelledError before its final pass.

DEFAULT_EXCLUDED = {"AgentTimeoutError", "VerifierTimeoutError", "RewardFileNotFoundError",
                    "RewardFileEmptyError", "VerifierOutputParseError"}


def one_task(*runs, retry=None, agents=("nop",), **job):
    request = {"agents": [{"name": a} for a in agents], "tasks": [{"name": "a", "trials": list(runs)}], **job}
    if retry is not None:
        request["retry"] = retry
    return request


def test_a_retry_takes_the_next_outcome_and_only_the_last_run_counts(conn):
    out = output(conn, one_task({"raises": "RuntimeError"}, {"raises": "ValueError"}, txt("1"),
                                retry={"max_retries": 2}))
    assert out["stats"]["n_retries"] == 2
    assert list(out["stats"]) == ["n_completed_trials", "n_errored_trials", "n_cancelled_trials", "n_retries",
                                  "evals"]
    assert (out["stats"]["n_completed_trials"], out["stats"]["n_errored_trials"]) == (1, 0)
    assert [(t["verifier_result"], t["exception_type"]) for t in out["trials"]] == [({"rewards": {"reward": 1.0}},
                                                                                      None)]
    assert out["stats"]["evals"]["nop__adhoc"]["exception_stats"] == {}
    # Out of retries: the last run's exception is the trial's.
    out = output(conn, one_task({"raises": "RuntimeError"}, {"raises": "ValueError"}, retry={"max_retries": 1}))
    assert [t["exception_type"] for t in out["trials"]] == ["ValueError"]
    assert out["stats"]["n_retries"] == 1


def test_without_a_retry_policy_stats_carry_no_n_retries(conn):
    out = output(conn, one_task({"raises": "RuntimeError"}))
    assert "n_retries" not in out["stats"]
    assert out["trials"][0]["exception_type"] == "RuntimeError"


@pytest.mark.parametrize("excluded", sorted(DEFAULT_EXCLUDED - {"RewardFileEmptyError", "VerifierOutputParseError"}))
def test_the_default_exclusions_are_not_retried(conn, excluded):
    run = {"AgentTimeoutError": {"raises": "timeout", "raises_in": "agent", **txt("1")},
           "VerifierTimeoutError": {"raises": "timeout", "raises_in": "verifier"},
           "RewardFileNotFoundError": {}}[excluded]
    out = output(conn, one_task(run, txt("0"), retry={"max_retries": 1}))
    assert out["stats"]["n_retries"] == 0
    assert out["trials"][0]["exception_type"] == excluded
    # exclude_exceptions [] excludes nothing: the same run is retried, and the retry's reward counts.
    out = output(conn, one_task(run, txt("0"), retry={"max_retries": 1, "exclude_exceptions": []}))
    assert out["stats"]["n_retries"] == 1
    assert [(t["verifier_result"], t["exception_type"]) for t in out["trials"]] == [({"rewards": {"reward": 0.0}},
                                                                                      None)]


def test_other_stage_failures_are_retried_by_default(conn):
    for run in ({"raises": "timeout", "raises_in": "environment"},
                {"raises": "RuntimeError", "raises_in": "agent_setup"},
                {"raises": "NonZeroAgentExitCodeError", "raises_in": "agent", **txt("1")}):
        out = output(conn, one_task(run, txt("0.5"), retry={"max_retries": 1}))
        assert out["stats"]["n_retries"] == 1, run
        assert out["trials"][0]["verifier_result"] == {"rewards": {"reward": 0.5}}, run


def test_include_exceptions(conn):
    def retries(include):
        return output(conn, one_task({"raises": "RuntimeError"}, txt("1"),
                                     retry={"max_retries": 1, "include_exceptions": include}))["stats"]["n_retries"]

    assert retries(["ValueError"]) == 0
    assert retries(["RuntimeError"]) == 1
    assert retries([]) == 1  # an empty list is no filter
    # Exclusion wins: RewardFileNotFoundError stays excluded by default, included or not.
    out = output(conn, one_task({}, txt("1"),
                                retry={"max_retries": 1, "include_exceptions": ["RewardFileNotFoundError"]}))
    assert out["stats"]["n_retries"] == 0


def test_retries_run_right_after_the_failed_run(conn):
    # Two agents: x's trial fails and is retried before y's trial starts, so y takes the third outcome.
    out = output(conn, one_task({"raises": "OSError"}, txt("1"), txt("0"), agents=("x", "y"),
                                retry={"max_retries": 1}))
    assert [(t["agent"], t["verifier_result"]["rewards"]["reward"]) for t in out["trials"]] == [("x", 1.0), ("y", 0.0)]


def test_a_cancelled_trial_lets_the_others_run_and_job_run_never_finishes(conn):
    out = output(conn, {"agents": [{"name": "nop"}], "n_attempts": 2, "tasks": [
        {"name": "a", "trials": [txt("1"), {"raises": "CancelledError", "raises_in": "verifier"}]},
        {"name": "b", "trials": [txt("0"), txt("1")]}]})
    assert [t["exception_type"] for t in out["trials"]] == [None, None, "CancelledError", None]
    stats = out["stats"]
    assert (stats["n_completed_trials"], stats["n_errored_trials"], stats["n_cancelled_trials"]) == (4, 1, 1)
    # No final pass: pass@k is never computed (the same job without the cancellation has pass@2).
    assert stats["evals"]["nop__adhoc"]["pass_at_k"] == {}
    assert stats["evals"]["nop__adhoc"]["exception_stats"] == {"CancelledError": ["trial-2"]}


def test_an_interrupted_job_starts_no_more_trials(conn):
    out = output(conn, {"agents": [{"name": "nop"}], "tasks": [
        {"name": "a", "trials": [txt("0.5")]},
        {"name": "b", "trials": [{"raises": "interrupt", "raises_in": "agent", **txt("1")}]},
        {"name": "c", "trials": [txt("1")]}]})
    assert out["n_total_trials"] == 3
    assert [(t["task_name"], t["exception_type"]) for t in out["trials"]] == [("a", None), ("b", "CancelledError")]
    assert out["trials"][1]["verifier_result"] is None  # the verifier never ran
    stats = out["stats"]
    assert (stats["n_completed_trials"], stats["n_errored_trials"], stats["n_cancelled_trials"]) == (2, 1, 1)
    assert stats["evals"]["nop__adhoc"]["metrics"] == [{"mean": 0.25}]  # the running mean over 0.5 and None


def test_a_cancelled_trial_is_not_retried(conn):
    out = output(conn, one_task({"raises": "CancelledError", "raises_in": "agent"}, txt("1"),
                                retry={"max_retries": 2, "include_exceptions": ["CancelledError"],
                                       "exclude_exceptions": []}))
    assert out["stats"]["n_retries"] == 0
    assert out["trials"][0]["exception_type"] == "CancelledError"


def test_a_retry_leaves_emptied_lists_in_the_running_stats(conn):
    out = output(conn, {"agents": [{"name": "nop"}], "retry": {"max_retries": 1, "exclude_exceptions": []}, "tasks": [
        {"name": "a", "trials": [{"raises": "timeout", "raises_in": "agent", **txt("1")},
                                 {"raises": "interrupt", "raises_in": "agent"}]}]})
    evals = out["stats"]["evals"]["nop__adhoc"]
    assert evals["reward_stats"] == {"reward": {"1.0": []}}
    assert evals["exception_stats"] == {"AgentTimeoutError": [], "CancelledError": ["trial-0"]}
    assert out["stats"]["n_retries"] == 1


# -- snapshots: every result.json the job writes while it runs ------------------------------
#
# Expectations from harbor's Job: Job.run writes result.json before the first trial and after its final pass
# (with finished_at); its hooks write it when a trial starts (_on_trial_started: the trial running), when its
# cancellation is requested (_on_trial_cancelled: counted cancelled) and when it ends (_on_trial_completed);
# JobStats.update_progress_counts makes pending the total less completed less running.

COUNTS = ("n_completed_trials", "n_errored_trials", "n_running_trials", "n_pending_trials", "n_cancelled_trials",
          "n_retries")


def counts(out):
    return [(s["finished"], *(s["stats"][count] for count in COUNTS)) for s in out["snapshots"]]


def test_a_job_writes_at_its_start_at_each_trials_start_and_end_and_at_its_end(conn):
    out = output(conn, {"agents": [{"name": "x"}, {"name": "y"}], "tasks": [{"name": "a", "trials": [txt("1")]}]})
    assert counts(out) == [
        (False, 0, 0, 0, 2, 0, 0),  # the job's start: every trial pending
        (False, 0, 0, 1, 1, 0, 0),  # x starts
        (False, 1, 0, 0, 1, 0, 0),  # x ends, scored 1
        (False, 1, 0, 1, 0, 0, 0),  # y starts
        (False, 2, 1, 0, 0, 0, 0),  # y ends: its outcome is missing, {}, so no reward file and an error
        (True, 2, 1, 0, 0, 0, 0),   # the final pass
    ]
    assert [s["n_total_trials"] for s in out["snapshots"]] == [2] * 6
    assert out["snapshots"][0]["stats"]["evals"] == {}
    # The last write is the final result.json: its counts and each key's counts and metrics are the output's own
    # (a snapshot leaves out the reward and exception lists).
    final = out["snapshots"][-1]["stats"]
    assert {key: final[key] for key in out["stats"] if key != "evals"} == {
        key: value for key, value in out["stats"].items() if key != "evals"}
    assert final["evals"] == {key: {"n_trials": ev["n_trials"], "n_errors": ev["n_errors"], "metrics": ev["metrics"]}
                              for key, ev in out["stats"]["evals"].items()}
    assert set(final["evals"]) == {"x__adhoc", "y__adhoc"}


def test_a_cancellation_request_is_written_while_the_trial_runs(conn):
    out = output(conn, one_task({"raises": "CancelledError", "raises_in": "agent"}))
    assert counts(out) == [
        (False, 0, 0, 0, 1, 0, 0),
        (False, 0, 0, 1, 0, 0, 0),
        (False, 0, 0, 1, 0, 1, 0),  # the cancel hook: cancelled while still running
        (False, 1, 1, 0, 0, 1, 0),  # its end; Job.run then raises CancelledError, with no final write
    ]


def test_a_retrys_start_takes_the_earlier_run_out(conn):
    out = output(conn, one_task({"raises": "RuntimeError"}, txt("1"), retry={"max_retries": 1}))
    assert counts(out) == [
        (False, 0, 0, 0, 1, 0, 0),
        (False, 0, 0, 1, 0, 0, 0),
        (False, 1, 1, 0, 0, 0, 0),
        (False, 0, 0, 1, 0, 0, 1),  # the retry's start: the earlier run taken out, one retry counted
        (False, 1, 0, 0, 0, 0, 1),
        (True, 1, 0, 0, 0, 0, 1),
    ]
    at_retry = out["snapshots"][3]["stats"]["evals"]["nop__adhoc"]
    # No live reward is left, so the metrics refresh to []; the earlier run's error is taken out of the counts.
    assert (at_retry["metrics"], at_retry["n_errors"], at_retry["n_trials"]) == ([], 0, 0)

