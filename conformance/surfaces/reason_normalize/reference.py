"""reason.normalize: agent-challenge's reason code of a failure, and whether the attempt is tried again.

Written from seed 003 and the cases alone (``cases/reason.normalize/``):
the seed gives the three reward rules and five of the codes (§1.4, §5); the
rest, each spelling, each rule's order and the retry policy, is pinned by a
case, named beside the rule that it pins.

A value is read in three spellings: its ``text`` (stripped, lowercased), its
``joined`` spelling (every run of whitespace or hyphens one underscore) and
its ``letters`` (the letters and digits of the text, nothing else). The first
step that names a code gives it:

1. ``joined`` is a code agent-challenge lists;
2. ``joined`` is an alias, or ``letters`` is one run together;
3. ``letters`` holds the name of a timeout or cancellation error;
4. ``text`` holds the words of a broker, reward or submission failure;
5. otherwise the code is ``joined`` itself.
"""

from __future__ import annotations

from typing import Any

# The codes agent-challenge lists, each with whether a failure with it is tried again (before the last try).
# Seed 003 §1.4: "Valid reason-code set: terminal_bench.py:55-68 (incl. harbor_reward_empty,
# harbor_reward_missing, harbor_reward_parse_error, harbor_result_missing, harbor_result_malformed, ...)";
# it says nothing of retries. The other codes, and every flag, are pinned by the case named on the line
# (cases/reason.normalize/code_sets.yaml unless another file is named).
TRIED_AGAIN: dict[str, bool] = {
    "harbor_broker_connection_failed": True,  # retryable-broker-connection-failed
    "harbor_cancelled_error": True,  # retryable-cancelled-error
    "harbor_environment_start_timeout_error": True,  # retryable-environment-start-timeout
    "terminal_bench_broker_ref_missing": True,  # retryable-broker-ref-missing
    "terminal_bench_job_dir_missing": True,  # retryable-job-dir-missing
    "terminal_bench_lease_expired": True,  # retryable-lease-expired
    "harbor_reward_missing": False,  # seed §1.4; final-reward-missing
    "harbor_reward_empty": False,  # seed §1.4; upper-case-final
    "harbor_reward_parse_error": False,  # seed §1.4; harbor_messages.yaml message-parse-text-file
    "harbor_result_missing": False,  # seed §1.4, §5; final-result-missing
    "harbor_result_malformed": False,  # seed §1.4, §5; final-result-malformed
    "harbor_result_partial": False,  # surrounding-spaces
    "harbor_result_invalid": False,  # final-result-invalid
    "harbor_nonzero_exit": False,  # final-nonzero-exit
    "harbor_trial_failed": False,  # final-trial-failed
    "harbor_trial_result_missing": False,  # final-trial-result-missing
    "harbor_trial_result_malformed": False,  # final-trial-result-malformed
    "harbor_agent_timeout_error": False,  # aliases.yaml alias-agent-timeout-error
    "harbor_verifier_timeout_error": False,  # aliases.yaml alias-verifier-timeout-error
    "harbor_submission_code_failed": False,  # aliases.yaml alias-submission-code-failure
    "agent_hydrate_failed": False,  # final-agent-hydrate-failed
}

# Aliases by their joined spelling (seed silent; cases/reason.normalize/aliases.yaml, one case each).
_ALIASES = {
    "agent_timeout_error": "harbor_agent_timeout_error",
    "cancelled_error": "harbor_cancelled_error",
    "environment_start_timeout_error": "harbor_environment_start_timeout_error",
    "verifier_timeout_error": "harbor_verifier_timeout_error",
    "submission_code_failure": "harbor_submission_code_failed",
}
# Run together (letters only) each is an alias too (alias-agenttimeouterror, alias-cancellederror, ...), but
# for submission_code_failure (submissioncodefailure-compact: the submission words give its code anyway).
_RUN_TOGETHER = {spelling.replace("_", ""): code for spelling, code in _ALIASES.items()
                 if not spelling.startswith("submission")}

