"""reason.normalize: agent-challenge's reason code of an exception, and its retry policy (seed-003 §1.4)."""

from __future__ import annotations

from pydantic import Field, StrictBool, StrictInt, StrictStr

from conformance.core.inputs import StrictInput, StrictOutput
from conformance.core.surfaces import Bench, surface


class Failure(StrictOutput):
    """agent-challenge's failure policy: the code it records, and whether the attempt is retried."""

    reason_code: StrictStr
    retryable: StrictBool


class ReasonOutput(StrictOutput):
    reason_code: StrictStr | None
    failure: Failure


@surface(
    "reason.normalize",
    cache_note="a pure function of the text and the attempt number",
    summary="agent-challenge's reason code of an exception type or message, and its retry policy",
    output="{reason_code: str | None, failure: {reason_code: str, retryable: bool}}",
    spec="seed-003 §1.4 (agent-challenge terminal_bench.py normalizer and code sets)",
    strategy=".strategy:reason_inputs",
    # draws ÷ yardstick, ci examples/s and campaign inputs/s: twice what they were before the strategies were
    # made leaner, at commit 3bc0f84 (0.87 of the yardstick by the bench's measure of four seeds; 467 ci
    # examples/s; a campaign worker 272 inputs/s, the mean of two of the bench's measures over 12 s).
    bench=Bench(generated=True, targets={"draws ÷ yardstick": 1.74, "ci examples/s": 934, "campaign inputs/s": 544}),
    output_model=ReasonOutput,
)
class ReasonInput(StrictInput):
    """An exception type, message or reason string (None: none given), and which attempt it ended."""

    value: StrictStr | None = None
    attempt_number: StrictInt = Field(default=1, ge=1, le=10)
