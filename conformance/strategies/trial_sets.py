"""pass_at_k: the trials of a job, as the job finished them.

Names are the kind users write (dataset refs with versions, model ids with
slashes, empty strings); each (agent, model, source) group has its own tasks
with an uneven number of attempts each; rewards are mostly binary.
"""

from __future__ import annotations

from hypothesis import strategies as st

TASKS = ["hello-world", "fix-git", "task-1", "task-2", "task-10", "django__django-11099", "ü-task", "a", ""]
AGENTS = ["claude-code", "oracle", "terminus-2", "codex", "nop", "a__b", ""]
MODELS = [None, None, "anthropic/claude-opus-4-1", "openai/gpt-5", "gpt-5", ""]
SOURCES = [None, None, "terminal-bench@2.0", "swebench-verified", "adhoc", ""]

binary_reward = st.sampled_from([{"reward": 1}, {"reward": 0}, {"reward": 1.0}, {"reward": 0.0}])
odd_reward = st.one_of(
    st.none(),
    st.just({}),
    st.sampled_from([{"reward": -0.0}, {"reward": 0.5}, {"reward": 2}, {"reward": -1}, {"reward": float("nan")},
                     {"reward": 1, "extra": 0}, {"accuracy": 1}, {"reward": 1.0000000000000002}]),
    st.floats().map(lambda v: {"reward": v}),
)


@st.composite
def trial_sets(draw: st.DrawFn) -> dict:
    trials = []
    odd_chance = draw(st.sampled_from([0, 0, 0.05, 0.3]))  # most jobs are all binary
    for _ in range(draw(st.integers(1, 3))):
        agent = draw(st.sampled_from(AGENTS))
        model = draw(st.sampled_from(MODELS))
        source = draw(st.sampled_from(SOURCES))
        tasks = draw(st.lists(st.sampled_from(TASKS), min_size=1, max_size=5, unique=True))
        for task in tasks:
            for _ in range(draw(st.integers(1, draw(st.sampled_from([3, 6, 12, 25]))))):
                odd = draw(st.floats(0, 1)) < odd_chance
                trial = {"task_name": task, "agent": agent, "rewards": draw(odd_reward if odd else binary_reward)}
                if model is not None:
                    trial["model"] = model
                if source is not None:
                    trial["source"] = source
                trials.append(trial)
    return {"trials": draw(st.permutations(trials))}
