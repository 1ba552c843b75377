"""reason.normalize: agent-challenge's reason code of an exception, and its retry policy (seed-003 §1.4)."""

from __future__ import annotations

from pydantic import Field, StrictInt, StrictStr

from conformance.core.inputs import StrictInput
from conformance.core.surfaces import Bench, surface


@surface(
    "reason.normalize",
    cache_note="a pure function of the text and the attempt number",
    summary="agent-challenge's reason code of an exception type or message, and its retry policy",
    output="{reason_code: str | None, failure: {reason_code: str, retryable: bool}}",
    spec="seed-003 §1.4 (agent-challenge terminal_bench.py normalizer and code sets)",
    strategy=".strategy:reason_inputs",
    bench=Bench(generated=True),
)
class ReasonInput(StrictInput):
    """An exception type, message or reason string (None: none given), and which attempt it ended."""

    value: StrictStr | None = None
    attempt_number: StrictInt = Field(default=1, ge=1, le=10)
