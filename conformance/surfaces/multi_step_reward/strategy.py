"""multi_step.reward: a strategy and the steps of one multi-step trial.

Steps mostly leave a good reward (one key, or the same few keys), sometimes
a file that fails to parse, no file at all, ``null``, ``{}`` or a timeout,
so the step-abort rule and the mean's missing-key and empty-step rules all
come up. On top of what the verifier leaves, a step sometimes has a
``min_reward`` (mostly thresholds its rewards sit on, above or below), an
agent that raises during the step, or a test script that raises; one trial
in ten runs with the verifier disabled.
"""

from __future__ import annotations

import json
import math
from functools import cache

from hypothesis import strategies as st

from conformance.surfaces.reward_parse.strategy import reward_json as any_reward_json
from conformance.surfaces.reward_parse.strategy import reward_txt as any_reward_txt

VALUES = st.one_of(st.sampled_from([0, 1, 0.0, 1.0, 0.5, 0.25, -0.0, 2]), st.floats(allow_nan=False),
                   st.sampled_from([0.1, 0.2, 0.3, 1e16, 1e-16, float("nan"), float("inf")]))
KEYS = st.sampled_from(["reward", "reward", "x", "accuracy", "b", "a"])
# What a stage raises (as the surface's Raised): a timeout, built-in exceptions, harbor's agent exit error.
RAISED = st.sampled_from(["timeout", "timeout", "RuntimeError", "ValueError", "OSError", "NonZeroAgentExitCodeError"])


def _json_bytes(rewards: dict) -> bytes:
    return json.dumps(rewards).encode()


# What a verifier leaves (also a job.result trial's outcome: no step-only keys here).
good_step = st.one_of(
    VALUES.map(lambda v: {"reward_txt": repr(float(v)).encode()}),
    st.dictionaries(KEYS, VALUES, max_size=3).map(lambda d: {"reward_json": _json_bytes(d)}),
)
odd_step = st.one_of(
    st.just({}),  # no reward file
    st.just({"raises": "timeout"}),
    st.just({"reward_json": b"null"}),
    st.just({"reward_json": b"{}"}),
    st.just({"reward_txt": b""}),
    any_reward_txt.map(lambda data: {"reward_txt": data}),
    any_reward_json.map(lambda data: {"reward_json": data}),
)
verifier_step = st.one_of(good_step, good_step, good_step, odd_step)

# Thresholds: mostly values rewards take (so a reward sits on, above or below one), ints among them. Strategies
# are built once, not in the draw (one built there is built and validated again on every draw).
_THRESHOLDS = (st.sampled_from([float("nan"), float("inf"), float("-inf"), 2**53, -(2**53), 1e-16]),
               st.one_of(st.sampled_from([0, 1, 0.0, 0.5, 1.0, 0.25, -0.0, -1, 2]), st.floats(-2, 2, allow_nan=False)))
THRESHOLDS = st.integers(0, 9).flatmap(lambda i: _THRESHOLDS[i != 0])
min_reward = st.one_of(THRESHOLDS, THRESHOLDS, st.dictionaries(KEYS, THRESHOLDS, max_size=2))


def _threshold(value: object) -> bool:
    """A value the input model takes as a threshold: a float, or an int of at most 2**53."""
    return isinstance(value, float) or (type(value) is int and abs(value) <= 2**53)


def own_rewards(drawn: dict) -> dict:
    """The rewards a step's reward files parse to, when they plainly do (else {})."""
    try:
        if drawn.get("reward_json") is not None:
            rewards = json.loads(drawn["reward_json"])
            return rewards if isinstance(rewards, dict) else {}
        if drawn.get("reward_txt") is not None:
            return {"reward": float(drawn["reward_txt"])}
    except ValueError:
        pass
    return {}


NUDGES = st.sampled_from(["on", "on", "below", "above"])


@cache
def _key_lists(keys: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(keys), min_size=1, max_size=2, unique=True)


@st.composite
def own_min_reward(draw: st.DrawFn, rewards: dict) -> object:
    """A threshold on the step's own reward: the value itself (the boundary), or the float next to it."""
    keys = sorted(key for key, value in rewards.items() if _threshold(value))
    if not keys:
        return draw(min_reward)
    nudge = draw(NUDGES)

    def near(value: float) -> float:
        if nudge == "on" or math.isnan(value):
            return value
        return math.nextafter(float(value), -math.inf if nudge == "below" else math.inf)

    if "reward" in keys and draw(st.booleans()):
        return near(rewards["reward"])
    chosen = draw(_key_lists(tuple(keys)))
    return {key: near(rewards[key]) for key in chosen}


@st.composite
def step(draw: st.DrawFn) -> dict:
    drawn = dict(draw(verifier_step))
    if draw(st.integers(0, 11)) == 0:  # the test script raises something other than a timeout
        drawn = {"raises": draw(RAISED)}
    if draw(st.integers(0, 6)) == 0:
        drawn["agent_raises"] = draw(RAISED)
    kind = draw(st.integers(0, 5))
    if kind == 0:
        drawn["min_reward"] = draw(min_reward)
    elif kind == 1:
        drawn["min_reward"] = draw(own_min_reward(own_rewards(drawn)))
    return drawn


multi_step_inputs = st.builds(
    lambda strategy, steps, disabled: {"strategy": strategy, "steps": steps,
                                       **({"verifier_disabled": True} if disabled else {})},
    st.sampled_from([None, "mean", "final"]), st.lists(step(), min_size=1, max_size=5),
    st.integers(0, 9).map(lambda i: i == 0),
)
