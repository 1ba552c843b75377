"""The telling trials multi_step.reward draws in their own branch are valid inputs of the surface, and each is
what its docstring says: a mean whose sum a left-to-right addition makes differently, a reward equal to its
threshold."""

from __future__ import annotations

import functools
import math

import pytest

from conformance.core import surfaces
from conformance.reference.cpython_sum import cpython312_sum
from conformance.surfaces.multi_step_reward import strategy as multi_step


@pytest.mark.parametrize("which", range(6))
def test_every_telling_trial_is_a_valid_multi_step_input(which):
    model = surfaces.get("multi_step.reward")
    for seed in range(30):
        model.validate_input(multi_step._telling_trial(which, seed))


def test_the_uneven_means_differ_from_a_left_to_right_mean():
    for values in multi_step.UNEVEN_SUMS:
        assert cpython312_sum(values) / len(values) != functools.reduce(lambda a, b: a + b, values) / len(values)


def test_a_threshold_trial_holds_a_reward_equal_to_its_min_reward():
    for seed in range(30):
        first = multi_step._telling_trial(5, seed)["steps"][0]
        rewards = multi_step.own_rewards(first)
        threshold = first["min_reward"]
        thresholds = threshold if isinstance(threshold, dict) else {"reward": threshold}
        assert thresholds and all(rewards[k] == v and not math.isnan(v) for k, v in thresholds.items())
