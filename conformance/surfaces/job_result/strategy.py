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
null, the job's result.json removed or not JSON), then resumed. One plain
job in six is a small telling job instead (telling_job): what the others
seldom show, each in a few of hundreds.

A job's outcomes, and a resume's choices, are built from a seed it draws:
a draw for each made generation slow. One outcome in four repeats one the
job made before (two NaN rewards, 1 and 1.0: what its stats keep together
or apart), as Hypothesis's own copying of parts of an input used to.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import struct
from functools import cache
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.labels import composite
from conformance.strategies.picks import pick
from conformance.strategies.weights import weighted
from conformance.surfaces.metric_compute.strategy import shipped_scripts
from conformance.surfaces.reward_parse.strategy import reward_json as any_reward_json
from conformance.surfaces.reward_parse.strategy import reward_txt as any_reward_txt

AGENT_NAMES = ["nop", "oracle", "claude-code", "terminus-2", "my__agent", "codex", ""]
MODELS = [None, None, "openai/gpt-5", "anthropic/claude-opus-4", "gpt-4o", "openai/", "/m", "a/b/c", "x/y__z"]
DATASET_NAMES = ["my__ds", "terminal-bench", "x__adhoc", "swe-bench", "ds", "adhoc", "hello.world"]
TASK_NAMES = ["a", "b", "c", "hello-world", "task_1"]

# -- outcomes ---------------------------------------------------------------------------------------------------
# A job holds tens of outcomes, and a draw for each (and for each of its parts) made generation slow: a task's
# outcomes are built from a seed drawn for it, and only the kinds with values of their own (a verifier's step,
# good or odd) are drawn. The seed is drawn, so a run stays reproducible; a failing input still shrinks by its
# jobs, tasks and numbers of outcomes. The pools below are chosen from evenly: a value listed twice is twice as
# likely.
SEEDS = st.integers(0, 2**32 - 1)
BINARY = [b"0", b"1", b"1.0", b"0\n"]
# Rewards at the ends of the floats: result.json writes null for an infinite or NaN value, and a sum of two
# of the largest overflows to infinity. A reward.txt or a reward.json, alike.
EXTREME = ([{"reward_txt": data} for data in (b"inf", b"-inf", b"1e308", b"nan", b"-1e308")],
           [{"reward_json": data} for data in (b'{"reward": Infinity}', b'{"reward": 1e308, "x": -Infinity}',
                                               b'{"reward": NaN}')])
RAISED = ["timeout", "timeout", "RuntimeError", "NonZeroAgentExitCodeError"]
RAISED_IN = ["agent", "agent", "verifier", "environment", "agent_setup"]
# What the verifier would write, if harbor still runs it.
WRITTEN = [b"1", b"0", None]
# Reward files the agent leaves before the verifier runs, under a verifier outcome of any kind.
UNDER = ["binary", "raising", "none"]
LEFT = ([{"reward_txt": data} for data in (b"1", b"0", b"")],
        [{"reward_json": data} for data in (b'{"reward": 1}', b'{"reward": 0.5}', b"[]")])
STAGES = ["environment", "agent_setup", "agent", "verifier"]
# A trial cancelled: its stage raises CancelledError, or the job is interrupted (Ctrl-C) while it runs.
CANCELS = ["CancelledError", "interrupt"]
# What a retry policy decides on: exceptions it may retry (some after the verifier gave a reward: the
# agent's exit code, retried by default, or its timeout), and errors it leaves alone by default.
RETRYABLE = ["raises", "raises", "scored", "scored", "reward-file"]
RETRYABLE_RAISED = ["RuntimeError", "ValueError", "OSError"]
SCORED_RAISED = ["NonZeroAgentExitCodeError", "NonZeroAgentExitCodeError", "timeout"]
SCORED = [{"reward_txt": b"1"}, {"reward_txt": b"0"}, {"reward_json": b'{"reward": 0, "x": 1}'}]
NO_REWARD = [{}, {"reward_txt": b""}]


# What a verifier leaves, good or odd, as multi_step.reward's steps have it (its good_step and odd files): a value
# from one of three pools alike, written to reward.txt, or a few of them under keys to reward.json.
COMMON_VALUES = [0, 1, 0.0, 1.0, 0.5, 0.25, -0.0, 2]
AWKWARD_VALUES = [0.1, 0.2, 0.3, 1e16, 1e-16, float("nan"), float("inf")]
# Any float but NaN: half the time one at an end of the floats or a boundary (as Hypothesis draws them).
EDGE_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -1.5, 1.1, float("inf"), float("-inf"), 1.7976931348623157e308,
               -1.7976931348623157e308, 5e-324, -5e-324, 2.2250738585072014e-308, 2.0**53, 1e-300, 1e300]
