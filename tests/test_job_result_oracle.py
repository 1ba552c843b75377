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
    assert list(out) == ["n_total_trials", "stats", "trials"]
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
