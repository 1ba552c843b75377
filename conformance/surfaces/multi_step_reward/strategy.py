"""multi_step.reward: a strategy and the steps of one multi-step trial.

Steps mostly leave a good reward (one key, or the same few keys), sometimes
a file that fails to parse, no file at all, ``null``, ``{}`` or a timeout,
so the step-abort rule and the mean's missing-key and empty-step rules all
come up. On top of what the verifier leaves, a step sometimes has a
``min_reward`` (mostly thresholds its rewards sit on, above or below), an
agent that raises during the step, or a test script that raises; one plain
trial in four runs with the verifier disabled. One trial in four is a telling one
(:func:`_telling_trial`), built from a seed it draws. A step is a plain function of the trial's draw:
its shape one pick, its values built from a seed (:func:`step`).
"""

from __future__ import annotations

import json
import math
import random
import struct

from hypothesis import strategies as st

from conformance.strategies.picks import pick, pick_each
from conformance.strategies.reward_files import own_rewards
from conformance.surfaces.reward_parse.strategy import reward_json as any_reward_json
from conformance.surfaces.reward_parse.strategy import reward_txt as any_reward_txt

# What a stage raises (as the surface's Raised): a timeout, built-in exceptions, harbor's agent exit error.
RAISED = ("timeout", "timeout", "RuntimeError", "ValueError", "OSError", "NonZeroAgentExitCodeError")


def _json_bytes(rewards: dict) -> bytes:
    return json.dumps(rewards).encode()


COMMON_VALUES = (0, 1, 0.0, 1.0, 0.5, 0.25, -0.0, 2)
AWKWARD_VALUES = (0.1, 0.2, 0.3, 1e16, 1e-16, float("nan"), float("inf"))
EDGE_FLOATS = (-1.0, 1.5, -1.5, 1.1, float("-inf"), 1.7976931348623157e308, 5e-324, -5e-324, 2.0**53)
KEY_POOL = ("reward", "reward", "x", "accuracy", "b", "a")


def _value(rng: random.Random) -> float | int:
    """A reward: a common one, an awkward one, an edge float or any finite float, alike."""
    pool = rng.randrange(4)
    if pool < 3:
        return rng.choice((COMMON_VALUES, AWKWARD_VALUES, EDGE_FLOATS)[pool])
    value: float = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
    return value if math.isfinite(value) else 0.0


def _good_step(seed: int) -> dict:
    """What a verifier leaves when it works: a reward.txt, or a reward.json of up to three keys. Built from one
    seed: a draw per value was most of the surface's draws, and a step's values need no shrinking of their own
    (a failing trial shrinks by its steps)."""
    rng = random.Random(seed)
    if rng.randrange(2):
        return {"reward_txt": repr(float(_value(rng))).encode()}
    return {"reward_json": _json_bytes({rng.choice(KEY_POOL): _value(rng) for _ in range(rng.randrange(4))})}


# What a verifier leaves when it works.
good_step = st.integers(0, 2**32 - 1).map(_good_step)
# What else a verifier leaves: no reward file, a timeout, null, {}, an empty file, or any reward file.
ODD_FILES: tuple[dict[str, object], ...] = (
    {}, {"raises": "timeout"}, {"reward_json": b"null"}, {"reward_json": b"{}"}, {"reward_txt": b""})
odd_reward_files = (any_reward_txt.map(lambda data: {"reward_txt": data}),
                    any_reward_json.map(lambda data: {"reward_json": data}))

# Thresholds: one in ten non-finite or far out; else, alike, a value rewards take (so a reward sits on, above or
# below one, ints among them) or any float in [-2, 2].
FAR_THRESHOLDS = (float("nan"), float("inf"), float("-inf"), 2**53, -(2**53), 1e-16)
NEAR_THRESHOLDS = (0, 1, 0.0, 0.5, 1.0, 0.25, -0.0, -1, 2)
KEY_POOL = ("reward", "reward", "x", "accuracy", "b", "a")


