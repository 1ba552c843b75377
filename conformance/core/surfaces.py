"""The scoring surfaces, each declared once: a decorated input model.

A surface names one scoring behaviour: its input model (checked on case
files and generated inputs), the shape of its output (for documentation
and schemas), the spec section it comes from, and its comparison policy.
Case folders are ``cases/<name>/``; its Hypothesis strategy is named as
``module:attribute`` and imported only when generating. Adding a surface is
decorating its input model with ``@surface(name, ...)``; another package
does the same and lists its module in the entry-point group
``harbor_conformance.surfaces`` (see docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictBytes,
    StrictFloat,
    StrictInt,
    StrictStr,
    model_validator,
)

from conformance.core import scope
from conformance.core.compare import NanPolicy
from conformance.core.loading import import_object
from conformance.core.registry import Registry


@dataclass(frozen=True)
class Surface:
    name: str
    summary: str
    input_model: type[BaseModel]
    output: str  # the output's shape, in words
    spec: str  # the section of the scoring spec it checks
    strategy: str | None = None  # "module:attr" of the Hypothesis strategy drawing its inputs
    policy: NanPolicy = NanPolicy.ANY
    # Paths of output dicts whose key order harbor leaves to chance (built from a set).
    unordered: frozenset[str] = frozenset()
    # How an exception's message is read, where the message is part of the answer ("module:attr" of a
    # callable message -> code or None): reward.parse's messages reach agent-challenge as reason codes.
    message_reader: str | None = None
    # The implementation that answers for this surface instead of the default oracle (a candidate spec).
    oracle: str | None = None
    # Inputs sent together in one `batch` message (1: one request at a time, for inputs that run a whole
    # job); ``alone`` picks inputs that run something slow (a uv-script) and go on their own.
    batch_size: int = 256
    alone: Callable[[Any], bool] | None = None
    # A profile's budget of generated inputs, times this: for a surface whose inputs are cheap and whose
    # input space is wide (two grammars, Unicode tables, a model's coercions), where a rule's inputs are rare.
    examples_scale: int = 1
    # Whether the oracle's answers may be kept across runs (conformance.connection.cached): only when an answer
    # is a function of the input alone, never of time, chance or the machine. ``cache_note`` says why (or why not).
    cacheable: bool = True
    cache_note: str = "a pure function of its input"

    def batchable(self, value: Any) -> bool:
        return self.batch_size > 1 and not (self.alone and self.alone(value))

    def inputs(self) -> Any:
        """The Hypothesis strategy of this surface's inputs (imports Hypothesis), within the suite's scope.

        Whatever the named strategy draws, an input :func:`scope.out_of_scope`
        leaves out never comes out of it (the shipped strategies draw none:
        the filter is what guarantees it for every strategy).
        """
        if self.strategy is None:
            raise LookupError(f"surface {self.name!r} declares no generator")
        from hypothesis.strategies import SearchStrategy

        found = import_object(self.strategy)
        drawn: SearchStrategy[Any] = found if isinstance(found, SearchStrategy) else found()
        return drawn.filter(scope.in_scope)

    def read_message(self, message: str) -> str | None:
        """What an exception's message means on this surface (its reason code); None where messages are not read."""
        if self.message_reader is None:
            return None
        reader: Callable[[str], str | None] = import_object(self.message_reader)
        return reader(message)

    def validate_input(self, value: Any) -> None:
        """Raise pydantic.ValidationError when ``value`` is not an input of this surface."""
        self.input_model.model_validate(value)


SURFACES: Registry[Surface] = Registry("surface", "harbor_conformance.surfaces")


def surface(name: str, **declaration: Any) -> Callable[[type[BaseModel]], type[BaseModel]]:
    """Decorator: the input model becomes the surface ``name`` (the other fields as in :class:`Surface`)."""

    def declare(model: type[BaseModel]) -> type[BaseModel]:
        SURFACES.register(name, origin=model.__module__)(Surface(name=name, input_model=model, **declaration))
        return model

    return declare


