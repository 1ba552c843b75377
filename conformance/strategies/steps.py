"""multi_step.reward: a strategy and the steps of one multi-step trial.

Steps mostly leave a good reward (one key, or the same few keys), sometimes
a file that fails to parse, no file at all, ``null``, ``{}`` or a timeout,
so the step-abort rule and the mean's missing-key and empty-step rules all
come up.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from conformance.strategies.reward_files import reward_json as any_reward_json
from conformance.strategies.reward_files import reward_txt as any_reward_txt

VALUES = st.one_of(st.sampled_from([0, 1, 0.0, 1.0, 0.5, 0.25, -0.0, 2]), st.floats(allow_nan=False),
                   st.sampled_from([0.1, 0.2, 0.3, 1e16, 1e-16, float("nan"), float("inf")]))
KEYS = st.sampled_from(["reward", "reward", "x", "accuracy", "b", "a"])


def _json_bytes(rewards: dict) -> bytes:
    return json.dumps(rewards).encode()


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
step = st.one_of(good_step, good_step, good_step, odd_step)

multi_step_inputs = st.fixed_dictionaries(
    {"strategy": st.sampled_from([None, "mean", "final"]), "steps": st.lists(step, min_size=1, max_size=5)},
)