def _threshold_value(rng: random.Random) -> float | int:
    share = rng.randrange(20)
    if share < 2:
        return rng.choice(FAR_THRESHOLDS)
    if share < 11:
        return rng.choice(NEAR_THRESHOLDS)
    value = rng.uniform(-2, 2)
    return round(value, rng.randrange(1, 4)) if rng.randrange(2) else value


def _min_reward(rng: random.Random) -> object:
    """Any threshold: one, or a table of up to two of them by key, alike."""
    if rng.randrange(2):
        return _threshold_value(rng)
    return {key: _threshold_value(rng) for key in rng.sample(KEY_POOL, rng.randrange(3))}


def _threshold(value: object) -> bool:
    """A value the input model takes as a threshold: a float, or an int of at most 2**53."""
    return isinstance(value, float) or (type(value) is int and abs(value) <= 2**53)


def _own_min_reward(rng: random.Random, rewards: dict) -> object:
    """A threshold on the step's own reward: the value itself (the boundary, one time in two), or the float next
    to it, below or above; for the reward key alone, or a table of one or two of its keys."""
    keys = sorted(key for key, value in rewards.items() if _threshold(value))
    if not keys:
        return _min_reward(rng)
    nudge = rng.choice(("on", "on", "below", "above"))

    def near(value: float) -> float:
        if nudge == "on" or math.isnan(value):
            return value
        return math.nextafter(float(value), -math.inf if nudge == "below" else math.inf)

    if "reward" in keys and rng.randrange(2):
        return near(rewards["reward"])
    return {key: near(rewards[key]) for key in rng.sample(keys, min(len(keys), 1 + rng.randrange(2)))}


# A step's shape, as one pick: what its verifier leaves (three in four a good reward, else the seven odd kinds
# alike: the fixed files, any reward.txt, any reward.json), whether its test script raises something other than
# a timeout (one in eight), whether its agent raises (one in six), and whether it has a min_reward (one in
# six) or one on its own reward (one in six). The plain good step comes first, where a shrink goes.
GOOD, FIXED_ODD, ANY_TXT, ANY_JSON = range(4)
LEAVES = (GOOD,) * 21 + (FIXED_ODD, ANY_TXT, ANY_JSON)
NO_MIN, ANY_MIN, OWN_MIN = range(3)
THRESHOLD_KINDS = (ANY_MIN, OWN_MIN, NO_MIN, NO_MIN, NO_MIN, NO_MIN)
SHAPES = sorted(((leaves, raises == 0, agent == 0, kind) for leaves in LEAVES for raises in range(8)
                 for agent in range(6) for kind in THRESHOLD_KINDS),
                key=lambda shape: (shape[1:] != (False, False, NO_MIN), shape[0] != GOOD))
_SEED = st.integers(0, 2**32 - 1)


def step(draw: st.DrawFn) -> dict:
    """One step: its shape, then a seed its files, exceptions and threshold are built from (a failing trial
    shrinks by its steps and their shapes: a step's values need no shrinking of their own), then any reward
    file of the odd kinds."""
    leaves, raises, agent_raises, threshold = pick(draw, SHAPES)
    seed = draw(_SEED)
    rng = random.Random(seed)
    if raises:
        drawn: dict = {"raises": rng.choice(RAISED)}
    elif leaves == GOOD:
        drawn = _good_step(seed)
    elif leaves == FIXED_ODD:
        drawn = dict(rng.choice(ODD_FILES))
    else:
        drawn = dict(draw(odd_reward_files[leaves - ANY_TXT]))
    if agent_raises:
        drawn["agent_raises"] = rng.choice(RAISED)
    if threshold == ANY_MIN:
        drawn["min_reward"] = _min_reward(rng)
    elif threshold == OWN_MIN:
        drawn["min_reward"] = _own_min_reward(rng, own_rewards(drawn))
    return drawn


def _reward_file(rng: random.Random, key: str, value: float) -> dict:
    if key == "reward" and rng.randrange(2):
        return {"reward_txt": repr(value).encode()}
    return {"reward_json": _json_bytes({key: value})}


