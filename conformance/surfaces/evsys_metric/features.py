"""evsys.metric: the kinds of metric name and task rewards its strategy is meant to reach."""

from __future__ import annotations

import math
import re
from typing import Any

from conformance.core.features import Feature

REGISTERED = re.compile(r"mean_reward|avg|pass_rate|pass[@^][1-9][0-9]*")


def _samples(value: Any) -> list[Any]:
    return [sample for task in value["task_rewards"] for sample in task]


FEATURES = (
    # No task, or a task without samples: a mean of nothing, and whether an empty task counts as failed.
    Feature("empty task", "no task, or a task without samples",
            lambda value: not value["task_rewards"] or any(not task for task in value["task_rewards"]),
            minimum={"ci": 0.082, "dev": 0.07, "explore": 0.17}),
    # Tasks of different lengths: the macro and the micro mean differ, and pass@k looks at the first k only.
    Feature("uneven tasks", "tasks with different numbers of samples",
            lambda value: len({len(task) for task in value["task_rewards"]}) >= 2,
            minimum={"ci": 0.11, "dev": 0.2, "explore": 0.21}),
    # NaN fails every comparison, an infinity passes every threshold.
    Feature("non-finite sample", "a sample is NaN or infinite",
            lambda value: any(isinstance(s, float) and not math.isfinite(s) for s in _samples(value)),
            minimum={"ci": 0.033, "dev": 0.05, "explore": 0.06}),
    # Ints a float cannot hold (or past a float's range): the mean's exact sum, or an OverflowError.
    Feature("int past 2**53", "a sample is an int a float cannot hold exactly",
            lambda value: any(type(s) is int and abs(s) > 2**53 for s in _samples(value)),
            minimum={"ci": 0.025, "dev": 0.03, "explore": 0.07}),
    # A pass@k or pass^k name: k read from the name, the family's windows.
    Feature("pass@k family", "a registered pass@k or pass^k name",
            lambda value: re.fullmatch(r"pass[@^][1-9][0-9]*", value["metric"]) is not None,
            minimum={"ci": 0.047, "dev": 0.08, "explore": 0.09}),
    # A name evsys-sdk does not register (one step from one): its lookup error is the answer.
    Feature("unregistered name", "a metric name evsys-sdk does not register",
            lambda value: REGISTERED.fullmatch(value["metric"]) is None,
            minimum={"ci": 0.06, "dev": 0.05, "explore": 0.1}),
)
