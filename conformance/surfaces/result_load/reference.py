"""result.load: a result.json read back as harbor 0.13.1's JobResult or TrialResult, and written again.

What harbor does, written from its models' schema and observed behaviour
(a Python runner would declare the same models with pydantic, as here):

* The file is read as ``Path.read_text()`` reads it: strict UTF-8 (a byte
  order mark kept, so JSON refuses it), universal newlines. Bytes that are
  not UTF-8 raise ``UnicodeDecodeError``.
* It is validated from the JSON text (NaN and Infinity accepted, the last of
  duplicate keys kept, unknown keys ignored). A job file first goes through
  JobResult's migration: a ``status`` block is dropped, its ``updated_at``
  (then ``finished_at``, then ``started_at``) fills a missing or null
  ``updated_at``; the legacy ``n_trials``/``n_errors`` stats fill the
  current counts; the status block's counts fill those the stats lack; and
  a missing ``n_pending_trials`` is the total less completed and running
  trials (counts that are no int count 0), never below 0.
* A trial config without a ``trial_name`` gets ``<task>__`` and seven random
  letters; a trial result without an ``id``, a random UUID. Both are masked
  (``<shortuuid>``, ``<uuid4>``), as the oracle's side masks them.
* ``written`` is ``model_dump_json(indent=4)`` parsed: NaN and infinities
  null, sensitive env values redacted, ``exclude``/``exclude_if`` fields
  left out. ``reloaded`` validates it again: "same" when the value equals the
  first (a trial config's equality leaves out ``trial_name`` and ``job_id``),
  "differs", or the first error's type.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import uuid
from collections import defaultdict
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

# What stands for a value harbor draws at random, and the reload verdicts (as docs/protocol.md spells them).
GENERATED_ID = "<uuid4>"
GENERATED_SUFFIX = "<shortuuid>"
SAME, DIFFERS = "same", "differs"

_SUFFIX_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_SUFFIX_LENGTH = 7
_HOST_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_ENV_TEMPLATE = re.compile(r"\$\{([^}:]+)(?::-(.*))?\}")
_SENSITIVE_KEY = re.compile(r"(KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL|AUTH)", re.IGNORECASE)
_TPU_TOPOLOGY = re.compile(r"^[1-9]\d*(x[1-9]\d*)+$")


# --- the values a config's fields are checked and written with


def _allowed_hosts(hosts: list[str]) -> list[str]:
    normalized = []
    for host in hosts:
        host = host.strip().lower().rstrip(".")
        if not host:
            raise ValueError("allowed_hosts entries must be non-empty hostnames.")
        if "://" in host or "/" in host or ":" in host:
            raise ValueError("allowed_hosts entries must be hostnames, not URLs, ports, or paths.")
        if not all(_HOST_LABEL.match(label) for label in host.split(".")):
            raise ValueError("allowed_hosts entries must be valid hostnames containing only letters, digits, "
                             "hyphens, and dots.")
        normalized.append(host)
    return normalized


AllowedHosts = Annotated[list[str], AfterValidator(_allowed_hosts)]  # an agent's and an environment's extra hosts


def _templatized(env: dict[str, str]) -> dict[str, str]:
    """An env as a config writes it: a sensitive key's value is a template, ``${KEY}`` when the process's own
    environment holds that value, else redacted."""
    out = {}
    for key, value in env.items():
        if _ENV_TEMPLATE.fullmatch(value) or not _SENSITIVE_KEY.search(key):
            out[key] = value
        elif os.environ.get(key) == value:
            out[key] = f"${{{key}}}"
        else:
            out[key] = "****" if len(value) <= 8 else value[:4] + "****" + value[-3:]
    return out


class ResourceMode(str, Enum):
    AUTO = "auto"
    LIMIT = "limit"
    REQUEST = "request"
    GUARANTEE = "guarantee"
    IGNORE = "ignore"


class EnvironmentType(str, Enum):
    DOCKER = "docker"
    DAYTONA = "daytona"
    E2B = "e2b"
    MODAL = "modal"
    RUNLOOP = "runloop"
    GKE = "gke"
    NOVITA = "novita"
    APPLE_CONTAINER = "apple-container"
    SINGULARITY = "singularity"
    ISLO = "islo"
    TENSORLAKE = "tensorlake"
    CWSANDBOX = "cwsandbox"
    WANDB = "wandb"


class MCPServerConfig(BaseModel):
    name: str
    transport: Literal["stdio", "sse", "streamable-http"] = "sse"
    url: str | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)

    @field_validator("transport", mode="before")
    @classmethod
    def _http_alias(cls, value: Any) -> Any:
        return "streamable-http" if value == "http" else value

    @model_validator(mode="after")
    def _transport_fields(self) -> MCPServerConfig:
        if self.transport in ("sse", "streamable-http") and not self.url:
            raise ValueError(f"'url' is required for transport '{self.transport}'")
        if self.transport == "stdio" and not self.command:
            raise ValueError("'command' is required for transport 'stdio'")
        return self


class ArtifactConfig(BaseModel):
    source: str
    destination: str | None = None
    exclude: list[str] = Field(default_factory=list)


class TpuSpec(BaseModel):
    type: str = Field(min_length=1)
    topology: str

    @field_validator("topology")
    @classmethod
    def _topology(cls, value: str) -> str:
        if not _TPU_TOPOLOGY.match(value.strip()):
            raise ValueError(f"Invalid TPU topology '{value}'")
        return value.strip()


class ServiceVolumeBind(TypedDict):
    create_host_path: NotRequired[Literal[False]]


class ServiceVolumeSubpath(TypedDict):
    subpath: NotRequired[str]


class ServiceVolumeConfig(TypedDict):
    type: Literal["bind", "volume", "image"]
    source: str
    target: str
    read_only: NotRequired[Literal[True]]
    bind: NotRequired[ServiceVolumeBind]
    volume: NotRequired[ServiceVolumeSubpath]
    image: NotRequired[ServiceVolumeSubpath]


class RolloutDetail(TypedDict, total=False):
    prompt_token_ids: list[list[int]]
    completion_token_ids: list[list[int]]
    logprobs: list[list[float]]
    extra: dict[str, list[Any]]


# --- a trial's config


class AgentConfig(BaseModel):  # type: ignore[no-redef]  # the pydantic plugin's __init__ has **kwargs too
    name: str | None = None
    import_path: str | None = None
    model_name: str | None = None
    skills: list[Path] = Field(default_factory=list)
    override_timeout_sec: float | None = None
    override_setup_timeout_sec: float | None = None
    max_timeout_sec: float | None = None
    extra_allowed_hosts: AllowedHosts = Field(default_factory=list)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    mcp_servers: list[MCPServerConfig] = Field(default_factory=list)

    @field_serializer("env")
    @classmethod
    def _env(cls, env: dict[str, str]) -> dict[str, str]:
        return _templatized(env)

    @model_validator(mode="after")
    def _default_name(self) -> AgentConfig:
        if self.name is None and self.import_path is None:
            self.name = "oracle"
        return self


class EnvironmentConfig(BaseModel):  # type: ignore[no-redef]  # the pydantic plugin's __init__ has **kwargs too
    type: EnvironmentType | None = None
    import_path: str | None = None
    force_build: bool = False
    delete: bool = True
    cpu_enforcement_policy: ResourceMode = ResourceMode.AUTO
    memory_enforcement_policy: ResourceMode = ResourceMode.AUTO
    override_cpus: int | None = None
    override_memory_mb: int | None = None
    override_storage_mb: int | None = None
    override_gpus: int | None = None
    override_tpu: TpuSpec | None = None
    suppress_override_warnings: bool = Field(default=False, exclude=True)  # read, never written
    mounts: list[ServiceVolumeConfig] | None = None
    extra_docker_compose: list[Path] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    extra_allowed_hosts: AllowedHosts = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _legacy_mounts(cls, data: Any) -> Any:
        # The older key, taken when the current one is absent (and dropped either way). harbor warns of both
        # keys; a warning reaches no file.
        if isinstance(data, dict) and "mounts_json" in data:
            legacy = data.pop("mounts_json")
            if "mounts" not in data:
                data["mounts"] = legacy
        return data

    @field_validator("cpu_enforcement_policy", "memory_enforcement_policy", mode="before")
    @classmethod
    def _lower_mode(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @field_serializer("env")
    @classmethod
    def _env(cls, env: dict[str, str]) -> dict[str, str]:
        return _templatized(env)

    @field_validator("env", mode="before")
    @classmethod
    def _env_list(cls, value: Any) -> Any:
        # The older spelling: a list of KEY=VALUE strings.
        if isinstance(value, list):
            out: dict[str, str] = {}
            for item in value:
                if "=" not in item:
                    raise ValueError(f"Invalid env var format: {item!r}. Expected KEY=VALUE")
                key, text = item.split("=", 1)
                out[key.strip()] = text.strip()
            return out
        return value

    @model_validator(mode="after")
    def _default_type(self) -> EnvironmentConfig:
        if self.type is None and self.import_path is None:
            self.type = EnvironmentType.DOCKER
        return self


class VerifierConfig(BaseModel):  # type: ignore[no-redef]  # the pydantic plugin's __init__ has **kwargs too
    override_timeout_sec: float | None = None
    max_timeout_sec: float | None = None
    env: dict[str, str] = Field(default_factory=dict)
    import_path: str | None = Field(default=None, exclude_if=lambda v: v is None)
    kwargs: dict[str, Any] = Field(default_factory=dict, exclude_if=lambda v: not v)
    disable: bool = False

    @field_serializer("env")
    @classmethod
    def _env(cls, env: dict[str, str]) -> dict[str, str]:
        return _templatized(env)


class GitTaskId(BaseModel):
    model_config = ConfigDict(frozen=True)

    git_url: str
    git_commit_id: str | None = None
    path: Path


class LocalTaskId(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: Path


class PackageTaskId(BaseModel):
    model_config = ConfigDict(frozen=True)

    org: str
    name: str
    ref: str | None = None


class TaskConfig(BaseModel):
    path: Path | None = None
    git_url: str | None = None
    git_commit_id: str | None = None
    name: str | None = None
    ref: str | None = None
    overwrite: bool = False
    download_dir: Path | None = None
    source: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> TaskConfig:
        if self.path is None and self.name is None:
            raise ValueError("Either 'path' or 'name' must be set.")
        if self.path is not None and self.name is not None:
            raise ValueError("Cannot set both 'path' and 'name'.")
        if self.ref is not None and self.name is None:
            raise ValueError("'ref' requires 'name' to be set.")
        if self.git_commit_id is not None and self.git_url is None:
            raise ValueError("'git_commit_id' requires 'git_url' to be set.")
        return self

    def task_name(self) -> str:
        """The name a generated trial name starts with: a package's name, else the task folder's own name."""
        if self.name is not None:
            _org, name = self.name.split("/", 1)  # a name without "/" raises, as harbor's unpacking does
            return name.split("/")[-1]
        assert self.path is not None
        if self.git_url is not None:
            return self.path.name
        return self.path.expanduser().resolve().name


class TrialConfig(BaseModel):
    task: TaskConfig
    trial_name: str = ""
    trials_dir: Path = Path("trials")
    timeout_multiplier: float = 1.0
    agent_timeout_multiplier: float | None = None
    verifier_timeout_multiplier: float | None = None
    agent_setup_timeout_multiplier: float | None = None
    environment_build_timeout_multiplier: float | None = None
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    artifacts: list[str | ArtifactConfig] = Field(default_factory=list)
    extra_instruction_paths: list[Path] = Field(default_factory=list)
    job_id: uuid.UUID | None = None

    def __eq__(self, other: object) -> bool:
        # The trial's identity is no part of its configuration.
        if not isinstance(other, TrialConfig):
            return NotImplemented
        identity = {"trial_name", "job_id"}
        return self.model_dump(exclude=identity) == other.model_dump(exclude=identity)

    __hash__ = None  # type: ignore[assignment]  # as any model that defines __eq__

    @model_validator(mode="after")
    def _default_trial_name(self) -> TrialConfig:
        if not self.trial_name:
            suffix = "".join(secrets.choice(_SUFFIX_ALPHABET) for _ in range(_SUFFIX_LENGTH))
            self.trial_name = f"{self.task.task_name()[:32].rstrip('_-')}__{suffix}"
        return self


# --- a trial's result


class AgentContext(BaseModel):
    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None
    rollout_details: list[RolloutDetail] | None = None
    metadata: dict[str, Any] | None = None


class VerifierResult(BaseModel):
    rewards: dict[str, float | int] | None = None


class TimingInfo(BaseModel):
    started_at: datetime | None = None
    finished_at: datetime | None = None


class ExceptionInfo(BaseModel):
    exception_type: str
    exception_message: str
    exception_traceback: str
    occurred_at: datetime


class ModelInfo(BaseModel):
    name: str
    provider: str | None = None


class AgentInfo(BaseModel):
    name: str
    version: str
    model_info: ModelInfo | None = None


class StepResult(BaseModel):
    step_name: str
    agent_result: AgentContext | None = None
    verifier_result: VerifierResult | None = None
    exception_info: ExceptionInfo | None = None
    agent_execution: TimingInfo | None = None
    verifier: TimingInfo | None = None


class TrialResult(BaseModel):
    id: uuid.UUID = Field(default_factory=uuid.uuid4)
    task_name: str
    trial_name: str
    trial_uri: str
    task_id: LocalTaskId | GitTaskId | PackageTaskId
    source: str | None = None
    task_checksum: str
    config: TrialConfig
    agent_info: AgentInfo
    agent_result: AgentContext | None = None
    verifier_result: VerifierResult | None = None
    exception_info: ExceptionInfo | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    environment_setup: TimingInfo | None = None
    agent_setup: TimingInfo | None = None
    agent_execution: TimingInfo | None = None
    verifier: TimingInfo | None = None
    step_results: list[StepResult] | None = None


# --- a job's result


class AgentDatasetStats(BaseModel):
    n_trials: int = 0
    n_errors: int = 0
    metrics: list[dict[str, Any]] = Field(default_factory=list)
    pass_at_k: dict[int, float] = Field(default_factory=dict)
    reward_stats: dict[str, dict[float | int, list[str]]] = Field(default_factory=dict)
    exception_stats: dict[str, list[str]] = Field(default_factory=dict)


_LEGACY_COUNTS = {"n_trials": "n_completed_trials", "n_errors": "n_errored_trials"}
_STATUS_COUNTS = ("n_completed_trials", "n_errored_trials", "n_running_trials", "n_pending_trials",
                  "n_cancelled_trials", "n_retries")


class JobStats(BaseModel):
    n_completed_trials: int = 0
    n_errored_trials: int = 0
    n_running_trials: int = 0
    n_pending_trials: int = 0
    n_cancelled_trials: int = 0
    n_retries: int = 0
    evals: dict[str, AgentDatasetStats] = Field(default_factory=lambda: defaultdict(AgentDatasetStats))
    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _legacy_counts(cls, data: Any) -> Any:
        # Older files count trials and errors as n_trials and n_errors: they fill the current counts left out.
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for legacy, current in _LEGACY_COUNTS.items():
            if current not in data and legacy in data:
                data[current] = data[legacy]
        return data


def _count(stats: dict[str, Any], name: str) -> int:
    value = stats.get(name, 0)
    return value if isinstance(value, int) else 0  # a bool is an int here, as it is to Python


class JobResult(BaseModel):
    id: uuid.UUID
    started_at: datetime
    updated_at: datetime | None = None
    finished_at: datetime | None = None
    n_total_trials: int
    stats: JobStats
    trial_results: list[TrialResult] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _progress(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        status = data.pop("status", None)
        if data.get("updated_at") is None:
            status_updated_at = status.get("updated_at") if isinstance(status, dict) else None
            data["updated_at"] = status_updated_at or data.get("finished_at") or data.get("started_at")
        total = data.get("n_total_trials", 0)
        if not isinstance(total, int):
            total = 0
        stats = data.get("stats", {}) or {}
        stats = dict(stats) if isinstance(stats, dict) else {}
        for legacy, current in _LEGACY_COUNTS.items():
            if current not in stats and legacy in stats:
                stats[current] = stats[legacy]
        if isinstance(status, dict):
            for name in _STATUS_COUNTS:
                if name not in stats and name in status:
                    stats[name] = status[name]
        if "n_pending_trials" not in stats:
            stats["n_pending_trials"] = max(
                total - _count(stats, "n_completed_trials") - _count(stats, "n_running_trials"), 0)
        data["stats"] = stats
        return data


MODELS: dict[str, type[BaseModel]] = {"job": JobResult, "trial": TrialResult}


# --- reading, writing, masking


def _read_text(data: bytes) -> str:
    # Path.read_text(): strict UTF-8 with its byte order mark kept, universal newlines.
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def _mask_trial(given: Any, written: dict[str, Any]) -> None:
    """Mask what was drawn at random for one trial result, ``given`` being the file's own object for it."""
    if not isinstance(given, dict):
        return
    if "id" not in given:
        written["id"] = GENERATED_ID
    config = given.get("config")
    if isinstance(config, dict) and not config.get("trial_name"):
        name = written["config"]["trial_name"]
        written["config"]["trial_name"] = name[:-_SUFFIX_LENGTH] + GENERATED_SUFFIX


def _mask(file: str, text: str, written: dict[str, Any]) -> None:
    try:
        given = json.loads(text)
    except ValueError:
        return
    if file == "trial":
        _mask_trial(given, written)
    elif isinstance(given, dict) and isinstance(given.get("trial_results"), list):
        for given_trial, written_trial in zip(given["trial_results"], written["trial_results"], strict=False):
            _mask_trial(given_trial, written_trial)


def _reloaded(model: type[BaseModel], value: BaseModel, dumped: str) -> str:
    try:
        again = model.model_validate_json(dumped)
    except ValidationError as refused:
        return str(refused.errors()[0]["type"])
    return SAME if again == value else DIFFERS


def load(file: str, data: bytes) -> dict[str, Any]:
    """What harbor makes of a result.json's bytes; raises as harbor does on a file it refuses."""
    model = MODELS[file]
    text = _read_text(data)
    value = model.model_validate_json(text)
    dumped = value.model_dump_json(indent=4)
    written = json.loads(dumped)
    _mask(file, text, written)
    return {"model": model.__name__, "written": written, "reloaded": _reloaded(model, value, dumped)}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The reference candidate's answer for result.load."""
    return load(request["file"], request["data"])

