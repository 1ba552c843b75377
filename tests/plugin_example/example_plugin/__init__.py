"""A third party's extension of harbor-conformance, installed beside it (see docs/extending.md).

It adds, without touching the suite: a surface for its own evsys metric
``worst_task`` (which has no built-in semantics, so it brings an oracle: the
rule as its documentation states it), a candidate for that surface, a NaN
policy, and evsys metric plugins. Its dist-info lists them in the suite's
entry-point groups and in evsys-sdk's.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, StrictFloat

from conformance.core.compare import nan_policy
from conformance.core.surfaces import surface
from conformance.kit import Candidate


@surface(
    "example.worst_task",
    summary="the evsys metric worst_task: the lowest mean sample reward of a task, empty tasks dropped",
    output="float",
    spec="seed-001 (Create your own: worst_task)",
    strategy="example_plugin:task_rewards",
    oracle="example_plugin:oracle",
)
class WorstTaskInput(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    task_rewards: list[list[StrictFloat]]


task_rewards = st.builds(lambda tasks: {"task_rewards": tasks},
                         st.lists(st.lists(st.floats(allow_nan=False), max_size=4), max_size=4))


def worst_task(task_rewards: list[list[float]]) -> float:
    tasks = [rs for rs in task_rewards if rs]
    if not tasks:
        return 0.0
    return min(sum(rs) / len(rs) for rs in tasks)


# The oracle: the rule exactly as the metric's documentation writes it.
oracle = Candidate("worst-task-as-documented", "1.0")
oracle.surface("example.worst_task")(lambda request: worst_task(request["task_rewards"]))

# The candidate: the team's production implementation.
candidate = Candidate("example-runner", "1.0")
candidate.surface("example.worst_task")(lambda request: worst_task(request["task_rewards"]))

# A candidate with one bug: empty tasks count as 0.0.
sloppy = Candidate("example-runner-sloppy", "1.0")
sloppy.surface("example.worst_task")(
    lambda request: min((sum(rs) / len(rs) if rs else 0.0 for rs in request["task_rewards"]), default=0.0))


@nan_policy("nan-sign")
def same_sign(a: float, b: float) -> bool:
    """A NaN equals a NaN of the same sign, whatever its payload."""
    return math.copysign(1.0, a) == math.copysign(1.0, b)


class PassAt3:
    """An evsys metric plugin: pass@3 as evsys-sdk's contract has it."""

    name = "pass@3"

    def compute(self, task_rewards):
        tasks = [rs for rs in task_rewards if rs]
        return sum(1 for rs in tasks if any(r >= 1.0 for r in rs[:3])) / len(tasks) if tasks else 0.0


class MacroPassRate:
    """A wrong evsys plugin: pass_rate averaged per task instead of pooled over samples."""

    name = "pass_rate"

    def compute(self, task_rewards):
        tasks = [rs for rs in task_rewards if rs]
        return sum(sum(r >= 1.0 for r in rs) / len(rs) for rs in tasks) / len(tasks) if tasks else 0.0


class WorstTask:
    """The seed's own example plugin: it has no built-in semantics to be certified against."""

    name = "worst_task"

    def compute(self, task_rewards):
        return worst_task(task_rewards)