VALUE_KEYS = ["reward", "reward", "x", "accuracy", "b", "a"]
# No reward file, a timeout, a reward.json of null or {}, an empty reward.txt; or any reward file (drawn).
ODD: list[dict[str, Any] | str] = [{}, {"raises": "timeout"}, {"reward_json": b"null"}, {"reward_json": b"{}"},
                                   {"reward_txt": b""}, "txt", "json"]
ODD_FILES = {"txt": any_reward_txt.map(lambda data: {"reward_txt": data}),
             "json": any_reward_json.map(lambda data: {"reward_json": data})}


def _value(rng: random.Random) -> float | int:
    pool = rng.randrange(3)
    if pool != 1:
        return rng.choice(COMMON_VALUES if pool == 0 else AWKWARD_VALUES)
    if rng.randrange(2):
        return rng.choice(EDGE_FLOATS)
    value: float = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
    return 0.0 if math.isnan(value) else value


def built(rng: random.Random, kind: str) -> dict[str, Any]:
    """An outcome of ``kind`` (any of the kinds below but an odd reward file, which is drawn)."""
    if kind == "good":
        if rng.randrange(2):
            return {"reward_txt": repr(float(_value(rng))).encode()}
        rewards = {rng.choice(VALUE_KEYS): _value(rng) for _ in range(rng.randrange(4))}
        return {"reward_json": json.dumps(rewards).encode()}
    if kind == "binary":
        return {"reward_txt": rng.choice(BINARY)}
    if kind == "extreme":
        return rng.choice(EXTREME[rng.randrange(2)])
    if kind == "raising":
        raised, stage, data = rng.choice(RAISED), rng.choice(RAISED_IN), rng.choice(WRITTEN)
        return {"raises": raised, "raises_in": stage, **({"reward_txt": data} if data is not None else {})}
    if kind == "planted":
        under = rng.choice(UNDER)
        return {**(built(rng, under) if under != "none" else {}), "before_verifier": rng.choice(LEFT[rng.randrange(2)])}
    if kind in ("cancelling", "resumed-cancelling"):
        # A resumed job is stopped by resume.stop_after, not by an interrupt: its trials cancel by raising.
        raised = rng.choice(CANCELS)
        return {"raises": raised if kind == "cancelling" else "CancelledError", "raises_in": rng.choice(STAGES),
                "reward_txt": rng.choice([b"1", b"0"])}
    retryable = rng.choice(RETRYABLE) if kind == "retryable" else kind
    if retryable == "raises":
        return {"raises": rng.choice(RETRYABLE_RAISED), "raises_in": rng.choice(STAGES), "reward_txt": b"1"}
    if retryable == "scored":
        return {"raises": rng.choice(SCORED_RAISED), "raises_in": "agent", **rng.choice(SCORED)}
    if retryable == "reward-file":
        return rng.choice(NO_REWARD)
    raise ValueError(f"no outcome kind {kind!r}")


_KINDS = ["binary", "binary", "binary", "extreme", "good", "odd", "raising", "raising", "planted"]
# In forty-five outcomes: two cancelling, the rest by the kinds' weights.
OUTCOME_DRAWS = ["cancelling"] * 2 + (_KINDS * 5)[2:]
# Under a retry policy, a third of them raise something a retry may take, and three cancel (the
# running stats a cancelled job leaves show what its retries took out).
RETRY_OUTCOME_DRAWS = ["cancelling"] * 3 + ["retryable"] * 13 + (_KINDS * 3)[:24]
# A resumed job is stopped by resume.stop_after, not by an outcome: its trials cancel only by raising CancelledError,
# and a non-finite reward (which fails the resume) comes only from the kind of earlier trial drawn for it.
RESUMED_OUTCOME_DRAWS = ["binary", "binary", "binary", "binary", "good", "raising", "raising", "planted",
                         "resumed-cancelling"]


