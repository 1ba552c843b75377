"""agent-challenge's consumer of harbor: the outcome line and the reason-code normalizer.

agent-challenge is not on PyPI, so this oracle is a transcription of its
documented behaviour, standard library only, kept apart from the candidate
side's ``conformance.reference``:

* the outcome mapping: the inline block its runner injects after ``harbor
  run``, which reads the job's ``result.json`` and prints one
  ``BASE_BENCHMARK_RESULT=`` line (evaluation/runner.py:1399-1438; seed 003
  section 5);
* the reason-code normalizer and the failure policy built on it
  (evaluation/terminal_bench.py:55-68 for the code sets, :566-604 for the
  normalizer).

It runs inside the oracle's environment (CPython 3.12, as agent-challenge's
runner image does, which matters for ``sum``), and the harness imports it to
read the reason code of a reward error's message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RETRYABLE_CODES = frozenset({
    "harbor_broker_connection_failed",
    "harbor_cancelled_error",
    "harbor_environment_start_timeout_error",
    "terminal_bench_broker_ref_missing",
    "terminal_bench_job_dir_missing",
    "terminal_bench_lease_expired",
})
FINAL_CODES = frozenset({
    "harbor_agent_timeout_error",
    "harbor_nonzero_exit",
    "harbor_result_invalid",
    "harbor_result_malformed",
    "harbor_result_missing",
    "harbor_result_partial",
    "harbor_reward_empty",
    "harbor_reward_missing",
    "harbor_reward_parse_error",
    "harbor_submission_code_failed",
    "harbor_trial_failed",
    "harbor_trial_result_malformed",
    "harbor_trial_result_missing",
    "harbor_verifier_timeout_error",
    "agent_hydrate_failed",
})
LISTED_CODES = RETRYABLE_CODES | FINAL_CODES
ALIASES = {
    "agent_timeout_error": "harbor_agent_timeout_error",
    "agenttimeouterror": "harbor_agent_timeout_error",
    "cancelled_error": "harbor_cancelled_error",
    "cancellederror": "harbor_cancelled_error",
    "environment_start_timeout_error": "harbor_environment_start_timeout_error",
    "environmentstarttimeouterror": "harbor_environment_start_timeout_error",
    "submission_code_failure": "harbor_submission_code_failed",
    "verifier_timeout_error": "harbor_verifier_timeout_error",
    "verifiertimeouterror": "harbor_verifier_timeout_error",
}
# (words that must all appear in the compact form, code), tried in this order after the aliases.
_COMPACT_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("cancellederror",), "harbor_cancelled_error"),
    (("cancelederror",), "harbor_cancelled_error"),
    (("environmentstarttimeouterror",), "harbor_environment_start_timeout_error"),
    (("agenttimeouterror",), "harbor_agent_timeout_error"),
    (("verifiertimeouterror",), "harbor_verifier_timeout_error"),
)
# (words that must all appear in the lowered text, any one of these too, code), in order.
_TEXT_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = (
    (("broker", "connection"), (), "harbor_broker_connection_failed"),
    ((), ("connection refused", "connection reset"), "harbor_broker_connection_failed"),
    (("reward", "missing"), (), "harbor_reward_missing"),
    (("reward", "empty"), (), "harbor_reward_empty"),
    (("reward",), ("parse", "malformed"), "harbor_reward_parse_error"),
    (("submission",), ("code", "runtime"), "harbor_submission_code_failed"),
)
MAX_ATTEMPTS = 3
NO_REASON = "terminal_bench_failed"
RESULT_LINE_PREFIX = "BASE_BENCHMARK_RESULT="


def normalize_reason_code(value: str | None) -> str | None:
    """The canonical reason code of an exception type, a message or a code; None for nothing."""
    if not value or not value.strip():
        return None
    lowered = value.strip().lower()
    compact = "".join(c for c in lowered if c.isalnum())
    underscored = "_".join(lowered.replace("-", "_").split())
    for form in (lowered, underscored):
        if form in LISTED_CODES:
            return form
    alias = ALIASES.get(compact) or ALIASES.get(underscored)
    if alias is not None:
        return alias
    for words, code in _COMPACT_RULES:
        if all(w in compact for w in words):
            return code
    for words, any_of, code in _TEXT_RULES:
        if all(w in lowered for w in words) and (not any_of or any(w in lowered for w in any_of)):
            return code
    return underscored or lowered


def listed_reason_code(message: str | None) -> str | None:
    """The message's reason code when it is one agent-challenge lists (and acts on), else None."""
    code = normalize_reason_code(message)
    return code if code in LISTED_CODES else None


def classify_failure(value: str | None, attempt_number: int) -> dict[str, Any]:
    """The failure policy: its reason code, and whether the attempt is retried."""
    code = normalize_reason_code(value) or NO_REASON
    if attempt_number >= MAX_ATTEMPTS:
        retryable = False
    else:
        again = normalize_reason_code(code)  # the policy normalizes the normalized code once more
        retryable = again in RETRYABLE_CODES or again not in FINAL_CODES
    return {"reason_code": code, "retryable": retryable}


def summarize(result_path: Path) -> dict[str, Any]:
    """The summary the runner prints for the job whose result.json is at ``result_path``."""
    summary: dict[str, Any] = {"status": "failed", "score": 0.0, "resolved": 0, "total": 0,
                               "reason_code": "harbor_result_missing"}
    if not result_path.exists():
        return summary
    try:
        data = json.loads(result_path.read_text())
        stats = data.get("stats", {})
        total = int(data.get("n_total_trials") or 0)
        completed = int(stats.get("n_completed_trials") or 0)
        errored = int(stats.get("n_errored_trials") or 0)
        score = 0.0
        values = []
        for eval_stats in stats.get("evals", {}).values():
            for metric in eval_stats.get("metrics", []):
                if "mean" in metric:
                    values.append(float(metric["mean"]))
                else:
                    values.extend(float(v) for v in metric.values())
        if values:
            score = sum(values) / len(values)
        summary.update({
            "status": "completed" if errored == 0 else "failed",
            "score": score,
            "resolved": round(score * total),
            "total": total or completed + errored,
            "reason_code": None,
        })
    except Exception:  # anything wrong in the file is one outcome, as in the runner
        summary["reason_code"] = "harbor_result_malformed"
    return summary


def result_line(summary: dict[str, Any]) -> str:
    return RESULT_LINE_PREFIX + json.dumps(summary, sort_keys=True)
