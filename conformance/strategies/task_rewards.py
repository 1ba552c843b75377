"""evsys.metric: per-task sample rewards, as a benchmark's verifiers leave them.

Tasks with uneven sample counts (macro and micro means differ), empty tasks,
rewards at and around the pass threshold 1.0, NaN and inf, ints (some too
large for a float), and the metric names evsys-sdk registers plus other
members of the pass@k / pass^k families.
"""

from __future__ import annotations

from hypothesis import strategies as st

NAMES = ["mean_reward", "avg", "pass_rate", "pass@1", "pass@3", "pass^3", "pass@2", "pass^1", "pass@5", "pass^4"]
NEAR = [0.0, 1.0, 1, 0, 0.5, 0.1, 0.9999999999999999, 1.0000000000000002, 2, -0.0, -1.0,
        float("nan"), float("inf"), float("-inf")]
reward = st.one_of(
    st.sampled_from(NEAR), st.sampled_from([0.0, 1.0]), st.floats(), st.integers(-3, 3), st.integers(),
    st.integers(min_value=2**1030, max_value=2**1040),  # too large for a float
)
binary = st.sampled_from([0.0, 1.0])


@st.composite
def evsys_inputs(draw: st.DrawFn) -> dict:
    samples = binary if draw(st.booleans()) else reward
    tasks = draw(st.lists(st.lists(samples, max_size=draw(st.sampled_from([0, 3, 6]))), max_size=6))
    name = draw(st.one_of(st.sampled_from(NAMES), st.sampled_from(["pass@0", "Pass@1", "mean", "worst_task"])))
    return {"metric": name, "task_rewards": tasks}
