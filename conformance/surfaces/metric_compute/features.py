"""metric.compute: the kinds of metric and reward list its strategy is meant to reach."""

from __future__ import annotations

import math
from typing import Any

from conformance.core.features import Feature

BUILTIN_TYPES = frozenset({"mean", "max", "min", "sum"})


def _values(value: Any) -> list[Any]:
    return [item for trial in value["rewards"] if isinstance(trial, dict) for item in trial.values()]


def _type(value: Any) -> Any:
    return value["metric"].get("type")


FEATURES = (
    # NaN and the infinities: min()/max() keep a NaN only when it comes first, sum() turns inf - inf into NaN.
    Feature("non-finite value", "a reward is NaN or infinite",
            lambda value: any(isinstance(v, float) and not math.isfinite(v) for v in _values(value)),
            minimum={"ci": 0.014, "dev": 0.03, "explore": 0.04}),
    # A uv-script runs a process and reads its JSON back: a port that never runs one never meets its errors.
    Feature("uv-script", "the metric is a uv-script",
            lambda value: _type(value) == "uv-script" and isinstance(value["metric"].get("kwargs"), dict),
            minimum={"ci": 0.005, "explore": 0.03}),
    # No trials: the mean divides by zero, min() and max() of nothing raise.
    Feature("no trials", "an empty reward list",
            lambda value: not value["rewards"],
            minimum={"ci": 0.029, "dev": 0.03, "explore": 0.045}),
    # Each key is aggregated on its own, and a trial without a key counts as 0 for it.
    Feature("multi-key rewards", "a trial's reward dict has two keys or more",
            lambda value: any(isinstance(trial, dict) and len(trial) >= 2 for trial in value["rewards"]),
            minimum={"ci": 0.094, "dev": 0.1, "explore": 0.14}),
    # A trial without a result: None, or an empty dict, joins every key as the int 0.
    Feature("trial without rewards", "a trial's rewards are null or {}",
            lambda value: any(not trial for trial in value["rewards"]),
            minimum={"ci": 0.053, "dev": 0.08, "explore": 0.11}),
    # Ints a float cannot hold: an exact int sum divided once, or floats added, give different means.
    Feature("int past 2**53", "a reward is an int a float cannot hold exactly",
            lambda value: any(type(v) is int and abs(v) > 2**53 for v in _values(value)),
            minimum={"ci": 0.07, "dev": 0.1, "explore": 0.11}),
    # A config harbor refuses, or reads as a built-in after all (its case, its kwargs): the error or the metric.
    Feature("odd config", "the metric's type is no lowercase built-in nor uv-script, or it has kwargs beside",
            lambda value: _type(value) not in BUILTIN_TYPES | {"uv-script"} or value["metric"].get("kwargs") not in (
                None, {}) and _type(value) != "uv-script",
            minimum={"ci": 0.023, "dev": 0.05, "explore": 0.07}),
)
