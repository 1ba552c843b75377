"""job.result: the kinds of job its strategy is meant to reach."""

from __future__ import annotations

from typing import Any

from conformance.core.features import Feature
from conformance.surfaces.metric_compute.features import BUILTIN_TYPES
from conformance.surfaces.reward_parse.features import any_reward_file, non_finite


# Defaults may be left out (a case file's input): every field but a task's name is read with its default.
def _tasks(value: Any) -> list[dict[str, Any]]:
    return [*value.get("tasks", []),
            *(task for dataset in value.get("datasets", []) for task in dataset.get("tasks", []))]


def _outcomes(value: Any) -> list[dict[str, Any]]:
    return [outcome for task in _tasks(value) for outcome in task.get("trials", [])]


def _metrics(value: Any) -> list[dict[str, Any]]:
    return [*value.get("metrics", []),
            *(m for dataset in value.get("datasets", []) for m in dataset.get("metrics", []))]


# The name a stage's scripted exception is recorded as (a timeout is named after its stage), and those of
# them a retry policy leaves alone when it names none to exclude.
_TIMEOUTS = {"environment": "EnvironmentStartTimeoutError", "agent_setup": "AgentSetupTimeoutError",
             "agent": "AgentTimeoutError", "verifier": "VerifierTimeoutError"}
_EXCLUDED_BY_DEFAULT = {"AgentTimeoutError", "VerifierTimeoutError"}


def _retries_a_raised_exception(value: Any) -> bool:
    """A retry policy with runs to spare, and an outcome raising an exception it retries."""
    retry = value.get("retry") or {}
    if not retry.get("max_retries"):
        return False
    include = retry.get("include_exceptions") or []
    exclude = retry.get("exclude_exceptions")
    excluded = _EXCLUDED_BY_DEFAULT if exclude is None else set(exclude)
    for outcome in _outcomes(value):
        raised = outcome.get("raises")
        if raised in (None, "CancelledError", "interrupt"):
            continue
        name = _TIMEOUTS[outcome.get("raises_in") or "verifier"] if raised == "timeout" else raised
        if name not in excluded and (not include or name in include):
            return True
    return False


def _resume(value: Any) -> dict[str, Any]:
    return value.get("resume") or {}


def _filtered(value: Any) -> list[str]:
    filtered: list[str] = _resume(value).get("filter_error_types", ["CancelledError"])
    return filtered


def _replaced(value: Any) -> list[Any]:
    return [change.get("replace") for change in _resume(value).get("trial_results", [])]


