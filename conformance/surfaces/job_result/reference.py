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
* Retries (``retry``): a trial whose run ends with an exception runs again,
  up to ``max_retries`` more times, unless its exception type is excluded
  (harbor's default set when ``exclude_exceptions`` is left out) or, with a
  non-empty ``include_exceptions``, not included. Each run takes its task's
  next outcome. When the retry starts, the earlier run is taken out of the
  running stats (its names leave the buckets, the emptied lists stay) and
  ``n_retries`` counts one; only a trial's first run updates the progress
  line. The final stats count each trial's last run.
* Cancellation: a stage that raises ``CancelledError`` records it on its
  trial, which is not retried; the other trials still run, and ``Job.run``
  then raises without its final pass, so the result.json is the one written
  after the last trial. An ``interrupt`` cancels the job while the stage
  runs (as Ctrl-C does): the trial records ``CancelledError`` and no later
  trial starts. Either way the output is that result.json (running stats,
  no pass@k) and the trials that started.
* Snapshots: harbor writes result.json when the job starts (nothing
  completed, every trial pending), when a trial starts (running: 1; a
  retry's start takes the earlier run out first), when a cancellation is
  requested (counted cancelled while still running), when a trial ends
  (the live stats and metrics), and at the end (the final stats, with
  ``finished_at``). Pending is total less completed less running
  (cases/job.result/snapshots.yaml names each write).
* Resume (``resume``): the job runs first until ``stop_after`` trials have
  started (the next one is cancelled in its agent stage, taking up an
  outcome), then its folder is altered and ``harbor jobs resume`` runs. A
  result.json harbor cannot read (replaced, or a trial's whose NaN or
  infinite reward was written as null) fails the resume with a
  ValidationError; a trial folder without one is removed, so is a trial whose
  exception type the filter names. The planned trials are matched to the kept
  ones by task and agent (a trial's name and attempt are no part of its
  config), so each task and agent's last slots are the ones run again, in the
  job's order, taking the outcomes the earlier run left. The resumed job
  starts from the kept trials' stats, rewards and cancellations, and the
  earlier ``n_retries`` (0 when the job's result.json is gone); its final
  pass counts the kept trials, in the order they started, then the new ones.
  Once the job has finished, the command prints a table per evals key, and
  a key that splits on "__" into neither two nor three parts (a "__" in a
  name) ends it with a ValueError.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, overload

from conformance.kit.candidate import distinct_keys, reads_files, working_folder
from conformance.reference.pydantic_float import ValidationError
from conformance.surfaces.metric_compute.reference import metric_from_config, validate_config
from conformance.surfaces.pass_at_k import reference as pass_at_k
from conformance.surfaces.reward_parse import reference as reward_files

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
    """Every trial of the job in order (attempt, task, agent), with the task its runs take outcomes from."""
    groups = [(None, request.get("tasks") or [])]  # an ad-hoc task's source is its own
    groups += [(d["name"], d.get("tasks") or []) for d in request.get("datasets") or []]
    agents = request["agents"]
    trials: list[dict[str, Any]] = []
    for _ in range(request.get("n_attempts", 1)):
        for g, (source, tasks) in enumerate(groups):
            for t, task in enumerate(tasks):
                for agent in agents:
                    trials.append({
                        "trial": f"trial-{len(trials)}", "task_name": task["name"],
                        "source": source if g else task.get("source"),
                        "agent": agent["name"], "model": model_name(agent.get("model")),
                        "model_config": agent.get("model"),
                        "task": (g, t), "outcomes": task.get("trials") or [],
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


class Stats:
    """harbor's JobStats as trials are added and taken out again (a retry takes its earlier run out)."""

    def __init__(self) -> None:
        self.n_completed = 0
        self.n_errored = 0
        self.evals: dict[str, dict[str, Any]] = {}

    def add(self, trial: dict[str, Any]) -> None:
        self.n_completed += 1
        stats = self.evals.setdefault(trial["key"], _new_eval())
        if trial["rewards"] is not None:
            stats["n_trials"] += 1
            for name, value in trial["rewards"].items():
                stats["reward_stats"].setdefault(name, {}).setdefault(value, []).append(trial["trial"])
        if trial["exception_type"] is not None:
            stats["exception_stats"].setdefault(trial["exception_type"], []).append(trial["trial"])
            stats["n_errors"] += 1
            self.n_errored += 1

    def remove(self, trial: dict[str, Any]) -> None:
        """Its counts go down; its name leaves each list it is in, and the lists stay, even empty."""
        self.n_completed -= 1
        stats = self.evals.setdefault(trial["key"], _new_eval())
        if trial["rewards"] is not None:
            stats["n_trials"] -= 1
            for name, value in trial["rewards"].items():
                names = stats["reward_stats"].get(name, {}).get(value, [])
                if trial["trial"] in names:
                    names.remove(trial["trial"])
        if trial["exception_type"] is not None:
            names = stats["exception_stats"].get(trial["exception_type"], [])
            if trial["trial"] in names:
                names.remove(trial["trial"])
            stats["n_errors"] -= 1
            self.n_errored -= 1

    def _evals(self) -> dict[str, Any]:
        return {key: {**stats, "reward_stats": {
            name: distinct_keys([(str(value), list(names)) for value, names in buckets.items()])
            for name, buckets in stats["reward_stats"].items()
        }} for key, stats in self.evals.items()}

    def document(self, n_total: int, n_cancelled: int, n_retries: int) -> dict[str, Any]:
        """result.json's counts and evals (NaN and inf as null, reward values as keys in words)."""
        return _json({
            "n_total_trials": n_total,
            "stats": {"n_completed_trials": self.n_completed, "n_errored_trials": self.n_errored,
                      "n_cancelled_trials": n_cancelled, "n_retries": n_retries, "evals": self._evals()},
        })

    def snapshot(self, n_total: int, n_running: int, n_cancelled: int, n_retries: int,
                 finished: bool) -> dict[str, Any]:
        """A written result.json as a live viewer reads it: the progress counts, whether it is final, the evals.

        Pending is what is neither completed nor running (harbor's
        ``update_progress_counts``), never below 0.
        """
        return _json({
            "n_total_trials": n_total,
            "finished": finished,
            "stats": {"n_completed_trials": self.n_completed, "n_errored_trials": self.n_errored,
                      "n_running_trials": n_running,
                      "n_pending_trials": max(n_total - self.n_completed - n_running, 0),
                      "n_cancelled_trials": n_cancelled, "n_retries": n_retries,
                      # No reward or exception lists while the job runs (LiveEvalStats says why).
                      "evals": {key: {field: stats[field] for field in ("n_trials", "n_errors", "metrics")}
                                for key, stats in self._evals().items()}},
        })


class JobFailed(Exception):
    """The job ended with ``error`` after writing ``written`` (its result.json)."""

    def __init__(self, error: BaseException, written: dict[str, Any]) -> None:
        super().__init__(str(error))
        self.error = error
        self.written = written


def compute(request: dict[str, Any]) -> dict[str, Any]:
    try:
        done = run(request) if request.get("resume") is None else resume(request)
    except JobFailed as failed:
        raise failed.error from None
    if request.get("retry") is None:
        del done["stats"]["n_retries"]
    return done


def written_result(request: dict[str, Any]) -> dict[str, Any] | None:
    """The result.json the job leaves behind: the final one, the last one written before
    it failed or was cancelled, or None when harbor refuses the job before it starts."""
    try:
        done = run(request)
    except JobFailed as failed:
        return failed.written
    except Exception:
        return None
    return {key: done[key] for key in ("n_total_trials", "stats")}


# Exception types a retry policy leaves alone when it names none to exclude.
DEFAULT_EXCLUDED = frozenset({"AgentTimeoutError", "VerifierTimeoutError", "RewardFileNotFoundError",
                              "RewardFileEmptyError", "VerifierOutputParseError"})
CANCELLED = "CancelledError"
INTERRUPT = "interrupt"


def _retry_policy(retry: dict[str, Any] | None) -> tuple[int, Callable[[str], bool]]:
    """How many more runs a trial may have, and whether an exception type is retried."""
    if retry is None:
        return 0, lambda _: False
    include = retry.get("include_exceptions")
    exclude = retry.get("exclude_exceptions")
    excluded = DEFAULT_EXCLUDED if exclude is None else frozenset(exclude)
    return retry.get("max_retries") or 0, lambda name: name not in excluded and (not include or name in include)


def _cancels(outcome: dict[str, Any]) -> bool:
    return outcome.get("raises") in (CANCELLED, INTERRUPT)


class _Job:
    """One job as harbor runs it: each trial's runs and the hooks around them, and what is written."""

    def __init__(self, request: dict[str, Any], stop_after: int | None = None) -> None:
        self.stop_after = stop_after  # the trial that starts after this many is interrupted
        self.table = resolve_metrics(request)
        self.trials = plan(request)
        self.max_retries, self.retried = _retry_policy(request.get("retry"))
        self.n_total = len(self.trials)
        self.stats = Stats()
        self.running: set[str] = set()
        self.cancelled: set[str] = set()
        self.n_retries = 0
        self.live_rewards: dict[str, dict[str, Any]] = {}
        self.previous: dict[str, dict[str, Any]] = {}  # each trial's last run
        self.progressed: set[str] = set()
        self.next_outcome: dict[tuple[int, int], int] = {}
        self.snapshots: list[dict[str, Any]] = []  # every result.json written, as a live viewer reads it
        self.kept: list[dict[str, Any]] = []  # a resumed job's earlier trials
        self.last: list[dict[str, Any]] = []  # each trial's last run, in the order they started
        self.written = self._write()  # Job.run writes result.json before the first trial

    def _write(self) -> dict[str, Any]:
        self.written = self.stats.document(self.n_total, len(self.cancelled), self.n_retries)
        self.snapshots.append(self.stats.snapshot(self.n_total, len(self.running), len(self.cancelled),
                                                  self.n_retries, finished=False))
        return self.written

    def _failed(self, error: Exception) -> JobFailed:
        return JobFailed(ExceptionGroup(ENDS_IN_TASK_GROUP, [error]), self.written)

    def _refresh(self, key: str, dataset: str) -> None:
        rewards = list(self.live_rewards.setdefault(key, {}).values())
        if not rewards:
            self.stats.evals[key]["metrics"] = []
            return
        # The table answers every name: one no dataset has (an ad-hoc task's own source) gets no metrics.
        metrics = self.table.setdefault(dataset, [])
        try:
            self.stats.evals[key]["metrics"] = [metric(rewards) for metric in metrics]
        except Exception as error:
            raise self._failed(error) from None

    def _outcome(self, trial: dict[str, Any]) -> dict[str, Any]:
        n = self.next_outcome[trial["task"]] = self.next_outcome.get(trial["task"], -1) + 1
        return trial["outcomes"][n] if n < len(trial["outcomes"]) else {}

    def _start(self, name: str) -> None:
        earlier = self.previous.pop(name, None)
        if earlier is not None:  # a retry: the earlier run leaves the running stats
            self.live_rewards[earlier["key"]].pop(name, None)
            self.stats.remove(earlier)
            self.cancelled.discard(name)
            self.n_retries += 1
            self._refresh(earlier["key"], earlier["dataset"])
        self.running.add(name)
        self._write()

    def _end(self, run: dict[str, Any]) -> None:
        name, key = run["trial"], run["key"]
        self.live_rewards.setdefault(key, {})[name] = run["rewards"]
        self.stats.add(run)
        self.previous[name] = run
        self.running.discard(name)
        if run["exception_type"] == CANCELLED:
            self.cancelled.add(name)
        self._refresh(key, run["dataset"])
        self._write()
        if name in self.progressed:
            return
        self.progressed.add(name)  # the progress line, once per trial (no first metric: an IndexError)
        try:
            _progress_line(self.table[run["dataset"]][0], list(self.live_rewards[key].values()))
        except Exception as error:
            raise self._failed(error) from None

    def _run(self, trial: dict[str, Any], stopped: bool = False) -> dict[str, Any]:
        """One run of a trial: its outcome (taken up, then interrupted in its agent stage when ``stopped``), hooks."""
        self._start(trial["trial"])
        outcome = self._outcome(trial)
        if stopped:
            outcome = {"raises": INTERRUPT, "raises_in": "agent"}
        run = {**trial, "dataset": trial["source"] or "adhoc"}
        run["key"] = pass_at_k.evals_key(trial["agent"], trial["model"], run["dataset"])
        if _cancels(outcome):
            run["verifier_result"], run["exception_type"] = None, CANCELLED
            self.cancelled.add(trial["trial"])  # the cancel hook writes result.json too, the trial still running
            self._write()
        else:
            run["verifier_result"], run["exception_type"] = run_trial(outcome)
        run["rewards"] = None if run["verifier_result"] is None else run["verifier_result"]["rewards"]
        self._end(run)
        run["interrupted"] = outcome.get("raises") == INTERRUPT
        return run

    def run(self) -> dict[str, Any]:
        last = self.last
        for index, trial in enumerate(self.trials):
            for attempt in range(self.max_retries + 1):
                run = self._run(trial, stopped=attempt == 0 and index == self.stop_after)
                if run["exception_type"] is None or run["exception_type"] == CANCELLED:
                    break
                if attempt == self.max_retries or not self.retried(run["exception_type"]):
                    break
            last.append(run)
            if run["interrupted"]:
                break  # the job is cancelled: no trial starts after this one
        if any(run["exception_type"] == CANCELLED for run in last):
            # Job.run raises CancelledError: what is left is result.json as last written.
            return {**self.written, "trials": _trials(self.kept + last), "snapshots": self.snapshots}
        return self._final(self.kept + last)

    def _final(self, runs: list[dict[str, Any]]) -> dict[str, Any]:
        stats = Stats()
        rewards_by_key: dict[str, list[Any]] = {}
        datasets: dict[str, str] = {}
        for run in runs:
            stats.add(run)
            rewards_by_key.setdefault(run["key"], []).append(run["rewards"])
            datasets[run["key"]] = run["dataset"]
        for key, rewards in rewards_by_key.items():
            stats.evals[key]["metrics"] = [
                metric(rewards) for metric in self.table.get(final_metrics_name(key, datasets[key]), [])
            ]
        for key, values in pass_at_k.compute({"trials": runs}).items():
            stats.evals[key]["pass_at_k"] = values
        # The final write: the stats rebuilt from each trial's last run, finished_at set, nothing running.
        final = stats.snapshot(self.n_total, 0, len(self.cancelled), self.n_retries, finished=True)
        return {**stats.document(self.n_total, len(self.cancelled), self.n_retries), "trials": _trials(runs),
                "snapshots": [*self.snapshots, final]}


def _trials(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    fields = ("trial", "task_name", "source", "agent", "verifier_result", "exception_type")
    return [_json({field: run[field] for field in fields}) for run in runs]


def _unreadable(run: dict[str, Any]) -> bool:
    """Whether a trial's own result.json fails to read back: a NaN or infinite reward is written as null."""
    rewards = run["rewards"] or {}
    return any(isinstance(value, float) and not math.isfinite(value) for value in rewards.values())


def _slot(trial: dict[str, Any]) -> tuple[Any, ...]:
    """What a planned trial config is compared by: its task and its agent (not its name nor attempt)."""
    return trial["task"], trial["agent"], trial["model_config"]


def resume(request: dict[str, Any]) -> dict[str, Any]:
    """The job run until ``stop_after``, its folder altered, then resumed as ``harbor jobs resume`` does."""
    settings = request["resume"]
    validate(request)
    earlier = _Job(request, stop_after=settings.get("stop_after"))
    try:
        earlier.run()
    except JobFailed as failed:
        raise failed.error from None
    # What each earlier trial's folder holds: its result.json ("ok"), one harbor cannot read, or none.
    files = {run["trial"]: "unreadable" if _unreadable(run) else "ok" for run in earlier.last}
    for change in settings.get("trial_results") or []:
        files[f"trial-{change['trial']}"] = "missing" if change.get("replace") is None else "unreadable"
    job_file = "ok" if settings.get("job_result") is None else (
        "missing" if settings["job_result"].get("replace") is None else "unreadable")
    if job_file == "unreadable" or "unreadable" in files.values():
        raise ValidationError("a result.json of the job folder does not validate")
    filtered = set(settings.get("filter_error_types", [CANCELLED]))
    kept = [run for run in earlier.last if files[run["trial"]] == "ok" and run["exception_type"] not in filtered]
    job = _Job(request)
    job.kept = kept
    job.n_retries = earlier.n_retries if job_file == "ok" else 0
    job.next_outcome = dict(earlier.next_outcome)
    for run in kept:
        job.stats.add(run)
        job.live_rewards.setdefault(run["key"], {})[run["trial"]] = run["rewards"]
        job.previous[run["trial"]] = run
        if run["exception_type"] == CANCELLED:
            job.cancelled.add(run["trial"])
    # Each planned trial takes an earlier one of the same task and agent while any is left.
    left = [_slot(run) for run in kept]
    remaining: list[dict[str, Any]] = []
    for trial in job.trials:
        if _slot(trial) in left:
            left.remove(_slot(trial))
        else:
            remaining.append({**trial, "trial": f"trial-{len(earlier.last) + len(remaining)}"})
    job.trials = remaining
    # The resumed run's first write holds the kept trials' stats: the blank one its making wrote is not harbor's.
    job.snapshots.clear()
    job.written = job._write()
    done = job.run()
    if not any(run["exception_type"] == CANCELLED for run in job.last):
        # The command then prints a table per evals key, its title split from the key as agent__model__dataset
        # or agent__dataset: a key of any other number of parts ends the command with a ValueError.
        for key in done["stats"]["evals"]:
            if len(key.split("__")) not in (2, 3):
                raise ValueError(f"too many values to unpack (expected 2): evals key {key!r}")
    kept_names = [run["trial"] for run in kept]
    return {**done, "resumed": {"ran": [run["trial"] for run in job.last], "kept": kept_names,
                                "removed": [run["trial"] for run in earlier.last if run["trial"] not in kept_names]}}


def validate(request: dict[str, Any]) -> None:
    """What harbor refuses before any trial runs: a metric's config, a job with no task."""
    # harbor's order: the job's config, the registry (with its metric lists), the task list, the metrics.
    for config in [
        *(request.get("metrics") or []),
        *(m for d in request.get("datasets") or [] for m in d.get("metrics") or []),
    ]:
        validate_config(config)
    if not request.get("tasks") and not any(d.get("tasks") for d in request.get("datasets") or []):
        raise ValueError("Either datasets or tasks must be provided.")


def run(request: dict[str, Any]) -> dict[str, Any]:
    validate(request)
    return _Job(request).run()


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The reference candidate's answer for job.result, in the folder holding the job's scripts when one of its
    metrics may read a file (a fresh folder costs more than a job of built-in metrics)."""
    if not _reads_files(request):
        return compute(request)
    with working_folder(request.get("scripts"), change_directory=False):
        return compute(request)


def _reads_files(request: dict[str, Any]) -> bool:
    scripts = request.get("scripts")
    try:
        configs = [*(request.get("metrics") or []),
                   *(metric for dataset in request.get("datasets") or [] for metric in dataset.get("metrics") or [])]
    except (AttributeError, TypeError):
        return True  # a malformed job fails as compute() says, in a folder as any other
    return bool(scripts) or any(reads_files(metric, scripts) for metric in configs)
