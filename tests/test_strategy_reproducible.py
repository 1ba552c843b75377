"""A strategy's draws are a function of Hypothesis's choices alone: pass_at_k builds its trials from seeds it
draws, reason.normalize its phrases, evsys.metric its tasks' samples, job.result its outcomes, multi_step.reward
its good steps and telling trials, and the others build their strategies once; a seeded run draws the same
inputs again."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from conformance.core import surfaces


def _drawn(name: str) -> list[str]:
    drawn: list[str] = []

    @seed(0)
    @settings(max_examples=40, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(surfaces.get(name).inputs())
    def draw(value: Any) -> None:
        drawn.append(repr(value))

    draw()
    return drawn


@pytest.mark.parametrize("name", ["pass_at_k", "outcome.summary", "job.result", "multi_step.reward",
                                  "reward.parse", "reason.normalize", "evsys.metric", "result.load", "metric.compute"])
def test_a_seeded_run_draws_the_same_inputs_again(name):
    first = _drawn(name)
    assert len(first) == 40 and len(set(first)) > 1
    assert _drawn(name) == first

