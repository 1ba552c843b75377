"""multi_step.reward: the kinds of multi-step trial its strategy is meant to reach."""

from __future__ import annotations

import math
from typing import Any

from conformance.core.features import Feature
from conformance.strategies.reward_files import own_rewards
from conformance.surfaces.reward_parse.features import any_reward_file, non_finite


def _below(reward: Any, threshold: Any) -> bool:
    return (isinstance(reward, int | float) and isinstance(threshold, int | float)
            and not math.isnan(reward) and reward < threshold)


def _stops(step: dict[str, Any]) -> bool:
    """The step's own reward is below its min_reward (by key, or the ``reward`` key): the trial stops there."""
    threshold, rewards = step.get("min_reward"), own_rewards(step)
    if isinstance(threshold, dict):
        return any(_below(rewards.get(key), bound) for key, bound in threshold.items())
    return threshold is not None and _below(rewards.get("reward"), threshold)


def _steps(value: Any) -> list[dict[str, Any]]:
    return list(value["steps"])


FEATURES = (
    # A step under its min_reward ends the trial: what follows never runs, and the reward is that step's.
    Feature("min_reward stop", "a step's own reward is below its min_reward",
            lambda value: any(_stops(step) for step in _steps(value)),
            minimum={"ci": 0.01, "explore": 0.03}),
    # A threshold table gates each key it names; a number gates the `reward` key only.
    Feature("min_reward table", "a step's min_reward is a table by key",
            lambda value: any(isinstance(step.get("min_reward"), dict) for step in _steps(value)),
            minimum={"ci": 0.047, "dev": 0.03, "explore": 0.11}),
    # A test script that raises leaves no files: the step's exception, and whether the trial goes on.
    Feature("raising step", "a step's test script raises",
            lambda value: any(step.get("raises") for step in _steps(value)),
            minimum={"ci": 0.109, "dev": 0.14, "explore": 0.17}),
    # An agent that raises: the step is still verified, and the exception type is kept beside the reward.
    Feature("agent raises", "a step's agent raises",
            lambda value: any(step.get("agent_raises") for step in _steps(value)),
            minimum={"ci": 0.08, "dev": 0.13, "explore": 0.17}),
    # NaN and the infinities in a step's reward: the mean over steps, and a threshold compared to them.
    Feature("non-finite reward", "a step's reward file holds NaN or an infinity",
            lambda value: any_reward_file(_steps(value), non_finite),
            minimum={"ci": 0.006, "dev": 0.005, "explore": 0.025}),
    # The mean strategy over steps with different keys; the final strategy takes the last step.
    Feature("mean strategy", "the task's strategy is `mean` over two steps or more",
            lambda value: value.get("strategy") == "mean" and len(_steps(value)) >= 2,
            minimum={"ci": 0.037, "dev": 0.03, "explore": 0.05}),
    # --disable-verification: no step is verified, whatever its files.
    Feature("verifier disabled", "the trial runs with the verifier disabled",
            lambda value: bool(value.get("verifier_disabled")),
            minimum={"ci": 0.065, "dev": 0.08, "explore": 0.12}),
)
