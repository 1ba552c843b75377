"""outcome.summary on the oracle's side: agent-challenge's summary of a result.json, or of a job's own.

agent-challenge's mapping is transcribed in reason.normalize's folder
(``agent_challenge.py``); a whole job runs as job.result runs it.

Runs inside the oracle's virtualenv (standard library, harbor, and the oracle
folder's scripted sandbox ``harbor_job``), loaded by path by
``oracles/harbor_adapter.py``, which calls :func:`serve` once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the adapter's Context and the kit's Handler, for the type check only (oracles/harbor_adapter.py)
    from conformance_kit.candidate import Handler
    from harbor_adapter import Context


def serve(context: Context) -> Handler:
    if TYPE_CHECKING:  # the modules the adapter loads under those names
        import surface_job_result_harbor as job_result_harbor
        import surface_reason_normalize_agent_challenge as agent_challenge
    else:
        agent_challenge = context.load("reason.normalize", "agent_challenge")
        job_result_harbor = context.load("job.result")
    job_result = job_result_harbor.JobResultSurface(context.runner())

    def outcome_summary(request: dict[str, Any]) -> dict[str, Any]:
        job = request.get("job")
        if job is not None:
            with context.kit.working_folder(job.get("scripts")):
                summary = job_result.read_after(job, agent_challenge.summarize)
        else:
            present = request.get("result_json") is not None
            with context.kit.working_folder({"result.json": request["result_json"]} if present else None):
                summary = agent_challenge.summarize(Path("result.json"))
        return {"summary": summary, "line": agent_challenge.result_line(summary)}

    return outcome_summary
