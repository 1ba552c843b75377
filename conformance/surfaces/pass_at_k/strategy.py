"""pass_at_k: the trials of a job, as the job finished them.

Names are the kind users write (dataset refs with versions, model ids with
slashes, empty strings); each (agent, model, source) group has its own tasks,
mostly with the same number of attempts each (as a job runs them), sometimes
uneven (a task cut short), and each task its own success rate (hard tasks
fail most attempts, easy ones pass most). Rewards are binary, ints or floats,
in a quarter of the jobs; half have one or two odd trials besides (each alone
decides what its group becomes), a quarter many.
"""

from __future__ import annotations

import math
import random
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.picks import pick
from conformance.strategies.weights import pooled

TASKS = ["hello-world", "fix-git", "task-1", "task-2", "task-10", "django__django-11099", "ü-task", "a", "",
         "task-3", "task-4", "B"]
AGENTS = ["claude-code", "oracle", "terminus-2", "codex", "nop", "a__b", ""]
MODELS = [None, None, "anthropic/claude-opus-4-1", "openai/gpt-5", "gpt-5", ""]
SOURCES = [None, None, "terminal-bench@2.0", "swebench-verified", "adhoc", ""]

# A trial that is none of the usual binary ones, by kind: no verifier result, no key, several keys (a binary
# value first), a value other than 0 and 1 (or one that equals 0 without being it), one key by another name.
# A fifth each (pooled: one choice for a fixed one, where one_of builds a strategy on every draw, and a job of
# many odd trials draws one for a trial in four).
ODD_VALUES = (0.5, 2, -1, float("nan"), 1.0000000000000002, float("inf"), -0.0)
odd_reward = pooled(
    (54, (None,)),
    (54, ({},)),
    (18, ({"reward": 1, "extra": 0}, {"reward": 0, "extra": 1}, {"b": 1.0, "a": 0.0})),
    (3, tuple({"reward": value} for value in ODD_VALUES if math.isfinite(value))),
    (6, ({"reward": float("nan")}, {"reward": float("inf")})),  # what pass@k must count as no success
    (27, st.floats().map(lambda v: {"reward": v})),
    (27, ({"accuracy": 1}, {"score": 0.0})),
)
# How many attempts a job makes: a handful, or enough for the multiples of five and 16; rarely one (no pass@k).
ATTEMPTS = pooled((7, st.integers(2, 6)), (1, (1, 8, 10, 12, 16, 20, 25)))
MODES = ("binary", "few", "few", "many")


# What is decided per trial (its success, an int or a float reward, whether it is odd in a job of many odd ones,
# the trials' order) comes from a seed drawn per group and per job: a job holds up to hundreds of trials, and a
# draw for each made generation slow. Seeds are drawn, so a run stays reproducible, and a failing input still
# shrinks by its groups, tasks and attempts.
SEEDS = st.integers(0, 2**32 - 1)
TASK_LISTS = st.lists(st.sampled_from(TASKS), min_size=1, max_size=8, unique=True)
RATES = st.sampled_from([0, 1, 2, 5, 8, 10])
GROUP_KEYS = st.tuples(st.sampled_from(AGENTS), st.sampled_from(MODELS), st.sampled_from(SOURCES))


@st.composite
def trial_sets(draw: st.DrawFn) -> dict:
    trials: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        agent, model, source = draw(GROUP_KEYS)
        tasks = draw(TASK_LISTS)
        attempts = draw(ATTEMPTS)
        uneven = draw(st.integers(0, 3)) == 0  # one job in four: each task its own number of attempts
        named = {"agent": agent, **({"model": model} if model is not None else {}),
                 **({"source": source} if source is not None else {})}
        outcomes = random.Random(draw(SEEDS))
        for task in tasks:
            # Tasks are hard or easy: a success rate of its own, in tenths.
            rate = draw(RATES)
            for _ in range(draw(st.integers(1, attempts)) if uneven else attempts):
                success = outcomes.randrange(10) < rate
                reward = float(success) if outcomes.randrange(2) else int(success)
                trials.append({"task_name": task, **named, "rewards": {"reward": reward}})
    mode = pick(draw, MODES)
    if mode == "few":  # one or two odd trials: each is alone in deciding what its group becomes
        for _ in range(draw(st.integers(1, 2))):
            at = draw(st.integers(0, len(trials) - 1))
            trials[at] = {**trials[at], "rewards": draw(odd_reward)}
    order = random.Random(draw(SEEDS))
    if mode == "many":  # one trial in four
        for at in range(len(trials)):
            if order.randrange(4) == 0:
                trials[at] = {**trials[at], "rewards": draw(odd_reward)}
    order.shuffle(trials)
    return {"trials": trials}
