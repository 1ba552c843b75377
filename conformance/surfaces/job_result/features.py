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
)
