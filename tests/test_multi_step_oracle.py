"""The oracle's multi_step.reward: harbor 0.13.1's own multi-step trial, created and run as a Job would.

Expectations come from harbor's documented multi-step semantics
(``MultiStepTrial``: a step whose verifier fails without a result aborts the
remaining steps; ``final`` takes the last step that ran; ``mean`` and an unset
strategy average each key over the steps that have a verifier result, a
missing key counting as 0, and give no result when no step has a key) and
from reward.parse (reward.txt is a float, reward.json keeps its numbers), not
from the code under test.

The later tests read ``MultiStepTrial`` itself: ``_run_step_agent`` catches any
exception of the agent's run in a step and records it on the step, and the
step goes on to its verifier; ``_run_step_verifier`` keeps a step's first
exception and does nothing when ``verifier.disable`` is set;
``_should_stop_after_step`` stops on an exception without a verifier result,
else on ``min_reward`` (skipped when verification is disabled), where
``_min_reward_failure`` gates ``reward`` for a number and each key for a table,
counts a missing key or empty rewards as ``-inf`` and fails on ``actual <
threshold``.
"""

from __future__ import annotations

import itertools
import subprocess

import pytest

from conformance.connection import harbor as harbor_connection
from conformance.kit import wire

SURFACE = "multi_step.reward"
_seq = itertools.count(1)


def run(conn, strategy, *steps, **more):
    """The oracle's reply to one request; every multi_step.reward reply must be a protocol line."""
    reply = conn.run(next(_seq), SURFACE, wire.encode({"strategy": strategy, "steps": list(steps), **more}))
    return reply


def output(conn, strategy, *steps, **more):
    reply = run(conn, strategy, *steps, **more)
    assert reply.kind == "output", (reply.kind, reply.value, reply.detail)
    return reply.value


def txt(text: str) -> dict:
    return {"reward_txt": text.encode()}


def js(text: str) -> dict:
    return {"reward_json": text.encode()}


TIMEOUT = {"raises": "timeout"}
NOTHING: dict = {}  # the verifier leaves no reward file


def ok_step(name, rewards):
    return {"name": name, "verifier_result": {"rewards": rewards}, "exception_type": None}


def failed_step(name, exception_type):
    return {"name": name, "verifier_result": None, "exception_type": exception_type}


@pytest.mark.slow
def test_final_takes_the_last_steps_rewards(conn):
    out = output(conn, "final", txt("1"), txt("0.25"))
    assert out == {
        "verifier_result": {"rewards": {"reward": 0.25}},
        "exception_type": None,
        "steps": [ok_step("step-1", {"reward": 1.0}), ok_step("step-2", {"reward": 0.25})],
    }
    assert isinstance(out["steps"][0]["verifier_result"]["rewards"]["reward"], float)


def test_final_with_no_reward_file_in_the_last_step_has_no_result(conn):
    out = output(conn, "final", txt("1"), NOTHING)
    assert out == {
        "verifier_result": None,
        "exception_type": None,  # a step's failure stays in the step
        "steps": [ok_step("step-1", {"reward": 1.0}), failed_step("step-2", "RewardFileNotFoundError")],
    }


def test_final_is_the_last_step_that_ran_not_the_last_declared(conn):
    out = output(conn, "final", txt("1"), NOTHING, txt("1"))
    assert out["verifier_result"] is None
    assert out["steps"] == [ok_step("step-1", {"reward": 1.0}), failed_step("step-2", "RewardFileNotFoundError")]


def test_mean_averages_every_key_counting_missing_as_zero(conn):
    out = output(conn, "mean", js('{"reward": 1}'), js('{"reward": 0, "x": 1}'))
    # The mean's keys come from a set: compare as dicts (order ignored), values exactly.
    assert out["verifier_result"].keys() == {"rewards"}
    assert out["verifier_result"]["rewards"] == {"reward": 0.5, "x": 0.5}
    assert all(type(v) is float for v in out["verifier_result"]["rewards"].values())
    assert out["exception_type"] is None
    assert out["steps"] == [ok_step("step-1", {"reward": 1}), ok_step("step-2", {"reward": 0, "x": 1})]
    assert type(out["steps"][0]["verifier_result"]["rewards"]["reward"]) is int  # reward.json keeps ints


