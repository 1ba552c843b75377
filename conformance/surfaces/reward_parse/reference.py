"""reward.parse: the verifier dir's reward files to a rewards dict.

What harbor 0.13.1 does, written from its observed behaviour:
reward.json wins over reward.txt; a zero-byte file is empty (no strip);
reward.txt is ``float(text)`` under the key ``"reward"``; reward.json is
``json.loads`` and then goes through a pydantic model whose values are
``float | int``, which coerces (see :mod:`.pydantic_float`).

float() reads Unicode digits and strips Unicode whitespace by the tables of
the oracle's Python (:mod:`.unicode_tables`), never this interpreter's: what
reaches float() here is ASCII.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.reference.pydantic_float import ErrorDetail, float_or_int, validation_error
from conformance.reference.pydantic_float import ValidationError as ValidationError  # raised from here
from conformance.reference.unicode_tables import float_ascii

MODEL = "VerifierResult"  # the pydantic model harbor validates rewards with; its name heads the message


class RewardFileNotFoundError(FileNotFoundError):
    pass


class RewardFileEmptyError(Exception):
    pass


class VerifierOutputParseError(Exception):
    pass


def _text(data: bytes) -> str:
    # harbor reads with Path.read_text(): UTF-8 here, universal newlines.
    text = data.decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_reward_text(data: bytes) -> dict[str, Any]:
    if len(data) == 0:
        raise RewardFileEmptyError("Reward file is empty at reward.txt")
    try:
        return {"reward": float(float_ascii(_text(data)))}
    except (ValueError, TypeError) as e:
        raise VerifierOutputParseError("Failed to parse rewards from text file reward.txt") from e


def parse_reward_json(data: bytes) -> Any:
    if len(data) == 0:
        raise RewardFileEmptyError("Reward file is empty at reward.json")
    try:
        return json.loads(_text(data))
    except (ValueError, TypeError) as e:
        raise VerifierOutputParseError("Failed to parse rewards from JSON file reward.json") from e


def validate_rewards(rewards: Any) -> dict[str, Any] | None:
    """``VerifierResult(rewards=...)``: ``dict[str, float | int] | None``."""
    if rewards is None:
        return None
    if not isinstance(rewards, dict):
        raise validation_error(MODEL, [ErrorDetail(("rewards",), "dict_type", rewards)])
    # pydantic reports every bad value in one message, and downstream reason codes read the message
    # (one "unable to parse" anywhere makes it a parse error): collect them all, as it does.
    out, errors = {}, []
    for key, value in rewards.items():
        coerced, found = float_or_int(value, ("rewards", key))
        out[key] = coerced
        errors.extend(found)
    if errors:
        raise validation_error(MODEL, errors)
    return out


def parse(verifier_dir: dict[str, Any]) -> dict[str, Any] | None:
    reward_json = verifier_dir.get("reward_json")
    reward_txt = verifier_dir.get("reward_txt")
    if reward_json is not None:
        rewards = parse_reward_json(reward_json)
    elif reward_txt is not None:
        rewards = parse_reward_text(reward_txt)
    else:
        raise RewardFileNotFoundError("No reward file found at reward.txt or reward.json")
    return validate_rewards(rewards)


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    """The reference candidate's answer for reward.parse."""
    return parse(request)
