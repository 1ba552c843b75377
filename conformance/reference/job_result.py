"""job.result: a whole job's result.json scoring part, as harbor 0.13.1 writes it.

What harbor does, written from its observed behaviour:

* Trials run in the order attempt, then task (the ad-hoc tasks, then each
  dataset's), then agent. A task's n-th trial gets its n-th outcome.
* A trial: a timeout is renamed by the stage it happens in; the environment
  and agent-setup stages end the trial; the agent stage records a timeout or
  ``NonZeroAgentExitCodeError`` and still runs the verifier (anything else
  ends the trial); the verifier parses the reward files as reward.parse does.
  Only a trial's first exception is kept.
* Evals key: agent, the model's name after its first "/" (none when empty),
  the dataset's name, or for an ad-hoc task its own source, else "adhoc".
* Reward files the agent leaves in the verifier folder stay there: the
  verifier's test script writes its own over them, and reward.json is read
  before reward.txt, so a reward.json the agent planted beats the verifier's
  reward.txt.
* Metrics per dataset name: the dataset's registry metrics, then the job's;
  "adhoc" has the job's; any list left empty gets ``mean``; a source that
  names no dataset has none (harbor's table is a defaultdict), so its
  progress line fails on the missing first metric. After every
  trial the trial's evals key recomputes all its dataset's metrics, and the
  progress line formats the first one's first value with ``.3f``: a failure
  there ends the job with an ``ExceptionGroup``. At the end, each evals key's
  metrics are those of the name after its *last* "__", and none when that
  names no dataset.
* ``reward_stats`` buckets trial names by reward value in a dict, so equal
  values share a bucket (1 and 1.0, 0.0 and -0.0, the first one seen names
  it) and NaNs never do; keys are ``str(value)``. NaN and inf values are
  written as null.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, overload

from conformance.kit.candidate import distinct_keys
from conformance.reference import pass_at_k, reward_files
from conformance.reference.metrics import metric_from_config, validate_config

TIMEOUTS = {
    "environment": "EnvironmentStartTimeoutError",
    "agent_setup": "AgentSetupTimeoutError",
    "agent": "AgentTimeoutError",
    "verifier": "VerifierTimeoutError",
}
# What the agent stage records before the verifier runs anyway.
RECORDED_BY_AGENT = ("timeout", "NonZeroAgentExitCodeError")
ENDS_IN_TASK_GROUP = "unhandled errors in a TaskGroup"

# A constructed metric: the trials' rewards (a dict or None each) -> its values.
MetricFn = Callable[[list[Any]], Any]


def run_trial(outcome: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """One trial's (verifier_result, exception_type)."""
    raised, stage = outcome.get("raises"), outcome.get("raises_in") or "verifier"
    recorded = None
    if raised is not None:
        name = TIMEOUTS[stage] if raised == "timeout" else raised
        if stage != "agent" or raised not in RECORDED_BY_AGENT:
            return None, name
        recorded = name
    # The verifier's test script writes its files over any the agent left; the others stay.
    files = dict(outcome.get("before_verifier") or {})
    files.update({key: outcome[key] for key in ("reward_txt", "reward_json") if outcome.get(key) is not None})
    try:
        rewards = reward_files.parse(files)
    except Exception as error:  # the verifier failed: no result; the first exception stays
        return None, recorded or type(error).__name__
    return {"rewards": rewards}, recorded


def model_name(model: str | None) -> str | None:
    if model is None:
        return None
    return (model.split("/", 1)[1] if "/" in model else model) or None