def test_unset_strategy_behaves_as_mean(conn):
    steps = (js('{"reward": 1}'), js('{"reward": 0, "x": 1}'))
    unset = output(conn, None, *steps)
    assert unset["verifier_result"]["rewards"] == {"reward": 0.5, "x": 0.5}
    assert unset["steps"] == [ok_step("step-1", {"reward": 1}), ok_step("step-2", {"reward": 0, "x": 1})]
    assert output(conn, None, txt("1"), txt("0"))["verifier_result"] == {"rewards": {"reward": 0.5}}


def test_a_timed_out_test_script_is_the_steps_timeout_error(conn):
    out = output(conn, "mean", txt("0.5"), TIMEOUT)
    assert out["steps"] == [ok_step("step-1", {"reward": 0.5}), failed_step("step-2", "TimeoutError")]
    # Steps without a verifier result leave the mean's denominator.
    assert out["verifier_result"] == {"rewards": {"reward": 0.5}}
    assert out["exception_type"] is None


def test_a_failed_verifier_aborts_the_remaining_steps(conn):
    out = output(conn, "mean", TIMEOUT, txt("1"), txt("1"))
    assert out["steps"] == [failed_step("step-1", "TimeoutError")]  # fewer step results than steps
    assert out["verifier_result"] is None
    assert out["exception_type"] is None

    out = output(conn, "mean", txt("1"), NOTHING, txt("0"))
    assert out["steps"] == [ok_step("step-1", {"reward": 1.0}), failed_step("step-2", "RewardFileNotFoundError")]
    assert out["verifier_result"] == {"rewards": {"reward": 1.0}}


def test_reward_json_empty_object_in_a_step(conn):
    out = output(conn, "mean", js("{}"), txt("1"))
    # {} is a verifier result (nothing failed): it counts in the denominator with no keys.
    assert out["steps"] == [ok_step("step-1", {}), ok_step("step-2", {"reward": 1.0})]
    assert out["verifier_result"] == {"rewards": {"reward": 0.5}}

    only = output(conn, "mean", js("{}"))
    assert only["steps"] == [ok_step("step-1", {})]
    assert only["verifier_result"] is None  # no key in any step: no mean

    final = output(conn, "final", txt("1"), js("{}"))
    assert final["verifier_result"] == {"rewards": {}}


def test_all_steps_failing_under_mean_has_no_result(conn):
    out = output(conn, "mean", NOTHING, TIMEOUT)
    assert out == {
        "verifier_result": None,
        "exception_type": None,
        "steps": [failed_step("step-1", "RewardFileNotFoundError")],
    }


def test_an_invalid_strategy_fails_loading_the_task(conn):
    # task.toml's multi_step_reward_strategy is an enum of mean | final: pydantic refuses the task.
    reply = run(conn, "bogus", txt("1"))
    assert reply.kind == "raised", (reply.kind, reply.detail)
    assert reply.value == "ValidationError"


def gated(step: dict, min_reward) -> dict:
    return {**step, "min_reward": min_reward}


