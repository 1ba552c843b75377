"""evsys-sdk's built-in metrics: reducers of per-task sample rewards to one float.

evsys-sdk is not on PyPI, so this oracle is a transcription of its documented
metric contract and built-ins (seed 001; evsys_sdk/metrics/basic.py),
standard library only. A metric has a ``name`` and ``compute(task_rewards)``:
one inner sequence per task, holding that task's per-sample rewards. A
sample passes when its reward is at least ``PASS_THRESHOLD``.

evsys-sdk registers ``mean_reward``, ``avg``, ``pass_rate``, ``pass@1``,
``pass@3`` and ``pass^3``; :func:`get_metric` reads any ``pass@<k>`` and
``pass^<k>`` by the same rule, so a plugin named ``pass@5`` has semantics to
be held to. evsys-sdk needs Python 3.12, whose ``sum`` of floats is
compensated; this runs in the oracle's CPython 3.12.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

PASS_THRESHOLD = 1.0
TaskRewards = Sequence[Sequence[float]]
_PASS_K = re.compile(r"pass([@^])([1-9][0-9]*)")


@dataclass(frozen=True)
class Metric:
    name: str
    compute: Callable[[TaskRewards], float]


def _passes(reward: float) -> bool:
    return reward >= PASS_THRESHOLD


def _nonempty(task_rewards: TaskRewards) -> list[Sequence[float]]:
    return [rewards for rewards in task_rewards if rewards]


def mean_reward(task_rewards: TaskRewards) -> float:
    """Macro mean: each task's mean sample reward, averaged over the tasks that have samples."""
    tasks = _nonempty(task_rewards)
    if not tasks:
        return 0.0
    return sum(sum(rewards) / len(rewards) for rewards in tasks) / len(tasks)


def pass_rate(task_rewards: TaskRewards) -> float:
    """Micro pass rate: passing samples over all samples, pooled across tasks."""
    passes = sum(1 for rewards in task_rewards for r in rewards if _passes(r))
    total = sum(len(rewards) for rewards in task_rewards)
    return passes / total if total else 0.0


def solved_fraction(k: int, every: bool) -> Callable[[TaskRewards], float]:
    """pass@k (any of a task's first k samples passes) or pass^k (all of them do), over non-empty tasks."""
    rule = all if every else any

    def compute(task_rewards: TaskRewards) -> float:
        tasks = _nonempty(task_rewards)
        if not tasks:
            return 0.0
        return sum(1 for rewards in tasks if rule(_passes(r) for r in rewards[:k])) / len(tasks)

    return compute


BUILTINS = {m.name: m for m in (
    Metric("mean_reward", mean_reward),
    Metric("avg", mean_reward),
    Metric("pass_rate", pass_rate),
    Metric("pass@1", solved_fraction(1, every=False)),
    Metric("pass@3", solved_fraction(3, every=False)),
    Metric("pass^3", solved_fraction(3, every=True)),
)}


def get_metric(name: str) -> Metric:
    if name in BUILTINS:
        return BUILTINS[name]
    family = _PASS_K.fullmatch(name)
    if family:
        return Metric(name, solved_fraction(int(family[2]), every=family[1] == "^"))
    raise KeyError(f"No metric registered under '{name}'. Available: {', '.join(sorted(BUILTINS))}")


def compute(request: dict[str, Any]) -> float:
    return get_metric(request["metric"]).compute(request["task_rewards"])
