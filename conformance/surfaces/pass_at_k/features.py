"""pass_at_k: the kinds of trial set its strategy is meant to reach."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from conformance.core.features import Feature


def _groups(value: Any) -> Counter[tuple[Any, ...]]:
    """Trials per (agent, model, source, task)."""
    return Counter((t["agent"], t.get("model"), t.get("source"), t["task_name"]) for t in value["trials"])


def _uneven(value: Any) -> bool:
    """A group whose tasks have different numbers of trials (a task cut short)."""
    counts: dict[tuple[Any, ...], set[int]] = {}
    for (agent, model, source, _), count in _groups(value).items():
        counts.setdefault((agent, model, source), set()).add(count)
    return any(len(seen) > 1 for seen in counts.values())


def _rewards(value: Any) -> list[Any]:
    return [trial["rewards"] for trial in value["trials"]]


def _values(value: Any) -> list[Any]:
    return [v for rewards in _rewards(value) if rewards for v in rewards.values()]


FEATURES = (
    # A task tried once has no pass@2: a group whose tasks all are has no pass@k at all.
    Feature("single-attempt task", "a task with one trial in its group",
            lambda value: 1 in _groups(value).values(),
            minimum={"ci": 0.113, "dev": 0.18, "explore": 0.17}),
    # Tasks with different numbers of attempts: k goes up to the smallest, or to each task's own.
    Feature("uneven attempts", "a group's tasks have different numbers of trials",
            lambda value: _uneven(value),
            minimum={"ci": 0.047, "dev": 0.13, "explore": 0.09}),
    # Several (agent, model, source) groups: each is its own evals key.
    Feature("several groups", "trials of two agents, models or sources or more",
            lambda value: len({key[:3] for key in _groups(value)}) >= 2,
            minimum={"ci": 0.18, "dev": 0.28, "explore": 0.25}),
    # A trial without a verifier result: what it counts as (a failure, or nothing) decides its group.
    Feature("no verifier result", "a trial's rewards are null",
            lambda value: any(rewards is None for rewards in _rewards(value)),
            minimum={"ci": 0.037, "dev": 0.07, "explore": 0.1}),
    # Several keys: pass@k reads one reward, or the group is left out.
    Feature("multi-key rewards", "a trial's rewards have two keys or more",
            lambda value: any(rewards and len(rewards) >= 2 for rewards in _rewards(value)),
            minimum={"ci": 0.033, "dev": 0.05, "explore": 0.06}),
    # A reward that is neither 0 nor 1 (0.5, NaN, inf): a pass is `== 1`, or `> 0`, or refused.
    Feature("non-binary reward", "a reward other than 0 and 1",
            lambda value: any(not (isinstance(v, int | float) and v in (0, 1)) for v in _values(value)),
            minimum={"ci": 0.037, "dev": 0.08, "explore": 0.1}),
    # NaN compares unequal to everything; an infinity is no pass either.
    Feature("non-finite reward", "a reward is NaN or infinite",
            lambda value: any(isinstance(v, float) and not math.isfinite(v) for v in _values(value)),
            minimum={"ci": 0.005, "dev": 0.01, "explore": 0.02}),
)
