"""reason.normalize: what agent-challenge is handed as a reason: codes, exception names, messages.

Texts are built from the words the normalizer's rules look for, joined by the
separators it treats differently (runs of spaces, tabs, newlines, no-break
spaces, hyphens, underscores), in any case; with harbor's exception names
and messages, and arbitrary text. Words sometimes carry a character that
another runtime classifies differently from Python: a letter or digit
outside ASCII (``isalnum()`` is Unicode-wide), a combining mark or a symbol
(not alphanumeric), an underscore (outside the compact form), or a letter
whose ``lower()`` and ``casefold()`` differ.
Messages that decide between two readings (each keyword rule alone, two error names
in one message, an error name split by an underscore) come up one draw in four.

``code_words`` is the same vocabulary for the other way in: a reward.json's
keys and values, which pydantic's validation message quotes, so a reward
file can name nearly any code (reward.parse reads the message's code).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from hypothesis import strategies as st

from conformance.strategies.labels import composite
from conformance.strategies.picks import pick
from conformance.strategies.weights import pooled, weighted
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


def _mark(draw: st.DrawFn, word: str) -> str:
    """The word, one time in six with a character of ``MARKS`` inserted somewhere inside it."""
    if draw(ONE_IN_SIX):
        return word
    at = draw(st.integers(0, len(word)))
    return word[:at] + pick(draw, MARKS) + word[at:]


ONE_IN_SIX = st.integers(0, 5)
RARE_WORDS = WORDS + CODES[:4] + EXCEPTIONS
PADS = ["", "", " ", "\n", "\t "]
WORD_COUNT = st.integers(1, 5)
# A phrase's words, separators, marks, case and padding come from a seed it draws, not from a draw each: they
# were most of the surface's draws. The number of words is drawn, so a failing phrase still shrinks by it.
SEEDS = st.integers(0, 2**32 - 1)


def _marked_at_random(rng: random.Random, word: str) -> str:
    """The word, one time in six with a character of ``MARKS`` inserted somewhere inside it."""
    if rng.randrange(6):
        return word
    at = rng.randrange(len(word) + 1)
    return word[:at] + rng.choice(MARKS) + word[at:]


@st.composite
def phrase(draw: st.DrawFn) -> str:
    count, rng = draw(WORD_COUNT), random.Random(draw(SEEDS))
    # Three words in four are those the rules look for, so that pairs a rule needs meet often.
    words = [_marked_at_random(rng, rng.choice(PHRASE_WORDS if rng.randrange(4) else RARE_WORDS))
             for _ in range(count)]
    text = words[0]
    for word in words[1:]:
        text += rng.choice(SEPARATORS) + word
    text = rng.choice(CASES)(text)
    return rng.choice(PADS) + text + rng.choice(PADS)


# Messages that decide between two readings: each keyword rule (step 4) alone, which only the text holds
# ("connection refused" and "connection reset" lose their space in the joined and letters spellings), "missing"
# with "empty", "malformed" without "parse"; two error names in one message (the first in the rules' order
# wins); an error name split by an underscore, which only the letters spelling drops.
RULE_MESSAGES = [
    "Connection refused", "connection reset", "Connection reset by peer", "upstream connection refused: retry",
    "broker connection lost", "reward file malformed", "Reward file empty, missing verifier/reward.txt",
    "reward missing or empty", "reward file is empty", "submission runtime error", "submission code failure",
    "AgentTimeoutError after CancelledError", "EnvironmentStartTimeoutError, then AgentTimeoutError",
    "VerifierTimeoutError; AgentTimeoutError", "agent timeout error: Canceled Error",
    "raised Agent_Timeout_Error", "asyncio.exceptions.Cancelled_Error: stop", "Verifier_TimeoutError at 600 s",
]
LISTED = [case(value) for value in CODES + EXCEPTIONS + MESSAGES for case in CASES]
listed = st.sampled_from(LISTED)


@st.composite
def marked_listed(draw: st.DrawFn) -> str:
    return _mark(draw, draw(listed))


values = weighted(
    (1, st.none()),
    (1, st.sampled_from(["", "  ", "\n"])),
    (1, listed),
    (1, marked_listed()),
    (3, phrase()),
    (3, st.sampled_from([case(message) for message in RULE_MESSAGES for case in CASES])),
    (1, st.text(max_size=30)),
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


@composite
def padded(draw: st.DrawFn, words: st.SearchStrategy[str], fillers: tuple[str, ...] = ("x", " ", "-", "é"),
           most: int = 40) -> str:
    """A word between runs of filler: pydantic cuts a repr over 50 bytes to its first 25 and last 24,
    which hides a word in the middle, or joins two halves into one."""
    word = draw(words)
    filler = pick(draw, fillers)
    return filler * draw(st.integers(0, most)) + word + filler * draw(st.integers(0, most))


# A third each: a rule word, a listed code, either padded (pooled: one choice for a fixed word).
code_words = pooled(
    (len(LISTED_CODES), RULE_WORDS),
    (len(RULE_WORDS), LISTED_CODES),
    (len(RULE_WORDS) * len(LISTED_CODES), padded(st.sampled_from(RULE_WORDS + LISTED_CODES))),
)
# Under 50 characters but over 50 bytes of UTF-8: where pydantic's cut falls depends on counting bytes.
multibyte_code_words = padded(st.sampled_from(RULE_WORDS + LISTED_CODES), ("é", "键", "😀"), most=22)

reason_inputs = st.builds(lambda value, attempt: {"value": value, "attempt_number": attempt},
                          values, st.integers(1, 5))
