"""job.result: whole jobs, small enough that each costs the oracle a few hundredths of a second.

A job has one or two agents (names and models as users write them, some
with "__" or an empty model name), one to three attempts, ad-hoc tasks
and up to two registry datasets, metric lists on the job and on each
dataset (built-in types, sometimes an invalid one), and for each trial an
outcome: mostly a binary reward so pass@k has something to count, then
any reward, an odd verifier dir (as multi_step.reward draws its steps), a
stage that raises, or reward files the agent leaves before the verifier
runs; some ad-hoc tasks name a source of their own. A uv-script metric appears one time in twenty: it
runs after every trial, on both sides.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from conformance.strategies.reward_lists import shipped_scripts
from conformance.strategies.steps import good_step, odd_step

AGENT_NAMES = st.sampled_from(["nop", "oracle", "claude-code", "terminus-2", "my__agent", "codex", ""])
MODELS = st.sampled_from([None, None, "openai/gpt-5", "anthropic/claude-opus-4", "gpt-4o", "openai/", "/m",
                          "a/b/c", "x/y__z"])
DATASET_NAMES = st.sampled_from(["terminal-bench", "swe-bench", "ds", "my__ds", "x__adhoc", "adhoc", "hello.world"])
TASK_NAMES = st.sampled_from(["a", "b", "c", "hello-world", "task_1"])

binary = st.sampled_from([b"0", b"1", b"1.0", b"0\n"]).map(lambda data: {"reward_txt": data})
raising = st.builds(
    lambda raised, stage, data: {"raises": raised, "raises_in": stage,
                                 **({"reward_txt": data} if data is not None else {})},
    st.sampled_from(["timeout", "timeout", "RuntimeError", "NonZeroAgentExitCodeError"]),
    st.sampled_from(["agent", "agent", "verifier", "environment", "agent_setup"]),
    st.sampled_from([b"1", b"0", None]),  # what the verifier would write, if harbor still runs it
)
# Reward files the agent leaves before the verifier runs, under a verifier outcome of any kind.
planted = st.builds(
    lambda under, left: {**under, "before_verifier": left},
    st.one_of(binary, raising, st.just({})),
    st.one_of(st.sampled_from([b"1", b"0", b""]).map(lambda data: {"reward_txt": data}),
              st.sampled_from([b'{"reward": 1}', b'{"reward": 0.5}', b"[]"]).map(lambda data: {"reward_json": data})),
)
# one_of flattens nested one_ofs and weighs every branch alike: choose the kind explicitly.
OUTCOME_KINDS = {"binary": binary, "good": good_step, "odd": odd_step, "raising": raising, "planted": planted}
outcome = st.sampled_from(["binary", "binary", "binary", "good", "odd", "raising", "raising", "planted"]).flatmap(
    OUTCOME_KINDS.__getitem__)
# An ad-hoc task's own source: mostly none; else "adhoc", "", or a name a dataset of the job may have.
SOURCES = st.sampled_from([None] * 12 + ["adhoc", "", "terminal-bench", "ds", "swe"])

metric: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.sampled_from(["mean", "max", "min", "sum"]).map(lambda t: {"type": t}),
    st.sampled_from([{"type": "median"}, {"type": "max", "kwargs": {"k": 1}}, {}]),
)
metrics = st.lists(metric, max_size=3).filter(lambda ms: sum(m.get("type") not in ("mean", "max", "min", "sum")
                                                              for m in ms) <= 1)


def _tasks(draw: st.DrawFn, n_trials: int, *, adhoc: bool = False) -> list:
    # Distinct names drawn first: a unique_by filter would print the (large) outcome strategy on each retry.
    names = draw(st.lists(TASK_NAMES, max_size=3, unique=True))
    tasks = [{"name": name, "trials": draw(st.lists(outcome, max_size=n_trials))} for name in names]
    for task in tasks if adhoc else []:
        source = draw(SOURCES)
        if source is not None:
            task["source"] = source
    return tasks


@st.composite
def builtin_jobs(draw: st.DrawFn, adhoc_sources: bool = True) -> dict:
    agents = draw(st.lists(st.builds(lambda n, m: {"name": n, **({"model": m} if m is not None else {})},
                                     AGENT_NAMES, MODELS), min_size=1, max_size=2))
    n_attempts = draw(st.integers(1, 3))
    n_trials = n_attempts * len(agents)
    datasets = [{"name": name, "metrics": draw(metrics), "tasks": _tasks(draw, n_trials)}
                for name in draw(st.lists(DATASET_NAMES, max_size=2, unique=True))]
    job = {"agents": agents, "n_attempts": n_attempts, "metrics": draw(metrics),
           "tasks": _tasks(draw, n_trials, adhoc=adhoc_sources),
           "datasets": datasets}
    if not job["tasks"] and not any(d["tasks"] for d in datasets):
        job["tasks"] = [{"name": "a", "trials": draw(st.lists(outcome, min_size=1, max_size=n_trials))}]
    return job


def _uv_script_jobs() -> st.SearchStrategy[dict]:
    shipped = shipped_scripts()
    if not shipped:
        return st.nothing()
    return st.builds(
        lambda name, first, outcomes: {
            "agents": [{"name": "nop"}],
            "metrics": [{"type": "mean"}, {"type": "uv-script", "kwargs": {"script_path": name}}][::1 if first else -1],
            "tasks": [{"name": f"t{i}", "trials": [o]} for i, o in enumerate(outcomes)],
            "scripts": {name: shipped[name]},
        },
        st.sampled_from(sorted(shipped)), st.booleans(), st.lists(outcome, min_size=1, max_size=3),
    )


# one_of weighs distinct branches alike: a uv-script job one time in twenty.
builtin_job_inputs = builtin_jobs()
# Without an ad-hoc task's own source, for what reads the result.json a job leaves: a source no
# dataset has fails the job on its progress line, and the result.json being written then is
# sometimes cut short (the write races the TaskGroup's cancellation), so what is left is not
# one thing. job.result itself only sees the ExceptionGroup, every time.
jobs_without_own_sources = builtin_jobs(adhoc_sources=False)
uv_script_jobs = st.deferred(_uv_script_jobs)  # one strategy, built on its first draw
job_inputs = st.sampled_from(range(20)).flatmap(lambda i: uv_script_jobs if i == 19 else builtin_job_inputs)
