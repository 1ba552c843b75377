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

from conformance.strategies.picks import pick, pick_each, sequence_of
from conformance.strategies.weights import pooled, table

TASKS = ["hello-world", "fix-git", "task-1", "task-2", "task-10", "django__django-11099", "ü-task", "a", "",
         "task-3", "task-4", "B"]
AGENTS = ["claude-code", "oracle", "terminus-2", "codex", "nop", "a__b", ""]
MODELS = [None, None, "anthropic/claude-opus-4-1", "openai/gpt-5", "gpt-5", ""]
SOURCES = [None, None, "terminal-bench@2.0", "swebench-verified", "adhoc", ""]

# A trial that is none of the usual binary ones, by kind: no verifier result, no key, several keys (a binary
# value first), a value other than 0 and 1 (or one that equals 0 without being it), one key by another name.
# A fifth each (pooled: one choice for a fixed one, where one_of builds a strategy on every draw).
ODD_VALUES = (0.5, 2, -1, float("nan"), 1.0000000000000002, float("inf"), -0.0)
ODD_FIXED: tuple[tuple[int, tuple[Any, ...]], ...] = (
    (54, (None,)),
    (54, ({},)),
    (18, ({"reward": 1, "extra": 0}, {"reward": 0, "extra": 1}, {"b": 1.0, "a": 0.0})),
    (3, tuple({"reward": value} for value in ODD_VALUES if math.isfinite(value))),
    (6, ({"reward": float("nan")}, {"reward": float("inf")})),  # what pass@k must count as no success
    (27, ({"accuracy": 1}, {"score": 0.0})),
)
odd_reward = pooled(*ODD_FIXED[:5], (27, st.floats().map(lambda v: {"reward": v})), *ODD_FIXED[5:])
# A job of many odd trials (one in four) gives each the odd reward drawn for the job or, as often, one of the
# fixed ones chosen by the job's seed: every kind comes up in such a job, for one draw where a draw a trial made
# generation slow.
ODD_TABLE = table(*ODD_FIXED)

# How many attempts a job makes: a handful, or as often enough for the multiples of five and 16, or one (no
# pass@k). With it, one job in four whose tasks each have their own number of attempts (one pick for both). In
# ascending order, so a shrink goes to the fewest attempts, and to even ones: the simplest job is one trial.
ATTEMPT_WEIGHTS = {1: 5, 2: 7, 3: 7, 4: 7, 5: 7, 6: 7, 8: 5, 10: 5, 12: 5, 16: 5, 20: 5, 25: 5}
UNEVEN = (False, False, False, True)
ATTEMPTS_UNEVEN = [(attempts, uneven) for attempts, weight in ATTEMPT_WEIGHTS.items() for uneven in UNEVEN
                   for _ in range(weight)]
MODES = ("binary", "few", "few", "many")


# What is decided per trial (its success, an int or a float reward, a task's own number of attempts, whether it
# is odd in a job of many odd ones, the trials' order) comes from a seed drawn per group and per job: a job holds
# up to hundreds of trials, and a draw for each made generation slow. Seeds are drawn, so a run stays
# reproducible, and a failing input still shrinks by its groups, tasks and attempts.
SEEDS = range(2**32)
# A group's (agent, model, source), its attempts and unevenness and its seed as one pick (pick_each), and its
# tasks with their success rates (in tenths: hard tasks fail most attempts, easy ones pass most) as one string
# choice: a choice each was most of what a draw cost. A task named twice keeps its first rate.
GROUP_KEYS = [(agent, model, source) for agent in AGENTS for model in MODELS for source in SOURCES]
RATES = (0, 1, 2, 5, 8, 10)
RATED_TASKS = sequence_of([(task, rate) for task in TASKS for rate in RATES], min_size=1, max_size=8)


def _cut_short(outcomes: random.Random, attempts: int) -> int:
    """A task's own number of attempts in an uneven job: one in three times just one (a task tried once has no
    pass@2), else any up to the job's."""
    return 1 if outcomes.randrange(3) == 0 else outcomes.randint(1, attempts)


@st.composite
def trial_sets(draw: st.DrawFn) -> dict:
    trials: list[dict[str, Any]] = []
    groups, mode, seed = pick_each(draw, (1, 2, 3), MODES, SEEDS)
    for _ in range(groups):
        (agent, model, source), (attempts, uneven), group_seed = pick_each(draw, GROUP_KEYS, ATTEMPTS_UNEVEN, SEEDS)
        rates: dict[str, int] = {}
        for task, rate in draw(RATED_TASKS):
            rates.setdefault(task, rate)
        named = {"agent": agent, **({"model": model} if model is not None else {}),
                 **({"source": source} if source is not None else {})}
        outcomes = random.Random(group_seed)
        for task, rate in rates.items():
            for _ in range(_cut_short(outcomes, attempts) if uneven else attempts):
                success = outcomes.randrange(10) < rate
                reward = float(success) if outcomes.randrange(2) else int(success)
                trials.append({"task_name": task, **named, "rewards": {"reward": reward}})
    if mode == "few":  # one or two odd trials: each is alone in deciding what its group becomes
        for _ in range(pick(draw, (1, 2))):
            at = draw(st.integers(0, len(trials) - 1))
            trials[at] = {**trials[at], "rewards": draw(odd_reward)}
    drawn = draw(odd_reward) if mode == "many" else None
    order = random.Random(seed)
    if mode == "many":  # one trial in four
        for at in range(len(trials)):
            if order.randrange(4) == 0:
                odd = drawn if order.randrange(2) else order.choice(ODD_TABLE)
                trials[at] = {**trials[at], "rewards": odd}
    order.shuffle(trials)
    return {"trials": trials}