FEATURES = (
    # A retried run: n_retries, which exceptions are retried, and the run whose result counts.
    Feature("retries", "a retry policy with max_retries above 0",
            lambda value: (value.get("retry") or {}).get("max_retries", 0) > 0,
            minimum={"ci": 0.037, "dev": 0.07, "explore": 0.06}),
    # A retry's start takes the earlier run out of the running stats: the snapshots written between the two runs.
    Feature("retry's snapshots", "a raised exception the job's retry policy retries",
            _retries_a_raised_exception,
            minimum={"ci": 0.0026, "dev": 0.02, "explore": 0.03}),
    # A cancelled trial (its stage raises CancelledError, or the job is interrupted): the stats it leaves, and
    # the result.json written when its cancellation is requested.
    Feature("cancelled trial", "a trial raises CancelledError or is interrupted",
            lambda value: any(o.get("raises") in ("CancelledError", "interrupt") for o in _outcomes(value)),
            minimum={"ci": 0.076, "dev": 0.1, "explore": 0.11}),
    # A stage that raises: exception_stats, n_errors, and whether the verifier still ran.
    Feature("raising stage", "a trial's stage raises an exception other than a cancellation",
            lambda value: any(o.get("raises") not in (None, "CancelledError", "interrupt") for o in _outcomes(value)),
            minimum={"ci": 0.135, "dev": 0.2, "explore": 0.19}),
    # result.json writes null for a NaN or infinite reward, and a metric over it differs.
    Feature("non-finite reward", "a trial's reward file holds NaN or an infinity",
            lambda value: any_reward_file(_outcomes(value), non_finite),
            minimum={"ci": 0.052, "dev": 0.08, "explore": 0.08}),
    # Files the agent left before the verifier: which of them the verifier's own overwrite.
    Feature("planted reward files", "reward files are in the verifier folder before it runs",
            lambda value: any(o.get("before_verifier") for o in _outcomes(value)),
            minimum={"ci": 0.042, "dev": 0.09, "explore": 0.09}),
    # Registry datasets: their own metrics and evals keys beside the ad-hoc tasks'.
    Feature("dataset", "the job runs a registry dataset",
            lambda value: bool(value.get("datasets")),
            minimum={"ci": 0.149, "dev": 0.18, "explore": 0.21}),
    # A uv-script metric runs after every trial, on the job's running stats. Some ci seeds draw none: a minimum for
    # long runs only.
    Feature("uv-script metric", "a uv-script metric",
            lambda value: any(m.get("type") == "uv-script" for m in _metrics(value)),
            minimum={"explore": 0.008}),
    # An invalid metric fails the whole job: the exception Job.run raises is the answer. One job in twenty is
    # drawn with one, but some seeds of the ci budget draw none: a minimum for long runs only.
    Feature("invalid metric", "a metric whose type is no built-in nor uv-script, or with kwargs a built-in refuses",
            lambda value: any(m.get("type") not in BUILTIN_TYPES | {"uv-script"} or (
                m.get("type") != "uv-script" and m.get("kwargs")) for m in _metrics(value)),
            minimum={"explore": 0.01}),
    # Two agents: trials interleave, and each agent is its own evals key.
    Feature("several agents", "the job has two agents",
            lambda value: len(value.get("agents", [])) >= 2,
            minimum={"ci": 0.108, "dev": 0.18, "explore": 0.17}),
    # Resumed jobs, by the kind of earlier trial the resume meets.
    Feature("resumed", "the job is stopped part-way and resumed",
            lambda value: _resume(value).get("stop_after") is not None,
            minimum={"ci": 0.017, "dev": 0.017, "explore": 0.06}),
    Feature("resumed finished job", "a job that ran to its end is resumed",
            lambda value: "resume" in value and _resume(value).get("stop_after") is None,
            minimum={"explore": 0.007}),
    # The interrupted trial is cancelled: the default filter removes it and the resume runs it again.
    Feature("resume removes cancelled", "a stopped job resumed with CancelledError filtered",
            lambda value: _resume(value).get("stop_after") is not None and "CancelledError" in _filtered(value),
            minimum={"ci": 0.016, "dev": 0.016, "explore": 0.05}),
    # A cancelled trial kept: the finished job counts it in n_cancelled_trials.
    Feature("resume keeps cancelled", "a stopped job resumed with CancelledError not filtered",
            lambda value: _resume(value).get("stop_after") is not None and "CancelledError" not in _filtered(value),
            minimum={"explore": 0.012}),
    # An errored trial removed by its type, and run again.
    Feature("resume filters an error", "the resume filters an exception type other than CancelledError",
            lambda value: "resume" in value and any(name != "CancelledError" for name in _filtered(value)),
            minimum={"ci": 0.0013, "explore": 0.02}),
    # An errored trial kept by the default filter.
    Feature("resume keeps an error", "a resumed job with a raising stage, the default filter",
            lambda value: "resume" in value and _filtered(value) == ["CancelledError"] and any(
                o.get("raises") not in (None, "CancelledError") for o in _outcomes(value)),
            minimum={"explore": 0.02}),
    # A trial folder left without result.json: the job removes it and runs the trial again.
    Feature("resume without a trial result", "an earlier trial's result.json removed before the resume",
            lambda value: None in _replaced(value),
            minimum={"explore": 0.012}),
    # A trial result.json harbor cannot read: not JSON, or JSON it refuses.
    Feature("resume with an unreadable trial result", "an earlier trial's result.json replaced",
            lambda value: any(data is not None for data in _replaced(value)),
            minimum={"explore": 0.008}),
    # harbor writes a NaN or infinite reward as null and cannot read it back.
    Feature("resume after a non-finite reward", "a resumed job with a NaN or infinite reward file",
            lambda value: "resume" in value and any_reward_file(_outcomes(value), non_finite),
            minimum={"explore": 0.006}),
    # The job's own result.json removed (n_retries starts again, a new id) or unreadable.
    Feature("resume with the job's result altered", "the job's result.json removed or replaced before the resume",
            lambda value: _resume(value).get("job_result") is not None,
            minimum={"explore": 0.014}),
    # Retries before and after the stop: n_retries carried over.
    Feature("resume with retries", "a resumed job with a retry policy",
            lambda value: "resume" in value and (value.get("retry") or {}).get("max_retries", 0) > 0,
            minimum={"explore": 0.017}),
)
