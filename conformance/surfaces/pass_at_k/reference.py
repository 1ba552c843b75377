"""pass_at_k: harbor's unbiased pass@k estimator over trials grouped by evals key."""

from __future__ import annotations

from typing import Any

from conformance.reference.cpython_sum import cpython312_sum


def evals_key(agent: str, model: str | None, dataset: str) -> str:
    return f"{agent}__{model}__{dataset}" if model else f"{agent}__{dataset}"


def eligible_k_values(max_k: int) -> list[int]:
    powers = set()
    k = 2
    while k <= max_k:
        powers.add(k)
        k *= 2
    fives = set(range(5, max_k + 1, 5))
    return sorted(powers | fives)


def pass_at_k_for_task(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(k):
        product *= (n - c - i) / (n - i)
    return 1.0 - product


def _group(trials: list[dict[str, Any]]) -> dict[int, float]:
    successes: dict[str, list[int]] = {}
    for trial in trials:
        rewards = trial.get("rewards")
        if rewards is None:
            successes.setdefault(trial["task_name"], []).append(0)
            continue
        if len(rewards) != 1:
            return {}
        (value,) = rewards.values()
        if not isinstance(value, (int, float)) or value not in (0, 1):
            return {}
        successes.setdefault(trial["task_name"], []).append(int(value))
    if not successes:
        return {}
    ks = eligible_k_values(min(len(s) for s in successes.values()))
    return {
        k: cpython312_sum(pass_at_k_for_task(len(s), sum(s), k) for s in successes.values())
        / len(successes)
        for k in ks
    }


def compute(request: dict[str, Any]) -> dict[str, dict[int, float]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for trial in request["trials"]:
        key = evals_key(trial.get("agent", "agent"), trial.get("model"), trial.get("source") or "adhoc")
        groups.setdefault(key, []).append(trial)
    return {key: result for key, trials in groups.items() if (result := _group(trials))}


def answer(request: dict[str, Any]) -> dict[str, dict[int, float]]:
    """The reference candidate's answer for pass_at_k."""
    return compute(request)
