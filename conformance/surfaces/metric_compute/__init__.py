"""metric.compute: a dataset metric over per-trial reward dicts (seed-003 §3)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, StrictStr

from conformance.core.inputs import RewardDict, ScriptFiles, StrictInput, inside
from conformance.core.surfaces import Bench, surface


def _script_path(metric: dict[str, Any]) -> dict[str, Any]:
    """A metric's ``kwargs.script_path`` (what a ``uv-script`` metric runs) must stay in the folder it runs from.

    It may name a file the input does not ship (harbor's error is a case), or be
    left out; it may not reach a script elsewhere on the machine that runs it.
    """
    kwargs = metric.get("kwargs")
    if isinstance(kwargs, dict) and "script_path" in kwargs:
        path = kwargs["script_path"]
        if not inside(path):
            raise ValueError(f"kwargs.script_path {path!r} must be a relative path inside the folder "
                             f"(not absolute, no '..', not empty)")
    return metric


# What a metric computes: a dict of numbers from a built-in one; a uv-script's metric.json may hold any JSON object
# or array.
MetricOutput = dict[StrictStr, Any] | list[Any]

# A metric object as a dataset's registry.json lists it.
Metric = Annotated[dict[StrictStr, Any], AfterValidator(_script_path)]


def runs_a_script(value: Any) -> bool:
    """A uv-script metric runs a process of its own: such an input goes alone, not in a batch."""
    metric = value.get("metric") if isinstance(value, dict) else None
    return isinstance(metric, dict) and metric.get("type") == "uv-script"


@surface(
    "metric.compute",
    cache_note="a pure function of the metric and rewards; a uv-script runs the script bytes the input ships, "
               "with the oracle's CPython (part of the cache key), its inline dependencies pinned",
    summary="a dataset metric (mean, max, min, sum, uv-script) over per-trial reward dicts",
    output="dict[str, float | int], or the exception raised",
    spec="seed-003 §3",
    strategy=".strategy:metric_inputs",
    alone=runs_a_script,
    rejections=frozenset({"ValidationError"}),  # the metric config refused by its model: no metric was made
    output_model=MetricOutput,
    # draws ÷ yardstick, ci examples/s and campaign inputs/s: twice what they were before the strategies were
    # made leaner, at commit 3bc0f84 (0.72 of the yardstick by the bench's measure of four seeds; 106 ci
    # examples/s; a campaign worker 80 inputs/s, the mean of two of the bench's measures over 12 s).
    bench=Bench(generated=True, targets={
        "draws ÷ yardstick": 1.44, "ci examples/s": 212, "campaign inputs/s": 160,
        "exec inputs/s": 10_000, "wire / plain JSON": 2.0}),
)
class MetricComputeInput(StrictInput):
    """A metric object as in a dataset's registry.json, and one reward dict (or null) per trial.

    ``scripts`` holds the files a ``uv-script`` metric names: each is written,
    under its relative name, into the folder the metric is computed from.
    """

    metric: Metric
    rewards: list[RewardDict | None]
    scripts: ScriptFiles = None
