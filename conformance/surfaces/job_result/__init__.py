"""job.result: a whole job through harbor's Job, Trial and Verifier, over a scripted sandbox (seed-003 §3-§5)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, StrictBytes, StrictFloat, StrictInt, StrictStr, model_validator

from conformance.core.inputs import Number, ScriptFiles, StrictInput, StrictOutput
from conformance.core.surfaces import Bench, surface
from conformance.surfaces.metric_compute import Metric

# A task's folder name; harbor's task name is its folder's name.
TaskName = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
# A registry dataset's name: looked up as "<name>@<version>".
DatasetName = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")]
STAGES = ("environment", "agent_setup", "agent", "verifier")
# What a job's trial stage may do besides: raise CancelledError itself, or be where the job is
# interrupted (cancelled, as Ctrl-C cancels a running job) while it runs.
TRIAL_RAISED = ("timeout", "RuntimeError", "ValueError", "OSError", "NonZeroAgentExitCodeError",
                "CancelledError", "interrupt")


class RewardFiles(StrictInput):
    """reward.txt / reward.json bytes in a verifier folder; None: no such file."""

    reward_txt: StrictBytes | None = None
    reward_json: StrictBytes | None = None


class TrialOutcome(StrictInput):
    """One run of a trial: what its verifier leaves, and which stage raises what (default stage: the verifier).

    ``raises: CancelledError``: the stage raises asyncio's CancelledError;
    ``raises: interrupt``: the job is cancelled while the stage runs (what
    Ctrl-C does), so the running trial gets CancelledError there.

    ``before_verifier``: reward files already in the verifier folder when the
    verifier starts (the agent wrote them). The verifier's test script writes
    its own files over them, and leaves the others where they are.
    """

    reward_txt: StrictBytes | None = None
    reward_json: StrictBytes | None = None
    raises: Literal[TRIAL_RAISED] | None = None  # type: ignore[valid-type]
    raises_in: Literal[STAGES] | None = None  # type: ignore[valid-type]
    before_verifier: RewardFiles | None = None


class JobTask(StrictInput):
    """A task and its trials' outcomes, in the job's trial order (attempt, then agent); missing ones are ``{}``.

    ``source``: for an ad-hoc task, the source its TaskConfig names (None:
    none); it is the evals key's last part and the name its metrics are
    looked up by. A dataset's tasks take the dataset's name.
    """

    name: TaskName
    trials: list[TrialOutcome] = Field(default_factory=list)
    source: StrictStr | None = None


class JobAgent(StrictInput):
    name: StrictStr
    model: StrictStr | None = None


class JobRetry(StrictInput):
    """The job's retry policy (harbor's RetryConfig, without its waits).

    A run that ends with an exception runs again, up to ``max_retries`` more
    times, unless its exception type is in ``exclude_exceptions`` (left out
    or null: harbor's default, AgentTimeoutError, VerifierTimeoutError and
    the three reward-file errors; ``[]``: none) or, when
    ``include_exceptions`` is non-empty, not in it.
    """

    max_retries: StrictInt = Field(default=0, ge=0, le=3)
    include_exceptions: list[StrictStr] | None = None
    exclude_exceptions: list[StrictStr] | None = None


class JobDataset(StrictInput):
    """A registry dataset: its metrics as registry.json lists them, and its tasks in order."""

    name: DatasetName
    metrics: list[Metric] = Field(default_factory=list)
    tasks: list[JobTask] = Field(default_factory=list)


class ResultFileChange(StrictInput):
    """A result.json changed before the resume: replaced by the ``replace`` bytes, or (left out) removed."""

    replace: StrictBytes | None = None


class TrialResultChange(ResultFileChange):
    """An earlier trial's result.json changed; ``trial`` is its index in the order the earlier run started them."""

    trial: StrictInt = Field(ge=0)


