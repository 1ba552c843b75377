"""multi_step.reward: a multi-step trial's reward from its steps, through harbor's MultiStepTrial (seed-003 §5)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictBytes, StrictFloat, StrictInt, StrictStr

from conformance.core.inputs import StrictInput, StrictOutput, VerifierResult
from conformance.core.surfaces import Bench, surface

# What a scripted stage raises: "timeout" (TimeoutError, which harbor renames by stage), a
# built-in exception, or harbor's NonZeroAgentExitCodeError (its agent stage records it).
Raised = Literal["timeout", "RuntimeError", "ValueError", "OSError", "NonZeroAgentExitCodeError"]
# A step's min_reward: a float, or an int small enough that harbor's float of it is exact.
Threshold = Annotated[StrictInt, Field(ge=-(2**53), le=2**53)] | StrictFloat


class Step(StrictInput):
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


class StepOutput(StrictOutput):
    """One step that ran: its name (``step-<i>``), its verifier result and exception type."""

    name: StrictStr
    verifier_result: VerifierResult | None
    exception_type: StrictStr | None


class MultiStepOutput(StrictOutput):
    """The trial's verifier result and exception type, and each step that ran, in order."""

    verifier_result: VerifierResult | None
    exception_type: StrictStr | None
    steps: list[StepOutput]


@surface(
    "multi_step.reward",
    cache_note="a scripted trial, no clock or chance in what is kept; the mean's key order follows the hash "
               "seed, and is not compared (unordered)",
    summary="a multi-step trial's reward from its steps' verifier results, by the task's strategy",
    output="{verifier_result, exception_type, steps: [{name, verifier_result, exception_type}]}",
    spec="seed-003 §5 (multi-step)",
    strategy=".strategy:multi_step_inputs",
    # The mean strategy collects keys in a set: their order follows the hash seed.
    unordered=frozenset({"$['verifier_result']['rewards']"}),
    batch_size=1,
    output_model=MultiStepOutput,
    # draws ÷ yardstick, ci examples/s and campaign inputs/s: twice what they were before the strategies were
    # made leaner, at commit 3bc0f84 (0.66 of the yardstick by the bench's measure of four seeds; 83 ci
    # examples/s; a campaign worker 55 inputs/s, the mean of two of the bench's measures over 12 s).
    bench=Bench(targets={"draws ÷ yardstick": 1.32, "ci examples/s": 166, "campaign inputs/s": 110}),
)
class MultiStepInput(StrictInput):
    """A multi-step task's ``multi_step_reward_strategy`` (None: unset) and its steps, in order.

    ``verifier_disabled``: the trial runs with ``verifier.disable`` (as
    ``harbor run --disable-verification``).
    """

    strategy: StrictStr | None = None
    steps: list[Step] = Field(min_length=1)
    verifier_disabled: StrictBool = False
