"""multi_step.reward: a multi-step trial's reward from its steps, by the task's strategy.

What harbor 0.13.1 does, written from its observed behaviour: each step's
verifier parses its own reward files (as reward.parse); a step whose verifier
failed has no verifier result and stops the steps after it. ``final`` takes
the last step that ran, as it is. ``mean`` (also when the strategy is unset)
averages each key over the steps that have a verifier result, a missing key
counting 0 and a ``null`` rewards counting as ``{}``; no step with a result,
or no key at all, gives no verifier result. The mean's keys come from a set,
so their order is not part of the result. An error while choosing (the mean
of an int too large for a float) is the trial's exception.
"""

from __future__ import annotations

from typing import Any

from conformance.reference import reward_files
from conformance.reference.cpython_sum import cpython312_sum
from conformance.reference.pydantic_float import ValidationError

STRATEGIES = (None, "mean", "final")


def _run_step(index: int, step: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"name": f"step-{index + 1}", "verifier_result": None, "exception_type": None}
    if step.get("raises") == "timeout":
        result["exception_type"] = "TimeoutError"
        return result
    files = {k: step[k] for k in ("reward_txt", "reward_json") if step.get(k) is not None}
    try:
        result["verifier_result"] = {"rewards": reward_files.parse(files)}
    except Exception as error:  # the step's verifier failed: recorded on the step, not raised
        result["exception_type"] = type(error).__name__
    return result


def _mean(steps: list[dict[str, Any]]) -> dict[str, Any] | None:
    valid = [s["verifier_result"]["rewards"] or {} for s in steps if s["verifier_result"] is not None]
    keys = {key for rewards in valid for key in rewards}
    if not valid or not keys:
        return None
    return {"rewards": {key: cpython312_sum(r.get(key, 0) for r in valid) / len(valid) for key in keys}}


def compute(request: dict[str, Any]) -> dict[str, Any]:
    strategy = request.get("strategy")
    if strategy not in STRATEGIES:
        raise ValidationError(f"multi_step_reward_strategy: {strategy!r} is not one of 'mean', 'final'")
    steps: list[dict[str, Any]] = []
    for index, step in enumerate(request["steps"]):
        steps.append(_run_step(index, step))
        if steps[-1]["exception_type"] is not None and steps[-1]["verifier_result"] is None:
            break  # a failed step without a result aborts the rest
    try:
        verifier_result = steps[-1]["verifier_result"] if strategy == "final" else _mean(steps)
    except Exception as error:  # e.g. OverflowError: an int too large for a float, divided
        # The trial fails while choosing its reward: a trial-level exception, no verifier result.
        return {"verifier_result": None, "exception_type": type(error).__name__, "steps": steps}
    return {"verifier_result": verifier_result, "exception_type": None, "steps": steps}
