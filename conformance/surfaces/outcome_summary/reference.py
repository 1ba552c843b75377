"""outcome.summary: agent-challenge's ``BASE_BENCHMARK_RESULT=`` line from harbor's result.json.

What agent-challenge's inline summary step does, written from its observed
behaviour (it runs on CPython 3.12):

* No result file: failed, score 0.0, 0 of 0 resolved, ``harbor_result_missing``.
* Otherwise the file is read as UTF-8 text (universal newlines) and parsed as
  JSON (NaN and Infinity literals accepted, a BOM refused). The total is
  ``n_total_trials``, the counts come from ``stats``; the score is the mean of
  every eval's metric values (a metric's ``mean`` when it has one, else all its
  values), 0.0 when there are none. Completed when nothing errored;
  ``resolved`` is ``round(score * total)``; a zero total falls back to
  completed + errored trials.
* Any exception along the way (decoding, JSON, a wrong type, ``float`` or
  ``int`` of a bad value, rounding NaN or inf) leaves the missing-result
  summary but with ``harbor_result_malformed``.
* The line is ``json.dumps(summary, sort_keys=True)`` after the prefix.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.kit.candidate import working_folder
from conformance.reference.cpython_sum import cpython312_sum
from conformance.surfaces.job_result import reference as job_result

# Seed 003 §5: "Output line is literally BASE_BENCHMARK_RESULT= + json.dumps(summary, sort_keys=True)".
PREFIX = "BASE_BENCHMARK_RESULT="


def _read_text(data: bytes) -> str:
    # Path.read_text(): strict UTF-8 (no BOM stripping), universal newlines.
    text = data.decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _metric_values(stats: Any) -> list[float]:
    values: list[float] = []
    for eval_stats in stats.get("evals", {}).values():
        for metric in eval_stats.get("metrics", []):
            # Membership, not a type check: a list or string "metric" is tested as the original does.
            if "mean" in metric:
                values.append(float(metric["mean"]))
            else:
                values.extend(float(v) for v in metric.values())
    return values


def _scored(data_bytes: bytes) -> dict[str, Any]:
    """The summary fields from the result file; raises on anything malformed."""
    data = json.loads(_read_text(data_bytes))
    stats = data.get("stats", {})
    total = int(data.get("n_total_trials") or 0)
    completed = int(stats.get("n_completed_trials") or 0)
    errored = int(stats.get("n_errored_trials") or 0)
    score = 0.0
    metric_values = _metric_values(stats)
    if metric_values:
        score = cpython312_sum(metric_values) / len(metric_values)
    # All fields are computed before the summary changes, so a failing round() leaves it untouched.
    return {
        "status": "completed" if errored == 0 else "failed",
        "score": score,
        "resolved": round(score * total),
        "total": total or completed + errored,
        "reason_code": None,
    }


def summary_line(result_json: bytes | None) -> dict[str, Any]:
    """The summary and its line, from the result file's bytes (None: no file)."""
    # Seed 003 §5: reason_code "harbor_result_missing" if the result JSON file is absent;
    # "harbor_result_malformed" if any exception is raised while parsing/aggregating.
    summary: dict[str, Any] = {
        "status": "failed",
        "score": 0.0,
        "resolved": 0,
        "total": 0,
        "reason_code": "harbor_result_missing",
    }
    if result_json is not None:
        try:
            summary.update(_scored(result_json))
        except Exception:  # the original catches everything: the result is malformed
            summary["reason_code"] = "harbor_result_malformed"
    return {"summary": summary, "line": PREFIX + json.dumps(summary, sort_keys=True)}


def compute(request: dict[str, Any]) -> dict[str, Any]:
    return summary_line(request.get("result_json"))


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The reference candidate's answer for outcome.summary: of the bytes given, or of the job's own result.json."""
    job = request.get("job")
    if job is None:
        return summary_line(request.get("result_json"))
    with working_folder(job.get("scripts"), change_directory=False):
        written = job_result.written_result(job)
    return summary_line(None if written is None else json.dumps(written).encode())
