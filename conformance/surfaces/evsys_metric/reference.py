"""evsys.metric: evsys-sdk's built-in metrics over per-task lists of sample rewards.

What evsys-sdk does, written from its observed behaviour: a metric takes one
list of sample rewards per task and returns a float. A sample passes when its
reward is ``>= 1.0`` (so NaN never passes).

* ``mean_reward`` (also registered as ``avg``): the mean over the non-empty
  tasks of each task's mean reward; no such task gives 0.0.
* ``pass_rate``: passing samples over all samples; no sample gives 0.0.
* ``pass@k``: the share of non-empty tasks with a passing sample among their
  first k; ``pass^k``: whose first k samples all pass. No non-empty task
  gives 0.0. evsys-sdk registers pass@1, pass@3 and pass^3; any positive
  decimal k is read by the same rule.
* Any other name is a ``KeyError``.

The sums are CPython 3.12's ``sum()``: exact for ints (then a correctly
rounded int/int division, which overflows for huge ints), compensated for
floats.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.reference.cpython_sum import cpython312_sum

PASS_THRESHOLD = 1.0
_PASS_K = re.compile(r"pass([@^])([1-9][0-9]*)")


def passes(reward: float) -> bool:
    return reward >= PASS_THRESHOLD


@dataclass(frozen=True)
class Metric:
    name: str
    fn: Callable[[list[list[float]]], float]

    def compute(self, task_rewards: list[list[float]]) -> float:
        return self.fn(task_rewards)


def mean_reward(task_rewards: list[list[float]]) -> float:
    tasks = [rs for rs in task_rewards if rs]  # empty tasks are skipped, not counted as 0
    if not tasks:
        return 0.0
    return cpython312_sum(cpython312_sum(rs) / len(rs) for rs in tasks) / len(tasks)


def pass_rate(task_rewards: list[list[float]]) -> float:
    passed = sum(1 for rs in task_rewards for r in rs if passes(r))
    total = sum(len(rs) for rs in task_rewards)
    return passed / total if total else 0.0


def _solved_share(task_rewards: list[list[float]], k: int, solved: Callable[[list[float]], bool]) -> float:
    tasks = [rs for rs in task_rewards if rs]
    if not tasks:
        return 0.0
    return sum(1 for rs in tasks if solved(rs[:k])) / len(tasks)


def pass_at(k: int) -> Callable[[list[list[float]]], float]:
    """pass@k: any of a task's first k samples passes."""
    return lambda task_rewards: _solved_share(task_rewards, k, lambda rs: any(passes(r) for r in rs))


def pass_all(k: int) -> Callable[[list[list[float]]], float]:
    """pass^k: all of a task's first k samples pass."""
    return lambda task_rewards: _solved_share(task_rewards, k, lambda rs: all(passes(r) for r in rs))


BUILTINS: dict[str, Callable[[list[list[float]]], float]] = {
    "mean_reward": mean_reward,
    "avg": mean_reward,
    "pass_rate": pass_rate,
}


def get(name: str) -> Metric:
    if name in BUILTINS:
        return Metric(name, BUILTINS[name])
    match = _PASS_K.fullmatch(name) if isinstance(name, str) else None
    if match is None:
        raise KeyError(f"No metric registered under '{name}'")
    kind, k = match.group(1), int(match.group(2))
    return Metric(name, pass_at(k) if kind == "@" else pass_all(k))


def compute(request: dict[str, Any]) -> float:
    return get(request["metric"]).compute(request["task_rewards"])


def answer(request: dict[str, Any]) -> float:
    """The reference candidate's answer for evsys.metric."""
    return compute(request)
