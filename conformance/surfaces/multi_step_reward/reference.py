"""multi_step.reward: a multi-step trial's reward from its steps, by the task's strategy.

What harbor 0.13.1 does, written from its observed behaviour:

* Each step runs its agent, then its verifier. The agent's failure in a step
  (any exception; a timeout is ``AgentTimeoutError``) is recorded on the
  step, and the step is still verified: unlike a single-step trial, any
  exception type, and nothing on the trial itself.
* The verifier parses the step's own reward files (as reward.parse). Its
  test script raising is recorded on the step (a timeout as the bare
  ``TimeoutError``) and leaves no verifier result. A step keeps its first
  exception: after an agent failure the verifier's is dropped.
* With the verifier disabled, no step has a verifier result; each step
  keeps only its agent's exception.
* After each step: a step with an exception and no verifier result stops the
  steps after it. Otherwise its ``min_reward`` (unless the verifier is
  disabled) does: a number gates ``reward``, a table each of its keys; a
  missing key, no rewards or empty rewards count as ``-inf``; a key whose
  value is ``< `` its threshold stops (NaN never does, nor a NaN threshold).
* ``final`` takes the last step that ran, as it is. ``mean`` (also when the
  strategy is unset) averages each key over the steps that ran and have a
  verifier result, a missing key counting 0 and a ``null`` rewards counting
  as ``{}``; no step with a result, or no key at all, gives no verifier
  result. The mean's keys come from a set, so their order is not part of the
  result. An error while choosing (the mean of an int too large for a float)
  is the trial's exception.
"""

from __future__ import annotations

import math
from typing import Any

from conformance.reference.cpython_sum import cpython312_sum
from conformance.reference.pydantic_float import ValidationError
from conformance.surfaces.reward_parse import reference as reward_files

STRATEGIES = (None, "mean", "final")


def _run_step(index: int, step: dict[str, Any], verifier_disabled: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"name": f"step-{index + 1}", "verifier_result": None, "exception_type": None}
    agent_raised = step.get("agent_raises")
    if agent_raised is not None:  # recorded on the step; the step goes on to its verifier
        result["exception_type"] = "AgentTimeoutError" if agent_raised == "timeout" else agent_raised
    if verifier_disabled:
        return result
    raised = step.get("raises")
    try:
        if raised is not None:
            raise _Raised("TimeoutError" if raised == "timeout" else raised)
        files = {k: step[k] for k in ("reward_txt", "reward_json") if step.get(k) is not None}
        result["verifier_result"] = {"rewards": reward_files.parse(files)}
    except Exception as error:  # the step's verifier failed: recorded on the step (its first exception)
        if result["exception_type"] is None:
            result["exception_type"] = error.name if isinstance(error, _Raised) else type(error).__name__
    return result


class _Raised(Exception):
    """What the step's test script raised, by name."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _below_min_reward(rewards: dict[str, Any] | None, min_reward: Any) -> bool:
    thresholds = min_reward if isinstance(min_reward, dict) else {"reward": min_reward}
    for key, threshold in thresholds.items():
        actual = rewards.get(key, -math.inf) if rewards else -math.inf
        if actual < float(threshold):  # the task config holds the threshold as a float
            return True
    return False


def _stops(step: dict[str, Any], result: dict[str, Any], verifier_disabled: bool) -> bool:
    """Whether the steps after this one are left out."""
    if result["exception_type"] is not None and result["verifier_result"] is None:
        return True
    if step.get("min_reward") is None or verifier_disabled:
        return False
    verifier_result = result["verifier_result"]
    return _below_min_reward(verifier_result["rewards"] if verifier_result else None, step["min_reward"])


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
    verifier_disabled = bool(request.get("verifier_disabled"))
    steps: list[dict[str, Any]] = []
    for index, step in enumerate(request["steps"]):
        steps.append(_run_step(index, step, verifier_disabled))
        if _stops(step, steps[-1], verifier_disabled):
            break
    try:
        verifier_result = steps[-1]["verifier_result"] if strategy == "final" else _mean(steps)
    except Exception as error:  # e.g. OverflowError: an int too large for a float, divided
        # The trial fails while choosing its reward: a trial-level exception, no verifier result.
        return {"verifier_result": None, "exception_type": type(error).__name__, "steps": steps}
    return {"verifier_result": verifier_result, "exception_type": None, "steps": steps}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The reference candidate's answer for multi_step.reward."""
    return compute(request)
