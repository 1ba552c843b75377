"""Every reason code a reward error can carry is pinned by cases, and drawn by the generators.

A reward error reaches agent-challenge as its message, read by the reason-code
normalizer. harbor's own messages name a file; pydantic's ValidationError
quotes the reward.json's keys and values, so a reward file can spell nearly
any rule's words. The message always holds more than a code (the model, a
location, an error type), so no message equals a listed code: only the
substring rules can fire, and every code they give must be pinned end to end
(reward.parse, its ``reason_code``) and as a verbatim message
(reason.normalize).
"""

from __future__ import annotations

import pytest

from conformance.surfaces.reason_normalize import agent_challenge
from conformance.surfaces.reason_normalize import strategy as reasons
from conformance.surfaces.reward_parse import reference as reward_files

AGENT_CHALLENGE = agent_challenge
# The codes of the rules that look for words inside a text (the compact form's, then the keyword rules).
REACHABLE = ({code for _, code in AGENT_CHALLENGE._COMPACT_RULES}
             | {code for *_, code in AGENT_CHALLENGE._TEXT_RULES})


def test_the_reachable_codes_are_listed_ones():
    assert REACHABLE <= AGENT_CHALLENGE.LISTED_CODES
    assert len(REACHABLE) == 9, sorted(REACHABLE)


def _expected(loaded, surface: str):
    return [(c.case, c.case.expect) for c in loaded if c.case.surface == surface and c.case.expect is not None]


def test_each_code_a_reward_json_can_carry_is_pinned_twice_end_to_end(corpus):
    by_code: dict[str | None, list[str]] = {}
    for case, expect in _expected(corpus, "reward.parse"):
        if expect.raised == "ValidationError":
            by_code.setdefault(expect.reason_code, []).append(case.id)
    assert {code: ids for code, ids in by_code.items() if code in REACHABLE and len(ids) < 2} == {}
    assert REACHABLE - set(by_code) == set()
    assert set(by_code) - REACHABLE - {None} == set(), "a code no substring rule gives: the analysis above is wrong"


def test_each_code_is_pinned_as_pydantics_message_on_reason_normalize(corpus):
    codes = {expect.output["reason_code"] for case, expect in _expected(corpus, "reason.normalize")
             if isinstance(case.input.get("value"), str) and " validation error" in case.input["value"]
             and "for VerifierResult" in case.input["value"]}
    assert REACHABLE - codes == set()


@pytest.mark.parametrize("where", ["key", "nested"])
def test_the_generators_words_reach_every_code(where):
    # As a key, or inside a list: a string value would add "unable to parse", whose rule comes before the
    # submission rule.
    found = set()
    for word in reasons.RULE_WORDS + reasons.LISTED_CODES:
        rewards = {"key": {word: None}, "nested": {"reward": [word]}}[where]
        with pytest.raises(reward_files.ValidationError) as raised:
            reward_files.validate_rewards(rewards)
        found.add(AGENT_CHALLENGE.listed_reason_code(str(raised.value)))
    assert REACHABLE - found == set()
