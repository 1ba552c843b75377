"""metric.compute: harbor's built-in dataset metrics, from a registry.json config.

One reward key (or none) across all trials: the output is keyed by the metric
name and each trial contributes its only value (0 for a null trial or an
empty dict). Several keys: the output is keyed by reward key, in sorted
order, and a trial lacking a key contributes 0 for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.kit.candidate import reads_files, working_folder
from conformance.reference.cpython_sum import cpython312_sum
from conformance.reference.pydantic_float import ValidationError
from conformance.reference.uv_script import UvScriptMetric


def _mean(values: list[Any]) -> Any:
    return cpython312_sum(values) / len(values)


AGGREGATES: dict[str, Callable[[list[Any]], Any]] = {
    "sum": cpython312_sum,
    "min": min,
    "max": max,
    "mean": _mean,
}
METRIC_TYPES = ("sum", "min", "max", "mean", "uv-script")


def aggregate_reward_dicts(
    rewards: list[Any], name: str, aggregate: Callable[[list[Any]], Any]
) -> dict[str, Any]:
    keys = sorted({key for reward in rewards if reward is not None for key in reward})
    if len(keys) <= 1:
        values = [0 if r is None else next(iter(r.values()), 0) for r in rewards]
        return {name: aggregate(values)}
    return {key: aggregate([0 if r is None else r.get(key, 0) for r in rewards]) for key in keys}


def validate_config(config: Any) -> tuple[str, dict[str, Any]]:
    """The registry.json metric object's (type, kwargs), by MetricConfig's rules."""
    if not isinstance(config, dict):
        raise ValidationError("metric config should be an object")
    # Keys other than type and kwargs are ignored, as harbor's MetricConfig ignores them.
    kind = config.get("type", "mean")
    kwargs = config.get("kwargs", {})
    if kind not in METRIC_TYPES or not isinstance(kwargs, dict) or any(
        not isinstance(k, str) for k in kwargs
    ):
        raise ValidationError(f"invalid metric config {config!r}")
    return kind, kwargs


def metric_from_config(config: Any) -> Callable[[list[Any]], dict[str, Any]]:
    """The registry.json metric object -> a compute function (the metric is constructed)."""
    kind, kwargs = validate_config(config)
    if kind == "uv-script":
        return UvScriptMetric(**kwargs).compute
    if kwargs:
        # The built-in metrics take no constructor arguments.
        raise TypeError(f"{kind} metric takes no arguments, got {sorted(kwargs)}")
    aggregate = AGGREGATES[kind]
    return lambda rewards: aggregate_reward_dicts(rewards, kind, aggregate)


def compute(request: dict[str, Any]) -> dict[str, Any]:
    return metric_from_config(request["metric"])(request["rewards"])


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The reference candidate's answer for metric.compute: a uv-script's files are written where it runs."""
    if not reads_files(request.get("metric"), request.get("scripts")):
        return compute(request)
    with working_folder(request.get("scripts"), change_directory=False):
        return compute(request)
