"""job.result: whole jobs, small enough that each costs the oracle a few hundredths of a second.

A job has one or two agents (names and models as users write them, some
with "__" or an empty model name), one to three attempts, ad-hoc tasks
and up to two registry datasets, metric lists on the job and on each
dataset (built-in types, sometimes an invalid one), and for each trial an
outcome: mostly a binary reward so pass@k has something to count, then
rewards at the ends of the floats (infinite, NaN, overflowing a sum), any
reward, an odd verifier dir (as multi_step.reward draws its steps), a stage
that raises, or reward files the agent leaves before the verifier runs;
some ad-hoc tasks name a source of their own. One outcome in twenty
cancels: its stage raises CancelledError, or the job is interrupted there.
One job in four has a retry policy (which exceptions it retries, up to two
more runs); its tasks list more outcomes, raising ones more often, so that
retries take the next ones. A uv-script metric appears one time in twenty:
it runs after every trial, on both sides. One job in five is resumed:
stopped part-way (or finished), its earlier trials of each kind made or
altered (cancelled and removed or kept, errored and kept or removed by its
type, a result.json removed, not JSON or refused, a NaN reward written as
null, the job's result.json removed or not JSON), then resumed.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.weights import weighted
from conformance.surfaces.metric_compute.strategy import shipped_scripts
from conformance.surfaces.multi_step_reward.strategy import good_step, odd_step

AGENT_NAMES = st.sampled_from(["nop", "oracle", "claude-code", "terminus-2", "my__agent", "codex", ""])
MODELS = st.sampled_from([None, None, "openai/gpt-5", "anthropic/claude-opus-4", "gpt-4o", "openai/", "/m",
                          "a/b/c", "x/y__z"])
# Names with "__" first (Hypothesis draws the first option most): the evals key's last "__" then names
# another dataset than the one the trial ran.
DATASET_NAMES = st.sampled_from(["my__ds", "terminal-bench", "x__adhoc", "swe-bench", "ds", "adhoc", "hello.world"])
TASK_NAMES = st.sampled_from(["a", "b", "c", "hello-world", "task_1"])

binary = st.sampled_from([b"0", b"1", b"1.0", b"0\n"]).map(lambda data: {"reward_txt": data})
# Rewards at the ends of the floats: result.json writes null for an infinite or NaN value, and a sum of two
# of the largest overflows to infinity.
extreme = st.one_of(
    st.sampled_from([b"inf", b"-inf", b"1e308", b"nan", b"-1e308"]).map(lambda data: {"reward_txt": data}),
    st.sampled_from([b'{"reward": Infinity}', b'{"reward": 1e308, "x": -Infinity}', b'{"reward": NaN}'])
    .map(lambda data: {"reward_json": data}),
)
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
STAGES = ["environment", "agent_setup", "agent", "verifier"]
# A trial cancelled: its stage raises CancelledError, or the job is interrupted (Ctrl-C) while it runs.
cancelling = st.builds(lambda raised, stage, data: {"raises": raised, "raises_in": stage, "reward_txt": data},
                       st.sampled_from(["CancelledError", "interrupt"]), st.sampled_from(STAGES),
                       st.sampled_from([b"1", b"0"]))
# What a retry policy decides on: exceptions it may retry (some after the verifier gave a reward: the
# agent's exit code, retried by default, or its timeout), and errors it leaves alone by default.
_RETRYABLE = {
    "raises": st.builds(lambda raised, stage: {"raises": raised, "raises_in": stage, "reward_txt": b"1"},
                        st.sampled_from(["RuntimeError", "ValueError", "OSError"]), st.sampled_from(STAGES)),
    "scored": st.builds(lambda raised, data: {"raises": raised, "raises_in": "agent", **data},
                        st.sampled_from(["NonZeroAgentExitCodeError", "NonZeroAgentExitCodeError", "timeout"]),
                        st.sampled_from([{"reward_txt": b"1"}, {"reward_txt": b"0"},
                                         {"reward_json": b'{"reward": 0, "x": 1}'}])),
    "reward-file": st.sampled_from([{}, {"reward_txt": b""}]),
}
retryable = st.sampled_from(["raises", "raises", "scored", "scored", "reward-file"]).flatmap(_RETRYABLE.__getitem__)
# one_of flattens nested one_ofs and weighs every branch alike: choose the kind explicitly.
OUTCOME_KINDS = {"binary": binary, "extreme": extreme, "good": good_step, "odd": odd_step, "raising": raising,
                 "planted": planted, "cancelling": cancelling, "retryable": retryable}
_KINDS = ["binary", "binary", "binary", "extreme", "good", "odd", "raising", "raising", "planted"]
# In forty-five outcomes: two cancelling, the rest by the kinds' weights.
outcome = st.sampled_from(["cancelling"] * 2 + (_KINDS * 5)[2:]).flatmap(OUTCOME_KINDS.__getitem__)
# Under a retry policy, a third of them raise something a retry may take, and three cancel (the
# running stats a cancelled job leaves show what its retries took out).
retry_outcome = st.sampled_from(["cancelling"] * 3 + ["retryable"] * 13 + (_KINDS * 3)[:24]).flatmap(
    OUTCOME_KINDS.__getitem__)
EXCEPTION_LISTS = st.sampled_from([["RuntimeError"], ["ValueError", "OSError"], ["RewardFileNotFoundError"],
                                   ["RuntimeError", "AgentTimeoutError"], []])
retry_policy = st.builds(
    lambda n, include, exclude: {"max_retries": n, **({"include_exceptions": include} if include is not None else {}),
                                 **({"exclude_exceptions": exclude} if exclude is not None else {})},
    st.sampled_from([1, 1, 2, 0]),
    weighted((1, EXCEPTION_LISTS), (1, st.none())),  # include lists half the time: a raised type in one is retried
    weighted((1, st.none()), (1, EXCEPTION_LISTS)),
)
# An ad-hoc task's own source: mostly none; else "adhoc", "", or a name a dataset of the job may have.
SOURCES = st.sampled_from([None] * 12 + ["adhoc", "", "terminal-bench", "ds", "swe"])

# Built-in metrics, in lists whose order shows: the job's metrics follow each dataset's own.
metric: st.SearchStrategy[dict[str, Any]] = st.sampled_from(["mean", "max", "min", "sum"]).map(lambda t: {"type": t})
metrics = st.lists(metric, max_size=3)
# An invalid metric fails the whole job, and with it whatever else the job would have shown: few jobs have
# one, in one of their metric lists (drawn per list, they masked a third of all jobs).
INVALID_METRICS: st.SearchStrategy[dict[str, Any]] = st.sampled_from(
    [{"type": "median"}, {"type": "max", "kwargs": {"k": 1}}, {}])


# A resumed job is stopped by resume.stop_after, not by an outcome: its trials cancel only by raising CancelledError,
# and a non-finite reward (which fails the resume) comes only from the kind of earlier trial drawn for it.
_RESUMED_KINDS = ["binary", "binary", "binary", "binary", "good", "raising", "raising", "planted", "cancelling"]
# Strategies are built once, here or in a cache: one built in a draw is built and validated again on every draw.
_RESUMED_OUTCOME_KINDS = {**OUTCOME_KINDS, "cancelling": cancelling.map(lambda o: {**o, "raises": "CancelledError"})}
resumed_outcome = st.sampled_from(_RESUMED_KINDS).flatmap(_RESUMED_OUTCOME_KINDS.__getitem__)
# Distinct names drawn first: a unique_by filter would print the (large) outcome strategy on each retry.
TASK_NAME_LISTS = st.lists(TASK_NAMES, max_size=3, unique=True)
AGENT_LISTS = st.lists(st.builds(lambda n, m: {"name": n, **({"model": m} if m is not None else {})},
                                 AGENT_NAMES, MODELS), min_size=1, max_size=2)


@cache
def _outcome_lists(outcomes: st.SearchStrategy, min_size: int, max_size: int) -> st.SearchStrategy[list]:
    return st.lists(outcomes, min_size=min_size, max_size=max_size)


def _tasks(draw: st.DrawFn, n_trials: int, *, adhoc: bool = False, outcomes: st.SearchStrategy = outcome) -> list:
    names = draw(TASK_NAME_LISTS)
    tasks = [{"name": name, "trials": draw(_outcome_lists(outcomes, 0, n_trials))} for name in names]
    for task in tasks if adhoc else []:
        source = draw(SOURCES)
        if source is not None:
            task["source"] = source
    return tasks


@st.composite
def builtin_jobs(draw: st.DrawFn, adhoc_sources: bool = True, invalid_metric: bool = False,
                 resumed: bool = False) -> dict:
    agents = draw(AGENT_LISTS)
    n_attempts = draw(st.integers(1, 3))
    retry = draw(retry_policy) if draw(st.integers(0, 3)) == 0 else None
    # A task's outcomes are its runs: with retries, up to (1 + max_retries) per trial.
    n_trials = n_attempts * len(agents) * (1 + (retry["max_retries"] if retry else 0))
    outcomes = retry_outcome if retry else outcome
    if resumed:  # the earlier run and the resumed one both take outcomes
        n_trials, outcomes = 2 * n_trials, resumed_outcome
    datasets = [{"name": name, "metrics": draw(metrics), "tasks": _tasks(draw, n_trials, outcomes=outcomes)}
                for name in draw(st.lists(DATASET_NAMES, max_size=2, unique=True))]
    job_metrics: list[dict[str, Any]] = draw(metrics)
    job = {"agents": agents, "n_attempts": n_attempts, **({"retry": retry} if retry else {}), "metrics": job_metrics,
           "tasks": _tasks(draw, n_trials, adhoc=adhoc_sources, outcomes=outcomes),
           "datasets": datasets}
    if invalid_metric:
        invalid = draw(INVALID_METRICS)
        lists: list[Any] = [job_metrics, *(d["metrics"] for d in datasets)]
        into = lists[draw(st.integers(0, len(lists) - 1))]
        into.insert(draw(st.integers(0, len(into))), invalid)
    if not job["tasks"] and not any(d["tasks"] for d in datasets):
        job["tasks"] = [{"name": "a", "trials": draw(_outcome_lists(outcomes, 1, n_trials))}]
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


# A run that is retried, then a cancelled trial: the running stats the cancelled job leaves show what
# the retry took out (emptied lists stay). The retried run fails with a reward (the agent's exit code or
# timeout, after which the verifier still runs) or without one.
retried_then_cancelled = st.builds(
    lambda first, then, cancel, exclude, agents: {
        "agents": agents, "retry": {"max_retries": 1, **exclude},
        "tasks": [{"name": "a", "trials": [first, then, *([then] * (len(agents) - 1))]},
                  {"name": "b", "trials": [cancel] * len(agents)}],
    },
    st.one_of(retryable, _RETRYABLE["scored"]),
    st.one_of(binary, retryable),
    cancelling,
    st.sampled_from([{}, {"exclude_exceptions": []}]),
    st.sampled_from([[{"name": "nop"}], [{"name": "a"}, {"name": "b", "model": "p/m"}]]),
)

# What a resume meets, drawn apart so that one resumed job meets several: how the earlier run ended, the
# filter, what becomes of one earlier trial's result.json and of the job's. A file harbor cannot read fails the
# whole resume (a ValidationError): those kinds are drawn less often than the ones the resume goes through.
STOPS = ["stopped"] * 5 + ["finished"]
FILTERS = {"default": None, "none": [], "not-cancelled": ["RuntimeError"],
           "an-error": ["CancelledError", "RuntimeError"], "errors-only": ["AgentTimeoutError", "RuntimeError"],
           "reward-file": ["CancelledError", "RewardFileNotFoundError"]}
# "none" second: Hypothesis draws a pool's first elements most, and an empty filter is the resume command's
# other way (it removes nothing).
_FILTER_DRAWS = ["default", "none", "default", "default", "default", "not-cancelled", "an-error", "an-error",
                 "errors-only", "reward-file"]
TRIAL_FILES = ["kept"] * 7 + ["removed"] * 3 + ["invalid-json", "refused"]
JOB_FILES = ["kept"] * 8 + ["removed", "removed", "invalid"]
FIRST_OUTCOMES = ["as-drawn"] * 7 + ["errored", "errored", "nan-as-null", "nan-as-null"]
REFUSED = st.sampled_from([b'{"task_name": "a"}', b"{}", b"[]", b"null", b'{"reward": 1}'])
INVALID_JOB_RESULTS = st.sampled_from([b"", b"{", b'{"n_total_trials": 1}'])


@st.composite
def resumed_jobs(draw: st.DrawFn) -> dict:
    """A job stopped part-way (or finished), earlier trials of each kind made or altered, then resumed."""
    job = draw(builtin_jobs(adhoc_sources=False, resumed=True))
    groups = [job["tasks"], *(d["tasks"] for d in job["datasets"])]
    n_trials = job["n_attempts"] * len(job["agents"]) * sum(len(tasks) for tasks in groups)
    stop_after = None if draw(st.sampled_from(STOPS)) == "finished" else draw(st.integers(0, n_trials - 1))
    started = n_trials if stop_after is None else stop_after + 1
    resume: dict[str, Any] = {} if stop_after is None else {"stop_after": stop_after}
    filtered = FILTERS[draw(st.sampled_from(_FILTER_DRAWS))]
    if filtered is not None:
        resume["filter_error_types"] = filtered
    trial_file = draw(st.sampled_from(TRIAL_FILES))
    if trial_file != "kept":
        data = {"removed": None, "invalid-json": b"{"}.get(trial_file) if trial_file != "refused" else draw(REFUSED)
        resume["trial_results"] = [{"trial": draw(st.integers(0, started - 1)),
                                    **({"replace": data} if data is not None else {})}]
    job_file = draw(st.sampled_from(JOB_FILES))
    if job_file != "kept":
        resume["job_result"] = {"replace": draw(INVALID_JOB_RESULTS)} if job_file == "invalid" else {}
    # The job's first trial takes its first task's first outcome: an error the filter may name, or a reward
    # harbor writes as null.
    first_outcome = draw(st.sampled_from(FIRST_OUTCOMES))
    if first_outcome != "as-drawn":
        first = next(tasks for tasks in groups if tasks)[0]
        made = ({"raises": "RuntimeError", "raises_in": draw(st.sampled_from(STAGES))} if first_outcome == "errored"
                else draw(st.sampled_from([{"reward_txt": b"nan"}, {"reward_json": b'{"reward": NaN}'},
                                           {"reward_txt": b"inf"}])))
        first["trials"] = [made, *first["trials"]][:max(len(first["trials"]), 1)]
    return {**job, "resume": resume}


# one_of weighs distinct branches alike: a uv-script job one time in twenty, a retried then cancelled one
# one time in twenty, a job with an invalid metric one time in twenty.
builtin_job_inputs = builtin_jobs()
invalid_metric_jobs = builtin_jobs(invalid_metric=True)
# Without an ad-hoc task's own source, for what reads the result.json a job leaves: a source no
# dataset has fails the job on its progress line, and the result.json being written then is
# sometimes cut short (the write races the TaskGroup's cancellation), so what is left is not
# one thing. job.result itself only sees the ExceptionGroup, every time.
_WITHOUT_OWN_SOURCES = (builtin_jobs(adhoc_sources=False), builtin_jobs(adhoc_sources=False, invalid_metric=True))
jobs_without_own_sources = st.sampled_from(range(20)).flatmap(lambda i: _WITHOUT_OWN_SOURCES[i == 19])
uv_script_jobs = st.deferred(_uv_script_jobs)  # one strategy, built on its first draw
resumed_job_inputs = resumed_jobs()
# Four in twenty resumed.
job_inputs = st.sampled_from(range(20)).flatmap(
    lambda i: {19: uv_script_jobs, 18: retried_then_cancelled, 17: invalid_metric_jobs,
               16: resumed_job_inputs, 15: resumed_job_inputs, 14: resumed_job_inputs,
               13: resumed_job_inputs}.get(i, builtin_job_inputs))