class JobResume(StrictInput):
    """The job run once, stopped, its folder altered, then resumed through ``harbor jobs resume``.

    The earlier run is the same job in the same folder: with ``stop_after``,
    it is interrupted (as Ctrl-C does) in the agent stage of the trial that
    starts after that many, which is then cancelled; without, it runs to its
    end. Its runs take each task's first outcomes, the resumed run the rest,
    in order; the interrupted trial takes one too. Then ``trial_results`` and
    ``job_result`` replace or remove result.json files, and the resume
    removes the earlier trials whose exception type is in
    ``filter_error_types`` (the CLI's ``--filter-error-type``).
    """

    stop_after: StrictInt | None = Field(default=None, ge=0)
    trial_results: list[TrialResultChange] = Field(default_factory=list)
    job_result: ResultFileChange | None = None
    filter_error_types: list[StrictStr] = Field(default_factory=lambda: ["CancelledError"])


def _names(data: bytes, key: str) -> bool:
    """Whether ``data`` is a JSON object with ``key``."""
    try:
        value = json.loads(data)
    except ValueError:
        return False
    return isinstance(value, dict) and key in value


class EvalStats(StrictOutput):
    """One evals key's stats in result.json: counts, metrics, pass@k, and which trials got which reward or error."""

    n_trials: StrictInt
    n_errors: StrictInt
    metrics: list[dict[StrictStr, Any]]
    pass_at_k: dict[StrictStr, StrictFloat | StrictInt]
    reward_stats: dict[StrictStr, dict[StrictStr, list[StrictStr]]]
    exception_stats: dict[StrictStr, list[StrictStr]]


class JobStats(StrictOutput):
    n_completed_trials: StrictInt
    n_errored_trials: StrictInt
    n_cancelled_trials: StrictInt
    n_retries: StrictInt | None = None  # only a job with a retry policy
    evals: dict[StrictStr, EvalStats]


class WrittenVerifierResult(StrictOutput):
    """A verifier result as a trial's result.json holds it: a NaN or infinite reward is written as null."""

    rewards: dict[StrictStr, Number | None] | None


class TrialOutput(StrictOutput):
    """One trial's result.json, cut to what scores: its name (``trial-<i>``), task, source, agent and verdict."""

    trial: StrictStr
    task_name: StrictStr
    source: StrictStr | None
    agent: StrictStr
    verifier_result: WrittenVerifierResult | None
    exception_type: StrictStr | None


class LiveEvalStats(StrictOutput):
    """One evals key as a written result.json holds it while the job runs, cut to what a live viewer shows.

    Its reward and exception lists are left out: they name every trial, and
    with one snapshot per write they would grow with the square of a job's
    trials (the final output has them whole).
    """

    n_trials: StrictInt
    n_errors: StrictInt
    metrics: list[dict[StrictStr, Any]]


class SnapshotStats(StrictOutput):
    """The stats of one written result.json: every progress count, as harbor's JobStats orders them, and the evals.

    ``n_pending_trials`` is what harbor derives: total less completed less
    running (never below 0).
    """

    n_completed_trials: StrictInt
    n_errored_trials: StrictInt
    n_running_trials: StrictInt
    n_pending_trials: StrictInt
    n_cancelled_trials: StrictInt
    n_retries: StrictInt
    evals: dict[StrictStr, LiveEvalStats]


class Snapshot(StrictOutput):
    """One result.json as the job wrote it while it ran, cut to what a live viewer reads.

    ``finished``: whether the write sets ``finished_at`` (only the final one does).
    """

    n_total_trials: StrictInt
    finished: StrictBool
    stats: SnapshotStats


class ResumedTrials(StrictOutput):
    """Which trials a resumed job ran, and which earlier ones it kept or removed (``trial-<i>`` each).

    The earlier run's trials are numbered in the order they started, the
    resumed run's after them in the order they start.
    """

    ran: list[StrictStr]
    kept: list[StrictStr]
    removed: list[StrictStr]


class JobResultOutput(StrictOutput):
    """The final result.json's scoring part, each trial's verdict, and every result.json written, in order."""

    n_total_trials: StrictInt
    stats: JobStats
    trials: list[TrialOutput]
    snapshots: list[Snapshot]
    resumed: ResumedTrials | None = None  # only a resumed job