def test_a_step_below_its_min_reward_stops_the_steps_after_it(conn):
    # 0.25 < 0.5: step 2 never runs, so both strategies see step 1 alone.
    for strategy in ("mean", "final"):
        out = output(conn, strategy, gated(txt("0.25"), 0.5), txt("1"))
        assert out["steps"] == [ok_step("step-1", {"reward": 0.25})]
        assert out["verifier_result"] == {"rewards": {"reward": 0.25}}
        assert out["exception_type"] is None  # the threshold is not an error
    # 0.5 is not below 0.5 (the check is `<`): step 2 runs.
    out = output(conn, "mean", gated(txt("0.5"), 0.5), txt("1"))
    assert out["steps"] == [ok_step("step-1", {"reward": 0.5}), ok_step("step-2", {"reward": 1.0})]
    assert out["verifier_result"] == {"rewards": {"reward": 0.75}}
    # On the last step there is nothing left to stop.
    out = output(conn, "mean", txt("1"), gated(txt("0"), 0.5))
    assert out["verifier_result"] == {"rewards": {"reward": 0.5}}
    assert len(out["steps"]) == 2


def test_min_reward_tables_and_missing_keys(conn):
    # A number gates "reward" only: a step without it counts as -inf.
    assert len(output(conn, "mean", gated(js('{"x": 1}'), 0.5), txt("1"))["steps"]) == 1
    # A table gates each of its keys; a missing one is -inf.
    assert len(output(conn, "mean", gated(txt("1"), {"x": 0}), txt("1"))["steps"]) == 1
    both = js('{"reward": 1, "x": 0.25}')
    assert len(output(conn, "mean", gated(both, {"reward": 0.5, "x": 0.25}), txt("1"))["steps"]) == 2
    assert len(output(conn, "mean", gated(both, {"reward": 0.5, "x": 0.5}), txt("1"))["steps"]) == 1
    # An empty table gates nothing; empty or null rewards are -inf under a number.
    assert len(output(conn, "mean", gated(js("{}"), {}), txt("1"))["steps"]) == 2
    assert len(output(conn, "mean", gated(js("{}"), -1), txt("1"))["steps"]) == 1
    assert len(output(conn, "mean", gated(js("null"), -1), txt("1"))["steps"]) == 1
    assert len(output(conn, "mean", gated(js("{}"), float("-inf")), txt("1"))["steps"]) == 2  # -inf < -inf is false


def test_nan_is_never_below_a_threshold(conn):
    out = output(conn, "final", gated(txt("nan"), 0.5), txt("0"))
    assert len(out["steps"]) == 2
    assert out["verifier_result"] == {"rewards": {"reward": 0.0}}
    assert len(output(conn, "mean", gated(js("{}"), float("nan")), txt("1"))["steps"]) == 2


def test_an_agent_failure_in_a_step_is_recorded_and_the_step_still_verified(conn):
    for raised, recorded in [("timeout", "AgentTimeoutError"), ("RuntimeError", "RuntimeError"),
                             ("ValueError", "ValueError"), ("OSError", "OSError"),
                             ("NonZeroAgentExitCodeError", "NonZeroAgentExitCodeError")]:
        out = output(conn, "mean", {"agent_raises": raised, **txt("1")}, txt("0"))
        assert out["steps"] == [
            {"name": "step-1", "verifier_result": {"rewards": {"reward": 1.0}}, "exception_type": recorded},
            ok_step("step-2", {"reward": 0.0}),
        ], raised
        assert out["verifier_result"] == {"rewards": {"reward": 0.5}}  # the failed step still counts
        assert out["exception_type"] is None  # nothing on the trial


def test_a_steps_first_exception_is_kept(conn):
    # The agent fails, then the verifier fails too: the agent's exception stays, no result, the rest stops.
    out = output(conn, "final", {"agent_raises": "timeout", "raises": "RuntimeError"}, txt("1"))
    assert out["steps"] == [failed_step("step-1", "AgentTimeoutError")]
    assert out["verifier_result"] is None
    out = output(conn, "mean", txt("1"), {"agent_raises": "ValueError"}, txt("0"))
    assert out["steps"] == [ok_step("step-1", {"reward": 1.0}), failed_step("step-2", "ValueError")]
    assert out["verifier_result"] == {"rewards": {"reward": 1.0}}