def with_generators(names: list[str] | None = None) -> list[str]:
    """The surfaces (of ``names``, or all) that declare a generator, in declaration order."""
    return [s.name for s in SURFACES.values() if s.strategy and (not names or s.name in names)]


def get(name: str) -> Surface:
    return SURFACES.get(name)


Number = StrictInt | StrictFloat
RewardDict = dict[StrictStr, Number]


class _Input(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


def _inside(path: Any) -> bool:
    relative = PurePosixPath(path) if isinstance(path, str) else None
    return relative is not None and not relative.is_absolute() and ".." not in relative.parts and bool(relative.parts)


def _script_names(files: dict[str, bytes] | None) -> dict[str, bytes] | None:
    """The files an input ships are written under their names: each must land inside the folder."""
    for name in files or {}:
        if not _inside(name):
            raise ValueError(f"file name {name!r} must be a relative path inside the folder "
                             f"(not absolute, no '..', not empty)")
    return files


# The files an input ships (relative name -> bytes), written into the folder it runs in.
ScriptFiles = Annotated[dict[StrictStr, StrictBytes] | None, AfterValidator(_script_names)]


def _script_path(metric: dict[str, Any]) -> dict[str, Any]:
    """A metric's ``kwargs.script_path`` (what a ``uv-script`` metric runs) must stay in the folder it runs from.

    It may name a file the input does not ship (harbor's error is a case), or be
    left out; it may not reach a script elsewhere on the machine that runs it.
    """
    kwargs = metric.get("kwargs")
    if isinstance(kwargs, dict) and "script_path" in kwargs:
        path = kwargs["script_path"]
        if not _inside(path):
            raise ValueError(f"kwargs.script_path {path!r} must be a relative path inside the folder "
                             f"(not absolute, no '..', not empty)")
    return metric


# A metric object as a dataset's registry.json lists it.
Metric = Annotated[dict[StrictStr, Any], AfterValidator(_script_path)]


@surface(
    "reward.parse",
    cache_note="a pure function of the reward files' bytes (messages name the files relative to the trial)",
    summary="reward.txt / reward.json bytes to the rewards dict a trial holds",
    output="dict[str, float | int] | None, or the exception raised (its type, and its message's reason code)",
    spec="seed-003 §1-§2",
    strategy="conformance.strategies.reward_files:verifier_dirs",
    message_reader="conformance_oracles.agent_challenge:listed_reason_code",
    examples_scale=4,
)
class VerifierDir(_Input):
    """What the verifier left in its logs dir: each reward file's bytes, or absent."""

    reward_txt: StrictBytes | None = None
    reward_json: StrictBytes | None = None


@surface(
    "metric.compute",
    cache_note="a pure function of the metric and rewards; a uv-script runs the script bytes the input ships, "
               "with the oracle's CPython (part of the cache key), its inline dependencies pinned",
    summary="a dataset metric (mean, max, min, sum, uv-script) over per-trial reward dicts",
    output="dict[str, float | int], or the exception raised",
    spec="seed-003 §3",
    strategy="conformance.strategies.reward_lists:metric_inputs",
    alone=lambda value: isinstance(value, dict) and isinstance(value.get("metric"), dict)
    and value["metric"].get("type") == "uv-script",
)
class MetricComputeInput(_Input):
    """A metric object as in a dataset's registry.json, and one reward dict (or null) per trial.

    ``scripts`` holds the files a ``uv-script`` metric names: each is written,
    under its relative name, into the folder the metric is computed from.
    """

    metric: Metric
    rewards: list[RewardDict | None]
    scripts: ScriptFiles = None


class Trial(_Input):
    task_name: StrictStr
    agent: StrictStr
    model: StrictStr | None = None
    source: StrictStr | None = None
    rewards: RewardDict | None


@surface(
    "pass_at_k",
    cache_note="a pure function of the trials",
    summary="pass@k per evals key from a list of trials",
    output="dict[evals_key, dict[int k, float]]",
    spec="seed-003 §4",
    strategy="conformance.strategies.trial_sets:trial_sets",
)
class PassAtKInput(_Input):
    """Trials in the order the job finished them."""

    trials: list[Trial]


# What a scripted stage raises: "timeout" (TimeoutError, which harbor renames by stage), a
# built-in exception, or harbor's NonZeroAgentExitCodeError (its agent stage records it).
Raised = Literal["timeout", "RuntimeError", "ValueError", "OSError", "NonZeroAgentExitCodeError"]
# A step's min_reward: a float, or an int small enough that harbor's float of it is exact.
Threshold = Annotated[StrictInt, Field(ge=-(2**53), le=2**53)] | StrictFloat


class Step(_Input):
    """One step of a multi-step trial: what its agent and its verifier do, and its reward threshold.

    ``raises``: the step's test script raises (no files written);
    ``agent_raises``: the agent's run in this step raises (the step is still
    verified); ``min_reward``: the step's ``min_reward`` in task.toml, a
    number (it gates the ``reward`` key) or a table of numbers by key.
    """

    reward_txt: StrictBytes | None = None
    reward_json: StrictBytes | None = None
    raises: Raised | None = None
    agent_raises: Raised | None = None
    min_reward: Threshold | dict[StrictStr, Threshold] | None = None


@surface(
    "multi_step.reward",
    cache_note="a scripted trial, no clock or chance in what is kept; the mean's key order follows the hash "
               "seed, and is not compared (unordered)",
    summary="a multi-step trial's reward from its steps' verifier results, by the task's strategy",
    output="{verifier_result, exception_type, steps: [{name, verifier_result, exception_type}]}",
    spec="seed-003 §5 (multi-step)",
    strategy="conformance.strategies.steps:multi_step_inputs",
    # The mean strategy collects keys in a set: their order follows the hash seed.
    unordered=frozenset({"$['verifier_result']['rewards']"}),
    batch_size=1,
)
class MultiStepInput(_Input):
    """A multi-step task's ``multi_step_reward_strategy`` (None: unset) and its steps, in order.

    ``verifier_disabled``: the trial runs with ``verifier.disable`` (as
    ``harbor run --disable-verification``).
    """

    strategy: StrictStr | None = None
    steps: list[Step] = Field(min_length=1)
    verifier_disabled: StrictBool = False


# A task's folder name; harbor's task name is its folder's name.
TaskName = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
# A registry dataset's name: looked up as "<name>@<version>".
DatasetName = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")]
STAGES = ("environment", "agent_setup", "agent", "verifier")
# What a job's trial stage may do besides: raise CancelledError itself, or be where the job is
# interrupted (cancelled, as Ctrl-C cancels a running job) while it runs.
TRIAL_RAISED = ("timeout", "RuntimeError", "ValueError", "OSError", "NonZeroAgentExitCodeError",
                "CancelledError", "interrupt")


class RewardFiles(_Input):
    """reward.txt / reward.json bytes in a verifier folder; None: no such file."""

    reward_txt: StrictBytes | None = None
    reward_json: StrictBytes | None = None


class TrialOutcome(_Input):
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


class JobTask(_Input):
    """A task and its trials' outcomes, in the job's trial order (attempt, then agent); missing ones are ``{}``.

    ``source``: for an ad-hoc task, the source its TaskConfig names (None:
    none); it is the evals key's last part and the name its metrics are
    looked up by. A dataset's tasks take the dataset's name.
    """

    name: TaskName
    trials: list[TrialOutcome] = Field(default_factory=list)
    source: StrictStr | None = None


class JobAgent(_Input):
    name: StrictStr
    model: StrictStr | None = None


class JobRetry(_Input):
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


class JobDataset(_Input):
    """A registry dataset: its metrics as registry.json lists them, and its tasks in order."""

    name: DatasetName
    metrics: list[Metric] = Field(default_factory=list)
    tasks: list[JobTask] = Field(default_factory=list)


@surface(
    "job.result",
    cache_note="a scripted job: the adapter names trials by their index in place of harbor's random names, "
               "and keeps no time",
    summary="a whole job's result.json scoring part and each trial's verifier result, through harbor's Job",
    output="{n_total_trials, stats: {n_completed_trials, n_errored_trials, n_cancelled_trials, evals}, trials}, "
           "or the exception Job.run raises",
    spec="seed-003 §3-§5 (job result.json)",
    strategy="conformance.strategies.jobs:job_inputs",
    batch_size=1,
)
class JobResultInput(_Input):
    """A whole job: agents, attempts, the job's metrics, ad-hoc tasks and registry datasets.

    ``scripts`` holds the files a ``uv-script`` metric names, as in metric.compute.
    ``retry``: the job's retry policy; a task's outcomes then list its runs,
    retries included, in the order they run.
    """

    agents: list[JobAgent] = Field(min_length=1, max_length=4)
    n_attempts: StrictInt = Field(default=1, ge=1, le=10)
    retry: JobRetry | None = None
    metrics: list[Metric] = Field(default_factory=list)
    tasks: list[JobTask] = Field(default_factory=list)
    datasets: list[JobDataset] = Field(default_factory=list)
    scripts: ScriptFiles = None

    @model_validator(mode="after")
    def _consistent(self) -> JobResultInput:
        names = [d.name for d in self.datasets]
        if len(set(names)) != len(names):
            raise ValueError(f"dataset names must be distinct: {names}")
        for dataset in self.datasets:
            if any(task.source is not None for task in dataset.tasks):
                raise ValueError(f"dataset {dataset.name!r}: a dataset's tasks take its name as their source")
        per_task = self.n_attempts * len(self.agents) * (1 + (self.retry.max_retries if self.retry else 0))
        for group in (self.tasks, *(d.tasks for d in self.datasets)):
            tasks = [t.name for t in group]
            if len(set(tasks)) != len(tasks):
                raise ValueError(f"task names must be distinct within the ad-hoc tasks and within a dataset: {tasks}")
            for task in group:
                if len(task.trials) > per_task:
                    raise ValueError(f"task {task.name!r} lists {len(task.trials)} trials; "
                                     f"the job runs at most {per_task} (n_attempts x agents x (1 + max_retries))")
        return self


@surface(
    "outcome.summary",
    cache_note="agent-challenge's summary of the bytes given, or of a scripted job (as job.result)",
    summary="agent-challenge's BASE_BENCHMARK_RESULT= line from a job's result.json (or from a whole job, or no file)",
    output="{summary: {status, score, resolved, total, reason_code}, line: str}",
    spec="seed-003 §5 (agent-challenge outcome mapping)",
    strategy="conformance.strategies.outcomes:outcome_inputs",
    batch_size=1,
)
class OutcomeInput(_Input):
    """What the runner finds where harbor's result.json should be: its bytes, or nothing.

    ``job`` instead: the job.result input whose run writes the result.json,
    so a case checks the line a runner would print for that job.
    """

    result_json: StrictBytes | None = None
    job: JobResultInput | None = None

    @model_validator(mode="after")
    def _one_source(self) -> OutcomeInput:
        if self.result_json is not None and self.job is not None:
            raise ValueError("give result_json or job, not both")
        return self


@surface(
    "reason.normalize",
    cache_note="a pure function of the text and the attempt number",
    summary="agent-challenge's reason code of an exception type or message, and its retry policy",
    output="{reason_code: str | None, failure: {reason_code: str, retryable: bool}}",
    spec="seed-003 §1.4 (agent-challenge terminal_bench.py normalizer and code sets)",
    strategy="conformance.strategies.reasons:reason_inputs",
)
class ReasonInput(_Input):
    """An exception type, message or reason string (None: none given), and which attempt it ended."""

    value: StrictStr | None = None
    attempt_number: StrictInt = Field(default=1, ge=1, le=10)


@surface(
    "evsys.metric",
    cache_note="a pure function of the metric name and the rewards",
    summary="an evsys-sdk metric (mean_reward, avg, pass_rate, pass@k, pass^k) over per-task sample rewards",
    output="float, or the exception raised",
    spec="seed-001 (evsys-sdk metrics)",
    strategy="conformance.strategies.task_rewards:evsys_inputs",
)
class EvsysMetricInput(_Input):
    """A metric's registry name and ``task_rewards``: one list of per-sample rewards per task."""

    metric: StrictStr
    task_rewards: list[list[Number]]
