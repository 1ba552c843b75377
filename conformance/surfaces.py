"""The scoring surfaces, each declared once.

A surface names one scoring behaviour: its input model (checked on case
files and generated inputs), the shape of its output (for documentation
and schemas), the spec section it comes from, and its comparison policy.
Case folders are ``cases/<name>/``; its Hypothesis strategy is named as
``module:attribute`` and imported only when generating. Adding a surface is
adding one ``register(Surface(...))`` call.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBytes, StrictFloat, StrictInt, StrictStr

from conformance.compare import NanPolicy

Number = StrictInt | StrictFloat
RewardDict = dict[StrictStr, Number]


class _Input(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class VerifierDir(_Input):
    """What the verifier left in its logs dir: each reward file's bytes, or absent."""

    reward_txt: StrictBytes | None = None
    reward_json: StrictBytes | None = None


class MetricComputeInput(_Input):
    """A metric object as in a dataset's registry.json, and one reward dict (or null) per trial.

    ``scripts`` holds the files a ``uv-script`` metric names: each is written,
    under its relative name, into the folder the metric is computed from.
    """

    metric: dict[StrictStr, Any]
    rewards: list[RewardDict | None]
    scripts: dict[StrictStr, StrictBytes] | None = None


class Trial(_Input):
    task_name: StrictStr
    agent: StrictStr
    model: StrictStr | None = None
    source: StrictStr | None = None
    rewards: RewardDict | None


class Step(_Input):
    """One step of a multi-step trial: what its verifier leaves, or that its test script timed out."""

    reward_txt: StrictBytes | None = None
    reward_json: StrictBytes | None = None
    raises: Literal["timeout"] | None = None


class MultiStepInput(_Input):
    """A multi-step task's ``multi_step_reward_strategy`` (None: unset) and its steps, in order."""

    strategy: StrictStr | None = None
    steps: list[Step] = Field(min_length=1)


class PassAtKInput(_Input):
    """Trials in the order the job finished them."""

    trials: list[Trial]


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
    tags: tuple[str, ...] = field(default=())

    def inputs(self) -> Any:
        """The Hypothesis strategy of this surface's inputs (imports Hypothesis)."""
        if self.strategy is None:
            raise LookupError(f"surface {self.name!r} declares no generator")
        from hypothesis.strategies import SearchStrategy

        module, _, attr = self.strategy.partition(":")
        found = getattr(importlib.import_module(module), attr)
        return found if isinstance(found, SearchStrategy) else found()

    def validate_input(self, value: Any) -> None:
        """Raise pydantic.ValidationError when ``value`` is not an input of this surface."""
        self.input_model.model_validate(value)


SURFACES: dict[str, Surface] = {}


def register(surface: Surface) -> Surface:
    if surface.name in SURFACES:
        raise ValueError(f"surface {surface.name!r} is declared twice")
    SURFACES[surface.name] = surface
    return surface


def with_generators(names: list[str] | None = None) -> list[str]:
    """The surfaces (of ``names``, or all) that declare a generator, in declaration order."""
    return [s.name for s in SURFACES.values() if s.strategy and (not names or s.name in names)]


def get(name: str) -> Surface:
    try:
        return SURFACES[name]
    except KeyError:
        raise KeyError(f"unknown surface {name!r}; known: {', '.join(sorted(SURFACES))}") from None


register(Surface(
    name="reward.parse",
    summary="reward.txt / reward.json bytes to the rewards dict a trial holds",
    input_model=VerifierDir,
    output="dict[str, float | int] | None, or the exception raised",
    spec="seed-003 §1-§2",
    strategy="conformance.strategies.reward_files:verifier_dirs",
))
register(Surface(
    name="metric.compute",
    summary="a dataset metric (mean, max, min, sum, uv-script) over per-trial reward dicts",
    input_model=MetricComputeInput,
    output="dict[str, float | int], or the exception raised",
    spec="seed-003 §3",
    strategy="conformance.strategies.reward_lists:metric_inputs",
))
register(Surface(
    name="pass_at_k",
    summary="pass@k per evals key from a list of trials",
    input_model=PassAtKInput,
    output="dict[evals_key, dict[int k, float]]",
    spec="seed-003 §4",
    strategy="conformance.strategies.trial_sets:trial_sets",
))
register(Surface(
    name="multi_step.reward",
    summary="a multi-step trial's reward from its steps' verifier results, by the task's strategy",
    input_model=MultiStepInput,
    output="{verifier_result, exception_type, steps: [{name, verifier_result, exception_type}]}",
    spec="seed-003 §5 (multi-step)",
    strategy="conformance.strategies.steps:multi_step_inputs",
    # The mean strategy collects keys in a set: their order follows the hash seed.
    unordered=frozenset({"$['verifier_result']['rewards']"}),
))
