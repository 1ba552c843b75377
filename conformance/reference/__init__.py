"""The built-in ``reference`` candidate: a clean-room implementation in plain Python.

It does not import harbor (nor pydantic): every rule is written down here
from harbor 0.13.1's observed behaviour (and, for the downstream surfaces,
agent-challenge's and evsys-sdk's documented behaviour), so it doubles as the worked example
for candidate authors. Run it over the wire with
``python -m conformance.reference`` or name it ``reference`` on the command line.
"""

from __future__ import annotations

import json
import platform
from typing import Any

from conformance import __version__
from conformance.kit.candidate import Candidate, reads_files, working_folder
from conformance.reference import (
    evsys_metrics,
    job_result,
    metrics,
    multi_step,
    outcome_summary,
    pass_at_k,
    reason_codes,
    reward_files,
)

candidate = Candidate(
    "reference",
    __version__,
    language="python",
    homepage="https://pypi.org/project/harbor-conformance/",
    dependencies={"python": platform.python_version()},
)


@candidate.surface("reward.parse")
def reward_parse(verifier_dir: dict[str, Any]) -> dict[str, Any] | None:
    return reward_files.parse(verifier_dir)


@candidate.surface("metric.compute")
def metric_compute(request: dict[str, Any]) -> dict[str, Any]:
    if not reads_files(request.get("metric"), request.get("scripts")):
        return metrics.compute(request)
    with working_folder(request.get("scripts")):
        return metrics.compute(request)


@candidate.surface("pass_at_k")
def pass_at_k_surface(request: dict[str, Any]) -> dict[str, Any]:
    return pass_at_k.compute(request)


@candidate.surface("multi_step.reward")
def multi_step_reward(request: dict[str, Any]) -> dict[str, Any]:
    return multi_step.compute(request)


@candidate.surface("job.result")
def job_result_surface(request: dict[str, Any]) -> dict[str, Any]:
    with working_folder(request.get("scripts")):
        return job_result.compute(request)


@candidate.surface("outcome.summary")
def outcome_summary_surface(request: dict[str, Any]) -> dict[str, Any]:
    job = request.get("job")
    if job is None:
        return outcome_summary.summary_line(request.get("result_json"))
    with working_folder(job.get("scripts")):
        written = job_result.written_result(job)
    return outcome_summary.summary_line(None if written is None else json.dumps(written).encode())


@candidate.surface("reason.normalize")
def reason_normalize(request: dict[str, Any]) -> dict[str, Any]:
    return reason_codes.compute(request)


@candidate.surface("evsys.metric")
def evsys_metric(request: dict[str, Any]) -> float:
    return evsys_metrics.compute(request)