def test_an_agent_failure_does_not_stop_a_step_under_its_min_reward_check(conn):
    below = output(conn, "mean", gated({"agent_raises": "RuntimeError", **txt("0")}, 0.5), txt("1"))
    assert len(below["steps"]) == 1
    above = output(conn, "mean", gated({"agent_raises": "RuntimeError", **txt("1")}, 0.5), txt("0"))
    assert len(above["steps"]) == 2


def test_a_raising_test_script_leaves_the_step_without_a_result(conn):
    for raised in ("RuntimeError", "ValueError", "OSError"):
        out = output(conn, "mean", txt("0.5"), {"raises": raised, **txt("1")}, txt("1"))
        assert out["steps"] == [ok_step("step-1", {"reward": 0.5}), failed_step("step-2", raised)]
        assert out["verifier_result"] == {"rewards": {"reward": 0.5}}


def test_a_disabled_verifier(conn):
    out = output(conn, "mean", txt("1"), gated(txt("0"), 0.5), txt("1"), verifier_disabled=True)
    # No step is verified; min_reward is not checked; every step runs.
    assert out == {"verifier_result": None, "exception_type": None,
                   "steps": [failed_step(f"step-{i}", None) for i in (1, 2, 3)]}
    assert output(conn, "final", txt("1"), verifier_disabled=True)["verifier_result"] is None
    # An agent failure leaves an exception without a verifier result: the steps after it stop.
    out = output(conn, "mean", txt("1"), {"agent_raises": "timeout"}, txt("1"), verifier_disabled=True)
    assert out["steps"] == [failed_step("step-1", None), failed_step("step-2", "AgentTimeoutError")]


@pytest.mark.slow
@pytest.mark.usefixtures("harbor_env")
def test_the_oracle_writes_only_protocol_lines():
    """harbor logs warnings (a step failed, steps aborted): none of it may reach stdout."""
    requests = [
        {"strategy": "final", "steps": [txt("1"), txt("0.25")]},
        {"strategy": "mean", "steps": [TIMEOUT, txt("1")]},  # logs "Step 'step-1' failed, aborting ..."
        {"strategy": "bogus", "steps": [txt("1")]},  # harbor refuses the task
        {"strategy": None, "steps": [NOTHING]},
    ]
    lines = [wire.dumps({"cmd": "start", "protocol": 1})]
    lines += [wire.dumps({"cmd": "run", "seq": i, "surface": SURFACE, "input": wire.encode(r)})
              for i, r in enumerate(requests)]
    lines.append(wire.dumps({"cmd": "stop"}))
    from conformance.oracle import environments as oracle_env

    done = subprocess.run(harbor_connection.harbor_argv("0.13.1"), input="\n".join(lines) + "\n", text=True,
                          capture_output=True, timeout=300, env=oracle_env.script_environment())
    assert done.returncode == 0, done.stderr[-2000:]
    replies = [wire.loads(line) for line in done.stdout.splitlines()]
    assert len(replies) == 1 + len(requests)
    assert "protocol" in replies[0]
    assert [sorted(r) for r in replies[1:]] == [["output", "seq"], ["output", "seq"], ["raised", "seq"],
                                                ["output", "seq"]]
    assert [r["seq"] for r in replies[1:]] == list(range(len(requests)))


def test_the_connection_stays_in_step(conn):
    """After trials that log and fail, the same oracle process still answers every surface.

    (A stray stdout line would be a protocol error, after which the connection restarts the oracle.)
    """
    assert run(conn, "final", txt("1")).kind == "output"
    pid = conn.process.popen.pid
    for _ in range(3):
        assert run(conn, "mean", TIMEOUT, txt("1")).kind == "output"
        assert run(conn, "bogus", txt("1")).kind == "raised"
    reply = conn.run(next(_seq), "reward.parse", wire.encode({"reward_txt": b"1"}))
    assert (reply.kind, reply.value) == ("output", {"reward": 1.0})
    assert conn.process.popen.pid == pid
