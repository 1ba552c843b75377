"""outcome.summary: agent-challenge's BASE_BENCHMARK_RESULT= line from a job's result.json (seed-003 §5)."""

from __future__ import annotations

from pydantic import StrictBytes, StrictFloat, StrictInt, StrictStr, model_validator

from conformance.core.inputs import StrictInput, StrictOutput
from conformance.core.surfaces import Bench, surface
from conformance.surfaces.job_result import JobResultInput


class Summary(StrictOutput):
    """agent-challenge's summary of a job: its status, score, resolved and total tasks, and reason code."""

    status: StrictStr
    score: StrictFloat | StrictInt
    resolved: StrictInt
    total: StrictInt
    reason_code: StrictStr | None


class OutcomeOutput(StrictOutput):
    summary: Summary
    line: StrictStr  # the BASE_BENCHMARK_RESULT= line


@surface(
    "outcome.summary",
    cache_note="agent-challenge's summary of the bytes given, or of a scripted job (as job.result)",
    summary="agent-challenge's BASE_BENCHMARK_RESULT= line from a job's result.json (or from a whole job, or no file)",
    output="{summary: {status, score, resolved, total, reason_code}, line: str}",
    spec="seed-003 §5 (agent-challenge outcome mapping)",
    strategy=".strategy:outcome_inputs",
    batch_size=1,
    output_model=OutcomeOutput,
    # draws ÷ yardstick, ci examples/s and campaign inputs/s: twice what they were before the strategies were
    # made leaner, at commit 3bc0f84 (0.81 of the yardstick by the bench's measure of four seeds; 101 ci
    # examples/s; a campaign worker 25 inputs/s, the mean of two of the bench's measures over 12 s).
    bench=Bench(targets={"draws ÷ yardstick": 1.62, "ci examples/s": 202, "campaign inputs/s": 50}),
)
class OutcomeInput(StrictInput):
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
        if self.job is not None and self.job.resume is not None:
            # The job is run once and its result.json read: a resume is job.result's to check.
            raise ValueError("a job here runs once: resume is not read (check a resumed job with job.result)")
        return self
