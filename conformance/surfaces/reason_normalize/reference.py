"""reason_code: agent-challenge's Terminal-Bench failure reason normalizer and retry classifier.

What agent-challenge's evaluation does, written from its observed behaviour:

* ``normalize``: a falsy or all-whitespace value has no code. Otherwise the
  stripped, lowercased value is tried, in order: as a known code; as its
  underscored form (``-`` and whitespace runs become ``_``); as an alias, by
  its compact form (only the alphanumeric characters) and then by its
  underscored form; by the compact form containing a timeout or cancellation
  error's name; by keywords (broker connection, reward missing / empty /
  parse, submission code). Anything else is its underscored form.
* ``classify``: no code is ``terminal_bench_failed``. From the third attempt
  on nothing is retryable; before it, the code (normalized once more) is
  retryable unless it is a known final code, so unknown codes are retried.
"""

from __future__ import annotations

from typing import Any

RETRYABLE = frozenset({
    "harbor_broker_connection_failed",
    "harbor_cancelled_error",
    "harbor_environment_start_timeout_error",
    "terminal_bench_broker_ref_missing",
    "terminal_bench_job_dir_missing",
    "terminal_bench_lease_expired",
})
FINAL = frozenset({
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
KNOWN = RETRYABLE | FINAL
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
# Substrings of the compact form, tried in this order after the aliases.
COMPACT_MARKERS = (
    (("cancellederror", "cancelederror"), "harbor_cancelled_error"),
    (("environmentstarttimeouterror",), "harbor_environment_start_timeout_error"),
    (("agenttimeouterror",), "harbor_agent_timeout_error"),
    (("verifiertimeouterror",), "harbor_verifier_timeout_error"),
)
FALLBACK = "terminal_bench_failed"
FINAL_ATTEMPT = 3  # this attempt and later ones are never retried


def _by_keywords(lowered: str) -> str | None:
    """The free-text rules, on the lowercased message (not the compact form)."""
    if "broker" in lowered and "connection" in lowered:
        return "harbor_broker_connection_failed"
    if "connection refused" in lowered or "connection reset" in lowered:
        return "harbor_broker_connection_failed"
    if "reward" in lowered and "missing" in lowered:
        return "harbor_reward_missing"
    if "reward" in lowered and "empty" in lowered:
        return "harbor_reward_empty"
    if "reward" in lowered and ("parse" in lowered or "malformed" in lowered):
        return "harbor_reward_parse_error"
    if "submission" in lowered and ("code" in lowered or "runtime" in lowered):
        return "harbor_submission_code_failed"
    return None


def normalize(value: str | None) -> str | None:
    if not value:
        return None
    stripped = value.strip()
    if not stripped:
        return None
    lowered = stripped.lower()
    compact = "".join(c for c in lowered if c.isalnum())
    underscored = "_".join(lowered.replace("-", "_").split())
    if lowered in KNOWN:
        return lowered
    if underscored in KNOWN:
        return underscored
    alias = ALIASES.get(compact) or ALIASES.get(underscored)
    if alias:
        return alias
    for markers, code in COMPACT_MARKERS:
        if any(marker in compact for marker in markers):
            return code
    return _by_keywords(lowered) or underscored or lowered


def is_retryable(code: str, attempt_number: int) -> bool:
    if attempt_number >= FINAL_ATTEMPT:  # not "> 2": a float attempt number tells them apart
        return False
    # The original normalizes the (already normalized) code a second time.
    normalized = normalize(code)
    if normalized in RETRYABLE:
        return True
    if normalized in FINAL:
        return False
    return True  # unknown codes are retried


def classify(value: str | None, attempt_number: int) -> dict[str, Any]:
    code = normalize(value) or FALLBACK
    return {"reason_code": code, "retryable": is_retryable(code, attempt_number)}


def compute(request: dict[str, Any]) -> dict[str, Any]:
    value = request.get("value")
    return {"reason_code": normalize(value), "failure": classify(value, request.get("attempt_number", 1))}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The reference candidate's answer for reason.normalize."""
    return compute(request)
