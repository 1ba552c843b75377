"""reason.normalize: what agent-challenge is handed as a reason: codes, exception names, messages.

Texts are built from the words the normalizer's rules look for, joined by the
separators it treats differently (runs of spaces, tabs, newlines, no-break
spaces, hyphens, underscores), in any case; with harbor's exception names
and messages, and arbitrary text.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

CODES = [
    "harbor_broker_connection_failed", "harbor_cancelled_error", "harbor_environment_start_timeout_error",
    "terminal_bench_lease_expired", "harbor_agent_timeout_error", "harbor_reward_empty", "harbor_reward_missing",
    "harbor_reward_parse_error", "harbor_result_missing", "harbor_verifier_timeout_error", "agent_hydrate_failed",
    "agent_timeout_error", "cancellederror", "submission_code_failure", "verifiertimeouterror",
]
EXCEPTIONS = [
    "AgentTimeoutError", "VerifierTimeoutError", "EnvironmentStartTimeoutError", "AgentSetupTimeoutError",
    "CancelledError", "asyncio.exceptions.CancelledError", "NonZeroAgentExitCodeError", "RewardFileNotFoundError",
    "RewardFileEmptyError", "VerifierOutputParseError", "ValidationError", "ExceptionGroup", "TimeoutError",
]
MESSAGES = [
    "No reward file found at verifier/reward.txt or verifier/reward.json",
    "Reward file is empty at verifier/reward.txt",
    "Failed to parse rewards from JSON file verifier/reward.json",
    "Connection refused", "Connection reset by peer", "broker connection lost", "submission runtime error",
]
WORDS = ["reward", "missing", "empty", "parse", "malformed", "broker", "connection", "refused", "reset",
         "submission", "code", "runtime", "harbor", "agent", "timeout", "error", "cancelled", "canceled",
         "verifier", "environment", "start", "file", "at", "/jobs/x/verifier", "ok", "İ", "ＲＥＷＡＲＤ"]
SEPARATORS = [" ", " ", "_", "-", "  ", "\t", "\n", "\u00a0", "", " - "]
CASES: list[Callable[[str], str]] = [str, str.upper, str.title, str.lower]


@st.composite
def phrase(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(WORDS + CODES[:4] + EXCEPTIONS[:3]), min_size=1, max_size=5))
    text = words[0]
    for word in words[1:]:
        text += draw(st.sampled_from(SEPARATORS)) + word
    text = draw(st.sampled_from(CASES))(text)
    pad = st.sampled_from(["", "", " ", "\n", "\t "])
    return draw(pad) + text + draw(pad)


values = st.one_of(
    st.none(),
    st.sampled_from(["", "  ", "\n"]),
    st.sampled_from(CODES + EXCEPTIONS + MESSAGES).flatmap(lambda v: st.sampled_from(CASES).map(lambda f: f(v))),
    phrase(),
    phrase(),
    st.text(max_size=30),
)
reason_inputs = st.builds(lambda value, attempt: {"value": value, "attempt_number": attempt},
                          values, st.integers(1, 5))