# Means that Python 3.12's compensated sum() and a left-to-right one make differently.
UNEVEN_SUMS = [(0.1, 0.2, 0.3), (1e16, 1.0, -1e16), (0.2, 0.1, 0.3), (1e100, 1.0, -1e100, 1.0), (1e16, 1.0, 1.0),
               (1.0, 1e-16, 1e-16)]


def _telling_trial(which: int, seed: int) -> dict:
    """A trial that tells a rule of the steps apart, each of which a single rare draw reached before: a mean
    whose sum a naive one makes differently, a NaN reward under a threshold (no comparison with NaN stops the
    steps), a table of thresholds on a key other than reward, a null or empty step counted in the mean as
    zeros, a final step without a verifier result, a reward equal to its threshold (which does not stop)."""
    rng = random.Random(seed)
    key = rng.choice(["reward", "reward", "x", "accuracy"])
    if which == 0:
        values = rng.choice(UNEVEN_SUMS)  # in this order: another may sum alike both ways
        return {"strategy": rng.choice([None, "mean"]), "steps": [_reward_file(rng, key, v) for v in values]}
    if which == 1:
        first = {**_reward_file(rng, key, math.nan),
                 "min_reward": rng.choice([0.5, 0.0, 1, -1.0]) if key == "reward" else {key: rng.choice([0.5, 0])}}
        return {"strategy": rng.choice(["final", "mean", None]),
                "steps": [first, _reward_file(rng, key, rng.choice([1.0, 0.25, 2]))]}
    if which == 2:
        other = rng.choice(["x", "accuracy", "b"])
        first = {"reward_json": _json_bytes({"reward": 1.0, other: rng.choice([0.0, 0.25, -1.0])}),
                 "min_reward": {other: rng.choice([0.5, 1, 0.3])}}
        return {"strategy": rng.choice(["final", "mean", None]),
                "steps": [first, _reward_file(rng, "reward", rng.choice([1.0, 0.5, 0]))]}
    if which == 3:
        empty = rng.choice([{"reward_json": b"null"}, {"reward_json": b"{}"}])
        steps = [empty, _reward_file(rng, key, rng.choice([1.0, 0.5, 3]))]
        if rng.randrange(2):
            rng.shuffle(steps)
        return {"strategy": rng.choice([None, "mean"]), "steps": steps}
    if which == 5:
        value = rng.choice([0.5, 1.0, 0.0, 0.25, 1])
        first = {**_reward_file(rng, key, value), "min_reward": value if key == "reward" else {key: value}}
        return {"strategy": rng.choice(["final", "mean", None]),
                "steps": [first, _reward_file(rng, key, rng.choice([0.0, 2.0, 0.75]))]}
    last = rng.choice([{"raises": "timeout"}, {"raises": rng.choice(["RuntimeError", "ValueError", "OSError"])}])
    return {"strategy": "final", "steps": [_reward_file(rng, key, rng.choice([1.0, 0.5, 0])), last]}


# The task's strategy, and one trial in four with the verifier disabled; with the number of steps, one pick (as
# two picks, the ci seed's run drew a disabled verifier in 4% of its trials).
SETTINGS = [(strategy, disabled == 3) for strategy in (None, "mean", "final") for disabled in range(4)]
STEP_COUNTS = (1, 2, 3, 4, 5)
# Three trials in four are plain (None), the fourth a telling one of these kinds. The kind is drawn apart from
# the seed: Hypothesis draws some seeds again and again.
TRIALS = (None,) * 24 + (0, 0, 1, 2, 3, 4, 5, 5)


@st.composite
def _trial(draw: st.DrawFn) -> dict:
    telling = pick(draw, TRIALS)
    if telling is not None:
        return _telling_trial(telling, draw(_SEED))
    (strategy, disabled), count = pick_each(draw, SETTINGS, STEP_COUNTS)
    steps = [step(draw) for _ in range(count)]
    return {"strategy": strategy, "steps": steps, **({"verifier_disabled": True} if disabled else {})}


multi_step_inputs = _trial()
