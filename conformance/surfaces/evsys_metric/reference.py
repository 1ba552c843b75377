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

Seed 001 ("Use a built-in") names the built-ins and what each does, and
PASS_THRESHOLD (1.0); it says nothing of how a name it does not list is read:
the ``pass@k`` / ``pass^k`` family for any k, and which spellings of k count,
are pinned by the cases of ``cases/evsys.metric/names.yaml`` alone.

The sums are CPython 3.12's ``sum()``: exact for ints (then a correctly
rounded int/int division, which overflows for huge ints), compensated for
floats.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.reference.cpython_sum import cpython312_sum

PASS_THRESHOLD = 1.0  # seed 001: "when its reward clears PASS_THRESHOLD (1.0, defined in metrics/basic.py)"


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


def _family(name: str) -> tuple[str, int] | None:
    """The kind ("@" or "^") and k of a pass@k or pass^k name, or None.

    k is written in ASCII digits, 1 or more, without a leading zero, and nothing follows it (seed silent;
    names.yaml pass-at-5-family, pass-hat-2-family, pass-at-0-unknown, pass-at-01-unknown,
    pass-at-1-then-arabic-indic-zero, pass-hat-fullwidth-digit, pass-at-trailing-text,
    pass-at-trailing-space, pass-at-trailing-newline, pass-at-1-capitalised-unknown).
    """
    if name[:5] not in ("pass@", "pass^"):
        return None
    digits = name[5:]
    if digits == "" or digits[0] == "0" or any(ch not in "0123456789" for ch in digits):
        return None
    return name[4], int(digits)


def get(name: str) -> Metric:
    if name in BUILTINS:
        return Metric(name, BUILTINS[name])
    family = _family(name) if isinstance(name, str) else None
    if family is None:
        raise KeyError(f"unknown metric name {name!r}")
    kind, k = family
    return Metric(name, pass_at(k) if kind == "@" else pass_all(k))


def compute(request: dict[str, Any]) -> float:
    return get(request["metric"]).compute(request["task_rewards"])


def answer(request: dict[str, Any]) -> float:
    """The reference candidate's answer for evsys.metric."""
    return compute(request)
