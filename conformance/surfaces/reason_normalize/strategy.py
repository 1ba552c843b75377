"""reason.normalize: what agent-challenge is handed as a reason: codes, exception names, messages.

Texts are built from the words the normalizer's rules look for, joined by the
separators it treats differently (runs of spaces, tabs, newlines, no-break
spaces, hyphens, underscores), in any case; with harbor's exception names
and messages, and arbitrary text. Words sometimes carry a character that
another runtime classifies differently from Python: a letter or digit
outside ASCII (``isalnum()`` is Unicode-wide), a combining mark or a symbol
(not alphanumeric), an underscore (outside the compact form), or a letter
whose ``lower()`` and ``casefold()`` differ.

``code_words`` is the same vocabulary for the other way in: a reward.json's
keys and values, which pydantic's validation message quotes, so a reward
file can name nearly any code (reward.parse reads the message's code).
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from conformance.surfaces.reason_normalize import agent_challenge

CODES = [
    "harbor_broker_connection_failed", "harbor_cancelled_error", "harbor_environment_start_timeout_error",
    "terminal_bench_lease_expired", "harbor_agent_timeout_error", "harbor_reward_empty", "harbor_reward_missing",
    "harbor_reward_parse_error", "harbor_result_missing", "harbor_verifier_timeout_error", "agent_hydrate_failed",
    "agent_timeout_error", "cancellederror", "submission_code_failure", "verifiertimeouterror",
]
EXCEPTIONS = [
    "AgentTimeoutError", "VerifierTimeoutError", "EnvironmentStartTimeoutError", "AgentSetupTimeoutError",
    "CancelledError", "CanceledError", "asyncio.exceptions.CancelledError", "ConnectionResetError",
    "NonZeroAgentExitCodeError", "RewardFileNotFoundError",
    "RewardFileEmptyError", "VerifierOutputParseError", "ValidationError", "ExceptionGroup", "TimeoutError",
]
MESSAGES = [
    "No reward file found at verifier/reward.txt or verifier/reward.json",
    "Reward file is empty at verifier/reward.txt",
    "Failed to parse rewards from JSON file verifier/reward.json",
    "Connection refused", "Connection reset by peer", "[Errno 104] Connection reset by peer",
    "broker connection lost", "submission runtime error", "reward file malformed",
]
WORDS = ["reward", "missing", "empty", "parse", "malformed", "broker", "connection", "refused", "reset",
         "submission", "code", "runtime", "harbor", "agent", "timeout", "error", "cancelled", "canceled",
         "verifier", "environment", "start", "file", "at", "/jobs/x/verifier", "ok", "İ", "ＲＥＷＡＲＤ",
         "Straße", "ΟΔΟΣ", "ﬁle", "\u212aelvin"]
PHRASE_WORDS = ["reward", "missing", "empty", "parse", "malformed", "broker", "connection", "refused", "reset",
                "submission", "code", "runtime", "AgentTimeoutError", "CancelledError", "CanceledError",
                "VerifierTimeoutError", "EnvironmentStartTimeoutError"]
# Characters classified differently by other runtimes: non-ASCII digits and letters, a combining mark, a symbol,
# an underscore, letters whose lower() is not their casefold().
MARKS = ["²", "٣", "é", "Ⅻ", "\u0301", "·", "_", "ß", "ς", "ﬁ"]
SEPARATORS = [" ", " ", "_", "-", "  ", "\t", "\n", "\u00a0", "", " - "]
CASES: list[Callable[[str], str]] = [str, str.upper, str.title, str.lower]


@st.composite
def marked(draw: st.DrawFn, word: str) -> str:
    """The word, one time in six with a character of ``MARKS`` inserted somewhere inside it."""
    if draw(st.integers(0, 5)):
        return word
    at = draw(st.integers(0, len(word)))
    return word[:at] + draw(st.sampled_from(MARKS)) + word[at:]


@st.composite
def phrase(draw: st.DrawFn) -> str:
    # Three words in four are those the rules look for, so that pairs a rule needs meet often.
    vocabulary = st.integers(0, 3).flatmap(
        lambda i: st.sampled_from(PHRASE_WORDS if i else WORDS + CODES[:4] + EXCEPTIONS)).flatmap(marked)
    words = draw(st.lists(vocabulary, min_size=1, max_size=5))
    text = words[0]
    for word in words[1:]:
        text += draw(st.sampled_from(SEPARATORS)) + word
    text = draw(st.sampled_from(CASES))(text)
    pad = st.sampled_from(["", "", " ", "\n", "\t "])
    return draw(pad) + text + draw(pad)


listed = st.sampled_from(CODES + EXCEPTIONS + MESSAGES).flatmap(lambda v: st.sampled_from(CASES).map(lambda f: f(v)))
values = st.one_of(
    st.none(),
    st.sampled_from(["", "  ", "\n"]),
    listed,
    listed.flatmap(marked),
    phrase(),
    phrase(),
    st.text(max_size=30),
)
# Every code agent-challenge lists (in a fixed order: a seed draws the same inputs).
LISTED_CODES = sorted(agent_challenge.LISTED_CODES)
# Spellings that fire a rule from inside a longer text (a message), one per rule and then some: the compact
# form's error names (any separators, since only letters and digits count), the keyword pairs, and a tab
# that repr() writes as "\t", whose "t" completes "agent" + "timeout".
RULE_WORDS = [
    "CancelledError", "cancelled error", "canceled-error", "EnvironmentStartTimeoutError",
    "environment start timeout error", "AgentTimeoutError", "agent_timeout_error", "agent\timeout error",
    "VerifierTimeoutError", "verifier timeout error", "broker connection", "Broker lost its connection",
    "connection refused", "connection reset", "missing", "MISSING", "empty", "parse", "malformed",
    "submission code", "submission runtime", "harbor", "reward", "ok",
]


@st.composite
def padded(draw: st.DrawFn, words: st.SearchStrategy[str], fillers: tuple[str, ...] = ("x", " ", "-", "é"),
           most: int = 40) -> str:
    """A word between runs of filler: pydantic cuts a repr over 50 bytes to its first 25 and last 24,
    which hides a word in the middle, or joins two halves into one."""
    word = draw(words)
    filler = draw(st.sampled_from(fillers))
    return filler * draw(st.integers(0, most)) + word + filler * draw(st.integers(0, most))


code_words = st.one_of(
    st.sampled_from(RULE_WORDS),
    st.sampled_from(LISTED_CODES),
    padded(st.sampled_from(RULE_WORDS + LISTED_CODES)),
)
# Under 50 characters but over 50 bytes of UTF-8: where pydantic's cut falls depends on counting bytes.
multibyte_code_words = padded(st.sampled_from(RULE_WORDS + LISTED_CODES), ("é", "键", "😀"), most=22)

reason_inputs = st.builds(lambda value, attempt: {"value": value, "attempt_number": attempt},
                          values, st.integers(1, 5))
