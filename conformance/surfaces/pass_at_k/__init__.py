"""pass_at_k: pass@k per evals key from the trials of a job (seed-003 §4)."""

from __future__ import annotations

from pydantic import StrictFloat, StrictInt, StrictStr

from conformance.core.inputs import RewardDict, StrictInput
from conformance.core.surfaces import Bench, surface


class Trial(StrictInput):
    task_name: StrictStr
    agent: StrictStr
    model: StrictStr | None = None
    source: StrictStr | None = None
    rewards: RewardDict | None


@surface(
    "pass_at_k",
    cache_note="a pure function of the trials",
    summary="pass@k per evals key from a list of trials",
    output="dict[evals_key, dict[int k, float]]",
    spec="seed-003 §4",
    strategy=".strategy:trial_sets",
    output_model=dict[StrictStr, dict[StrictInt, StrictFloat]],
    # draws ÷ yardstick, ci examples/s and campaign inputs/s: twice what they were before the strategies were
    # made leaner, at commit 3bc0f84 (0.59 of the yardstick by the bench's measure of four seeds; 60 ci
    # examples/s; a campaign worker 97 inputs/s, the mean of two of the bench's measures over 12 s).
    bench=Bench(generated=True, targets={
        "draws ÷ yardstick": 1.18, "ci examples/s": 120, "campaign inputs/s": 194,
        "exec inputs/s": 10_000, "wire / plain JSON": 2.0}),
)
class PassAtKInput(StrictInput):
    """Trials in the order the job finished them."""

    trials: list[Trial]