@surface(
    "job.result",
    cache_note="a scripted job: the adapter names trials by their index in place of harbor's random names, "
               "and keeps no time",
    summary="a whole job's result.json scoring part and each trial's verifier result, through harbor's Job",
    output="{n_total_trials, stats: {n_completed_trials, n_errored_trials, n_cancelled_trials, evals}, trials, "
           "snapshots: [every result.json written, in order]}, or the exception Job.run raises",
    spec="seed-003 §3-§5 (job result.json)",
    strategy=".strategy:job_inputs",
    batch_size=1,
    output_model=JobResultOutput,
    # draws ÷ yardstick, ci examples/s and campaign inputs/s: twice what they were before the strategies were
    # made leaner, at commit 3bc0f84 (0.60 of the yardstick by the bench's measure of four seeds; 24 ci
    # examples/s; a campaign worker 15 inputs/s, the mean of two of the bench's measures over 12 s).
    bench=Bench(targets={"draws ÷ yardstick": 1.2, "ci examples/s": 48, "campaign inputs/s": 30}),
)
class JobResultInput(StrictInput):
    """A whole job: agents, attempts, the job's metrics, ad-hoc tasks and registry datasets.

    ``scripts`` holds the files a ``uv-script`` metric names, as in metric.compute.
    ``retry``: the job's retry policy; a task's outcomes then list its runs,
    retries included, in the order they run.
    ``resume``: the job is run, stopped part-way and resumed; the output is
    what the resumed job writes.
    """

    agents: list[JobAgent] = Field(min_length=1, max_length=4)
    n_attempts: StrictInt = Field(default=1, ge=1, le=10)
    retry: JobRetry | None = None
    metrics: list[Metric] = Field(default_factory=list)
    tasks: list[JobTask] = Field(default_factory=list)
    datasets: list[JobDataset] = Field(default_factory=list)
    scripts: ScriptFiles = None
    resume: JobResume | None = None

    @model_validator(mode="after")
    def _consistent(self) -> JobResultInput:
        names = [d.name for d in self.datasets]
        if len(set(names)) != len(names):
            raise ValueError(f"dataset names must be distinct: {names}")
        for dataset in self.datasets:
            if any(task.source is not None for task in dataset.tasks):
                raise ValueError(f"dataset {dataset.name!r}: a dataset's tasks take its name as their source")
        per_task = self.n_attempts * len(self.agents) * (1 + (self.retry.max_retries if self.retry else 0))
        per_task *= 1 if self.resume is None else 2  # a resumed job may run each trial again
        for group in (self.tasks, *(d.tasks for d in self.datasets)):
            tasks = [t.name for t in group]
            if len(set(tasks)) != len(tasks):
                raise ValueError(f"task names must be distinct within the ad-hoc tasks and within a dataset: {tasks}")
            for task in group:
                if len(task.trials) > per_task:
                    raise ValueError(f"task {task.name!r} lists {len(task.trials)} trials; "
                                     f"the job runs at most {per_task} (n_attempts x agents x (1 + max_retries), "
                                     f"twice when it is resumed)")
        if self.resume is not None:
            self._resumable(self.resume)
        return self

    def _resumable(self, resume: JobResume) -> None:
        n_trials = self.n_attempts * len(self.agents) * (len(self.tasks) + sum(len(d.tasks) for d in self.datasets))
        if any(o.raises == "interrupt" for group in (self.tasks, *(d.tasks for d in self.datasets))
               for task in group for o in task.trials):
            raise ValueError("a resumed job is stopped by resume.stop_after, not by an outcome that raises 'interrupt'")
        if resume.stop_after is not None and resume.stop_after >= n_trials:
            raise ValueError(f"resume.stop_after is {resume.stop_after}, but the job has {n_trials} trials: "
                             f"it stops before the last one starts (at most {n_trials - 1})")
        started = n_trials if resume.stop_after is None else resume.stop_after + 1
        changed = [change.trial for change in resume.trial_results]
        if len(set(changed)) != len(changed):
            raise ValueError(f"resume.trial_results changes a trial's result.json once: trials {changed}")
        if any(trial >= started for trial in changed):
            raise ValueError(f"resume.trial_results names trials {changed}, but the earlier run starts "
                             f"{started} (trial 0 to {started - 1})")
        replaced = [(change.replace, "trial_name") for change in resume.trial_results]
        replaced += [(resume.job_result.replace, "id")] if resume.job_result is not None else []
        for data, key in replaced:
            if data is not None and _names(data, key):
                raise ValueError(f"resume: a replaced result.json stands for one harbor cannot read; "
                                 f"one with {key!r} may be read, and its content is not modelled")