# Error names found anywhere in the letters (seed silent), the first in this order winning: a cancellation
# before all (agent-timeout-then-cancelled, name-order-environment-then-cancelled), an environment start
# timeout before the agent's and the verifier's (name-order-agent-then-environment,
# verifier-timeout-then-environment), the agent's before the verifier's (name-order-verifier-then-agent).
# Both spellings of cancelled: canceled-one-l, canceled-one-l-asyncio.
_ERROR_NAMES = {
    "cancellederror": "harbor_cancelled_error",
    "cancelederror": "harbor_cancelled_error",
    "environmentstarttimeouterror": "harbor_environment_start_timeout_error",
    "agenttimeouterror": "harbor_agent_timeout_error",
    "verifiertimeouterror": "harbor_verifier_timeout_error",
}

NO_CODE = "terminal_bench_failed"  # the policy's code of no value (seed silent; cases none, empty-string)
LAST_TRY = 3  # from this attempt on nothing is tried again (seed silent; policy.yaml policy-*-attempt-3)


def _from_words(text: str) -> str | None:
    """Step 4: words anywhere in the text (substring tests, so "reward.json" holds "reward")."""

    def has(*words: str) -> bool:
        return all(word in text for word in words)

    # Seed silent; substring_rules.yaml broker-and-connection, connection-refused, connection-reset-by-peer
    # (connection-other: "connection" alone is nothing); before the reward words: order-broker-before-reward.
    if has("broker", "connection") or has("connection refused") or has("connection reset"):
        return "harbor_broker_connection_failed"
    # Seed 003 §1.4: 'if "reward" in lowered and "missing" in lowered: → "harbor_reward_missing"', then
    # "empty", then '("parse" in lowered or "malformed")'. The seed's "malformed" is a bare (always true)
    # string; the cases read it as a word like "parse": substring_rules.yaml reward-malformed, reward-ok.
    if has("reward"):
        if has("missing"):
            return "harbor_reward_missing"
        if has("empty"):
            return "harbor_reward_empty"
        if has("parse") or has("malformed"):
            return "harbor_reward_parse_error"
    # Seed silent; substring_rules.yaml submission-code, submission-runtime, submission-alone; after the
    # reward words: rule_order.yaml reward-before-submission.
    if has("submission") and (has("code") or has("runtime")):
        return "harbor_submission_code_failed"
    return None


def _error_name_in(letters: str) -> str | None:
    """Step 3: the first error name the letters hold."""
    for name, code in _ERROR_NAMES.items():
        if name in letters:
            return code
    return None


def normalize(value: str | None) -> str | None:
    # No value, or whitespace only, is no code (seed silent; none, empty-string, whitespace-only).
    if not value:
        return None
    # Stripped and lowercased with str.lower(), not casefold() (upper-case-final, surrounding-spaces,
    # character_classes.yaml sharp-s-lowercased-not-folded, final-sigma).
    text = value.strip().lower()
    if not text:
        return None
    # Whitespace runs (any Unicode whitespace) and hyphens as one underscore (spaces-for-underscores,
    # hyphens-for-underscores, hyphens-and-space-runs, unicode.yaml no-break-space-underscored).
    joined = "_".join(text.replace("-", "_").split())
    # Letters and digits of all of Unicode (str.isalnum), nothing else (character_classes.yaml
    # non-ascii-digit-inside-error-name, combining-mark-inside-error-name, underscore-inside-error-name).
    letters = "".join(ch for ch in text if ch.isalnum())
    if joined in TRIED_AGAIN:  # step 1
        return joined
    return (_ALIASES.get(joined) or _RUN_TOGETHER.get(letters)  # step 2
            or _error_name_in(letters)  # step 3, before the words: order-compact-before-substring
            or _from_words(text)  # step 4
            or joined)  # step 5: substring_rules.yaml unlisted-text, unicode.yaml multiline-unlisted


def tried_again(code: str, attempt_number: int) -> bool:
    # The last try is never repeated (policy.yaml policy-*-attempt-3, policy-*-attempt-4).
    if attempt_number >= LAST_TRY:
        return False
    # The policy reads the code through the normalizer once more; what it does not list is tried again
    # (policy.yaml policy-unlisted-attempt-1, harbor_messages.yaml type-validation-error).
    again = normalize(code) or code
    return TRIED_AGAIN.get(again, True)


def compute(request: dict[str, Any]) -> dict[str, Any]:
    value = request.get("value")
    code = normalize(value) or NO_CODE
    return {"reason_code": normalize(value),
            "failure": {"reason_code": code, "retryable": tried_again(code, request.get("attempt_number", 1))}}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The reference candidate's answer for reason.normalize."""
    return compute(request)