def plan(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every trial of the job in order, with its outcome."""
    groups = [(None, request.get("tasks") or [])]  # an ad-hoc task's source is its own
    groups += [(d["name"], d.get("tasks") or []) for d in request.get("datasets") or []]
    agents = request["agents"]
    seen: dict[tuple[int, int], int] = {}
    trials: list[dict[str, Any]] = []
    for _ in range(request.get("n_attempts", 1)):
        for g, (source, tasks) in enumerate(groups):
            for t, task in enumerate(tasks):
                for agent in agents:
                    n = seen[g, t] = seen.get((g, t), -1) + 1
                    outcomes = task.get("trials") or []
                    trials.append({
                        "trial": f"trial-{len(trials)}", "task_name": task["name"],
                        "source": source if g else task.get("source"),
                        "agent": agent["name"], "model": model_name(agent.get("model")),
                        "outcome": outcomes[n] if n < len(outcomes) else {},
                    })
    return trials


def resolve_metrics(request: dict[str, Any]) -> dict[str, list[MetricFn]]:
    job = [metric_from_config(m) for m in request.get("metrics") or []]
    table: dict[str, list[MetricFn]] = {"adhoc": list(job)}
    for dataset in request.get("datasets") or []:
        own = [metric_from_config(m) for m in dataset.get("metrics") or []]
        table.setdefault(dataset["name"], []).extend(own + job)
    for metrics in table.values():
        if not metrics:
            metrics.append(metric_from_config({"type": "mean"}))
    return table


def final_metrics_name(evals_key: str, dataset: str) -> str:
    """Whose metrics an evals key gets in result.json: the name after the key's last "__"."""
    return evals_key.split("__")[-1]


def _progress_line(metric: MetricFn, rewards: list[Any]) -> str:
    name, value = next(iter(metric(rewards).items()))
    return f"{name.title()}: {value:.3f}"


# A result.json document stays an object, its keys as strings.
@overload
def _json(value: dict[Any, Any]) -> dict[str, Any]: ...
@overload
def _json(value: object) -> Any: ...


def _json(value: Any) -> Any:
    """As harbor's result.json has it: NaN and inf are null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    return value


def _new_eval() -> dict[str, Any]:
    return {"n_trials": 0, "n_errors": 0, "metrics": [], "pass_at_k": {}, "reward_stats": {}, "exception_stats": {}}


def _written(n_total: int, trials: list[dict[str, Any]], evals: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """result.json as harbor writes it while the job runs (the parts a reader of it uses)."""
    return _json({
        "n_total_trials": n_total,
        "stats": {"n_completed_trials": len(trials),
                  "n_errored_trials": sum(t["exception_type"] is not None for t in trials),
                  "n_cancelled_trials": 0,
                  "evals": {key: {"metrics": list(stats["metrics"])} for key, stats in evals.items()}},
    })


class JobFailed(Exception):
    """The job ended with ``error`` after writing ``written`` (its result.json)."""

    def __init__(self, error: BaseException, written: dict[str, Any]) -> None:
        super().__init__(str(error))
        self.error = error
        self.written = written


def compute(request: dict[str, Any]) -> dict[str, Any]:
    try:
        return run(request)
    except JobFailed as failed:
        raise failed.error from None


def written_result(request: dict[str, Any]) -> dict[str, Any] | None:
    """The result.json the job leaves behind: the final one, the last one written before
    it failed, or None when harbor refuses the job before it starts."""
    try:
        done = run(request)
    except JobFailed as failed:
        return failed.written
    except Exception:
        return None
    return {key: done[key] for key in ("n_total_trials", "stats")}


def run(request: dict[str, Any]) -> dict[str, Any]:
    # harbor's order: the job's config, the registry (with its metric lists), the task list, the metrics.
    for config in [
        *(request.get("metrics") or []),
        *(m for d in request.get("datasets") or [] for m in d.get("metrics") or []),
    ]:
        validate_config(config)
    if not request.get("tasks") and not any(d.get("tasks") for d in request.get("datasets") or []):
        raise ValueError("Either datasets or tasks must be provided.")
    table = resolve_metrics(request)
    trials = plan(request)
    evals: dict[str, dict[str, Any]] = {}
    rewards_by_key: dict[str, list[Any]] = {}
    datasets: dict[str, str] = {}
    for i, trial in enumerate(trials):
        verifier_result, exception_type = run_trial(trial["outcome"])
        trial["verifier_result"], trial["exception_type"] = verifier_result, exception_type
        trial["rewards"] = None if verifier_result is None else verifier_result["rewards"]
        dataset = trial["source"] or "adhoc"
        key = pass_at_k.evals_key(trial["agent"], trial["model"], dataset)
        first_of_key = key not in evals
        stats = evals.setdefault(key, _new_eval())
        datasets[key] = dataset
        if trial["rewards"] is not None:
            stats["n_trials"] += 1
            for name, value in trial["rewards"].items():
                stats["reward_stats"].setdefault(name, {}).setdefault(value, []).append(trial["trial"])
        if exception_type is not None:
            stats["n_errors"] += 1
            stats["exception_stats"].setdefault(exception_type, []).append(trial["trial"])
        rewards_by_key.setdefault(key, []).append(trial["rewards"])
        # The table answers every name: one no dataset has (an ad-hoc task's own source) gets no metrics.
        metrics = table.setdefault(dataset, [])
        try:  # the live refresh
            stats["metrics"] = [metric(rewards_by_key[key]) for metric in metrics]
        except Exception as error:
            # On disk: what was written when this trial started, the job as it stood after the one before.
            before = {k: v for k, v in evals.items() if not (k == key and first_of_key)}
            raise JobFailed(
                ExceptionGroup(ENDS_IN_TASK_GROUP, [error]), _written(len(trials), trials[:i], before)
            ) from None
        try:  # the progress line, once the trial's result is written (no first metric: an IndexError)
            _progress_line(metrics[0], rewards_by_key[key])
        except Exception as error:
            raise JobFailed(
                ExceptionGroup(ENDS_IN_TASK_GROUP, [error]), _written(len(trials), trials[:i + 1], evals)
            ) from None
    for key, rewards in rewards_by_key.items():
        evals[key]["metrics"] = [metric(rewards) for metric in table.get(final_metrics_name(key, datasets[key]), [])]
    for key, values in pass_at_k.compute({"trials": trials}).items():
        evals[key]["pass_at_k"] = values
    for stats in evals.values():
        stats["reward_stats"] = {
            name: distinct_keys([(str(value), names) for value, names in buckets.items()])
            for name, buckets in stats["reward_stats"].items()
        }
    errored = sum(t["exception_type"] is not None for t in trials)
    return _json({
        "n_total_trials": len(trials),
        "stats": {"n_completed_trials": len(trials), "n_errored_trials": errored, "n_cancelled_trials": 0,
                  "evals": evals},
        "trials": [{field: t[field] for field in ("trial", "task_name", "source", "agent", "verifier_result",
                                                   "exception_type")} for t in trials],
    })