def _from_seed(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    return SEEDS.map(lambda seed: built(random.Random(seed), kind))


binary, cancelling, retryable, scored = (_from_seed(kind) for kind in ("binary", "cancelling", "retryable", "scored"))
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
SOURCES = [None] * 12 + ["adhoc", "", "terminal-bench", "ds", "swe"]
# An invalid metric fails the whole job, and with it whatever else the job would have shown: few jobs have
# one, in one of their metric lists (drawn per list, they masked a third of all jobs).
INVALID_METRICS: st.SearchStrategy[dict[str, Any]] = st.sampled_from(
    [{"type": "median"}, {"type": "max", "kwargs": {"k": 1}}, {}])


def _outcomes(draw: st.DrawFn, rng: random.Random, kinds: list[str], at_least: int, at_most: int,
              made: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``at_least`` to ``at_most`` outcomes of ``kinds``; one in four the same as one the job ``made`` before (two
    NaN rewards, 1 and 1.0, the same error twice: what a job's stats keep together or apart)."""
    n = draw(_counts(at_least, at_most)) if at_most > at_least else at_least
    outcomes = []
    for _ in range(n):
        if made and rng.randrange(4) == 0:
            outcomes.append(rng.choice(made))
            continue
        kind = rng.choice(kinds)
        odd = rng.choice(ODD) if kind == "odd" else None
        outcomes.append(built(rng, kind) if odd is None else draw(ODD_FILES[odd]) if isinstance(odd, str) else odd)
        made.append(outcomes[-1])
    return outcomes


@cache
def _counts(at_least: int, at_most: int) -> st.SearchStrategy[int]:
    return st.integers(at_least, at_most)


@composite
def outcome_lists(draw: st.DrawFn, at_least: int, at_most: int) -> list[dict[str, Any]]:
    return _outcomes(draw, random.Random(draw(SEEDS)), OUTCOME_DRAWS, at_least, at_most, [])


def _lists(items: list[Any], most: int, *, unique: bool = False, least: int = 0) -> tuple[list[Any], ...]:
    """Every list of ``least`` to ``most`` of ``items`` (distinct ones with ``unique``), to pick one of in a single
    draw: each length alike, and within a length each list alike."""
    by_length = [[list(chosen) for chosen in (itertools.permutations(items, size) if unique else
                                              itertools.product(items, repeat=size))]
                 for size in range(least, most + 1)]
    largest = max(len(lists) for lists in by_length)
    return tuple(chosen for lists in by_length for chosen in lists * (largest // len(lists)))


# Lists drawn whole, in one draw each.
TASK_NAME_LISTS = _lists(TASK_NAMES, 3, unique=True)
AGENTS = [{"name": name, **({"model": model} if model is not None else {})} for name in AGENT_NAMES for model in MODELS]
# Those with a name with "__" twice as often: the evals key's last "__" then names another dataset than the one
# the trial ran.
DATASET_NAME_LISTS = (*_lists(DATASET_NAMES, 2, unique=True),
                      *(names for names in _lists(DATASET_NAMES, 2, unique=True) if any("__" in n for n in names)))
# Built-in metrics, in lists whose order shows: the job's metrics follow each dataset's own.
METRIC_LISTS = _lists([{"type": kind} for kind in ("mean", "max", "min", "sum")], 3)


def _tasks(draw: st.DrawFn, rng: random.Random, n_trials: int, kinds: list[str], made: list[dict[str, Any]], *,
           adhoc: bool = False) -> list:
    tasks = [{"name": name, "trials": _outcomes(draw, rng, kinds, 0, n_trials, made)}
             for name in pick(draw, TASK_NAME_LISTS)]
    if adhoc:  # an ad-hoc task's own source: mostly none; else "adhoc", "", or a dataset's name
        for task in tasks:
            source = rng.choice(SOURCES)
            if source is not None:
                task["source"] = source
    return tasks


# Equal rewards harbor's reward_stats keep in one bucket or apart: 1 and 1.0, 0.0 and -0.0, two NaNs.
SAME_REWARDS = [({"reward_txt": b"1"}, {"reward_json": b'{"reward": 1}'}), ({"reward_txt": b"nan"},) * 2,
                ({"reward_txt": b"0"}, {"reward_txt": b"-0.0"}), ({"reward_json": b'{"reward": NaN}'},) * 2]


def telling_job(rng: random.Random) -> dict:
    """A small job of one of six kinds that tell apart what the jobs above seldom show, each in a few of hundreds: a
    finished trial whose result.json is gone on a resume (harbor runs it again, and the run takes the task's next
    outcome, another reward); a finished trial kept on a resume beside an interrupted one run again with another
    reward (the resumed run's running metrics count the kept reward); a finished job whose earlier run retried a
    trial (the resumed job counts its retries on from the earlier result.json's); a trial retried (the retry takes
    the earlier run out of the running stats); two equal rewards (one bucket of reward_stats or two); a trial whose
    rewards are {} (counted all the same)."""
    job: dict[str, Any] = {"agents": [rng.choice(AGENTS)], "n_attempts": 1, "metrics": [], "datasets": []}
    kind = rng.choice(["removed", "kept", "retried-resumed", "retried-resumed", "retried", "same", "empty"])
    trials: list[dict[str, Any]]
    if kind == "removed":
        first, then = rng.sample([b"1", b"0", b"0.5"], 2)
        trials = [{"reward_txt": first}, {"reward_txt": then}]
        job["resume"] = {"trial_results": [{"trial": 0}]}
    elif kind == "kept":  # trial 0 kept; trial 1 interrupted (its outcome spent), then run again with the third
        kept, then = rng.sample([b"1", b"0", b"0.5"], 2)
        trials = [{"reward_txt": kept}, {"reward_txt": rng.choice(BINARY)}, {"reward_txt": then}]
        job.update(n_attempts=2, resume={"stop_after": 1})
    elif kind == "same":
        trials = list(rng.choice(SAME_REWARDS))
        job["n_attempts"] = 2
    elif kind == "empty":  # a verifier result with no rewards still counts as a trial
        trials = [{"reward_json": b"{}"}, {"reward_txt": rng.choice(BINARY)}]
        job["n_attempts"] = 2
    else:
        trials = [{"raises": rng.choice(RETRYABLE_RAISED), "raises_in": "agent", "reward_txt": b"1"},
                  {"reward_txt": rng.choice(BINARY)}]
        job.update(retry={"max_retries": 1}, **({"resume": {}} if kind == "retried-resumed" else {}))
    return {**job, "tasks": [{"name": rng.choice(TASK_NAMES), "trials": trials}]}


@composite
def builtin_jobs(draw: st.DrawFn, adhoc_sources: bool = True, invalid_metric: bool = False,
                 resumed: bool = False, telling: bool = False) -> dict:
    rng = random.Random(draw(SEEDS))  # the job's outcomes and sources
    if telling and rng.randrange(6) == 0:
        # Decided by the seed, not by a draw of its own: Hypothesis varies a job's seed far more freely than the
        # branch it took, and the telling jobs came up a third as often as their share.
        return telling_job(rng)
    made: list[dict[str, Any]] = []  # its outcomes so far
    agents = [AGENTS[at] for at in pick(draw, AGENT_LISTS)]
    n_attempts, with_retry = pick(draw, ATTEMPTS)
    retry = draw(retry_policy) if with_retry else None
    # A task's outcomes are its runs: with retries, up to (1 + max_retries) per trial.
    n_trials = n_attempts * len(agents) * (1 + (retry["max_retries"] if retry else 0))
    kinds = RETRY_OUTCOME_DRAWS if retry else OUTCOME_DRAWS
    if resumed:  # the earlier run and the resumed one both take outcomes
        n_trials, kinds = 2 * n_trials, RESUMED_OUTCOME_DRAWS
    datasets = [{"name": name, "metrics": list(pick(draw, METRIC_LISTS)),
                 "tasks": _tasks(draw, rng, n_trials, kinds, made)} for name in pick(draw, DATASET_NAME_LISTS)]
    job_metrics: list[dict[str, Any]] = list(pick(draw, METRIC_LISTS))
    job = {"agents": agents, "n_attempts": n_attempts, **({"retry": retry} if retry else {}), "metrics": job_metrics,
           "tasks": _tasks(draw, rng, n_trials, kinds, made, adhoc=adhoc_sources),
           "datasets": datasets}
    if invalid_metric:
        invalid = draw(INVALID_METRICS)
        lists: list[Any] = [job_metrics, *(d["metrics"] for d in datasets)]
        into = pick(draw, lists)
        into.insert(draw(_counts(0, len(into))), invalid)
    if not job["tasks"] and not any(d["tasks"] for d in datasets):
        job["tasks"] = [{"name": "a", "trials": _outcomes(draw, rng, kinds, 1, n_trials, made)}]
    return job


# One agent or two (as often, one and two in turn: Hypothesis draws the first indices of a long list most), each
# of AGENTS alike: indices into it.
_ONE, _TWO = (_lists(list(range(len(AGENTS))), n, least=n) for n in (1, 2))
AGENT_LISTS = tuple(agents for pair in zip(_ONE * len(AGENTS), _TWO, strict=True) for agents in pair)
# One to three attempts, and a retry policy one time in four.
ATTEMPTS = tuple((attempts, retry) for retry in (True, False, False, False) for attempts in (1, 2, 3))


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
        st.sampled_from(sorted(shipped)), st.booleans(), outcome_lists(1, 3),
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
    weighted((1, retryable), (1, scored)),
    weighted((1, binary), (1, retryable)),
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
REFUSED = [b'{"task_name": "a"}', b"{}", b"[]", b"null", b'{"reward": 1}']
INVALID_JOB_RESULTS = [b"", b"{", b'{"n_total_trials": 1}']
NON_FINITE = [{"reward_txt": b"nan"}, {"reward_json": b'{"reward": NaN}'}, {"reward_txt": b"inf"}]


_EARLIER_RUNS = builtin_jobs(adhoc_sources=False, resumed=True)


@st.composite
def resumed_jobs(draw: st.DrawFn) -> dict:
    """A job stopped part-way (or finished), earlier trials of each kind made or altered, then resumed."""
    job = draw(_EARLIER_RUNS)
    groups = [job["tasks"], *(d["tasks"] for d in job["datasets"])]
    n_trials = job["n_attempts"] * len(job["agents"]) * sum(len(tasks) for tasks in groups)
    # How the earlier run ended and what became of its files come from a seed: each resumed job its own choices
    # (drawn one by one, a few of them kept coming back together).
    rng = random.Random(draw(SEEDS))
    stop_after = None if rng.choice(STOPS) == "finished" else rng.randrange(n_trials)
    started = n_trials if stop_after is None else stop_after + 1
    resume: dict[str, Any] = {} if stop_after is None else {"stop_after": stop_after}
    filtered = FILTERS[rng.choice(_FILTER_DRAWS)]
    if filtered is not None:
        resume["filter_error_types"] = filtered
    trial_file = rng.choice(TRIAL_FILES)
    if trial_file != "kept":
        data = rng.choice(REFUSED) if trial_file == "refused" else {"removed": None, "invalid-json": b"{"}[trial_file]
        resume["trial_results"] = [{"trial": rng.randrange(started), **({"replace": data} if data is not None else {})}]
    job_file = rng.choice(JOB_FILES)
    if job_file != "kept":
        resume["job_result"] = {"replace": rng.choice(INVALID_JOB_RESULTS)} if job_file == "invalid" else {}
    # The job's first trial takes its first task's first outcome: an error the filter may name, or a reward
    # harbor writes as null.
    first_outcome = rng.choice(FIRST_OUTCOMES)
    if first_outcome != "as-drawn":
        first = next(tasks for tasks in groups if tasks)[0]
        made = ({"raises": "RuntimeError", "raises_in": rng.choice(STAGES)} if first_outcome == "errored"
                else rng.choice(NON_FINITE))
        first["trials"] = [made, *first["trials"]][:max(len(first["trials"]), 1)]
    return {**job, "resume": resume}


# one_of weighs distinct branches alike: a uv-script job one time in twenty, a retried then cancelled one
# one time in twenty, a job with an invalid metric one time in twenty.
builtin_job_inputs = builtin_jobs(telling=True)
invalid_metric_jobs = builtin_jobs(invalid_metric=True)
# Without an ad-hoc task's own source, for what reads the result.json a job leaves: a source no
# dataset has fails the job on its progress line, and the result.json being written then is
# sometimes cut short (the write races the TaskGroup's cancellation), so what is left is not
# one thing. job.result itself only sees the ExceptionGroup, every time.
_WITHOUT_OWN_SOURCES = (builtin_jobs(adhoc_sources=False), builtin_jobs(adhoc_sources=False, invalid_metric=True))
jobs_without_own_sources = weighted((19, _WITHOUT_OWN_SOURCES[0]), (1, _WITHOUT_OWN_SOURCES[1]))
uv_script_jobs = st.deferred(_uv_script_jobs)  # one strategy, built on its first draw
resumed_job_inputs = resumed_jobs()




# Four in twenty resumed.
job_inputs = weighted((13, builtin_job_inputs), (4, resumed_job_inputs), (1, invalid_metric_jobs),
                      (1, retried_then_cancelled), (1, uv_script_jobs))
