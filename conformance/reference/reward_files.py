"""reward.parse: the verifier dir's reward files to a rewards dict.

What harbor 0.13.1 does, written from its observed behaviour:
reward.json wins over reward.txt; a zero-byte file is empty (no strip);
reward.txt is ``float(text)`` under the key ``"reward"``; reward.json is
``json.loads`` and then goes through a pydantic model whose values are
``float | int``, which coerces (see :mod:`.pydantic_float`).
"""

from __future__ import annotations

import json
from typing import Any

from conformance.reference.pydantic_float import ValidationError, coerce_float_or_int


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
        return {"reward": float(_text(data))}
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
        raise ValidationError("rewards: Input should be a valid dictionary")
    # pydantic reports every bad value in one message, and downstream reason codes read the message
    # (one "unable to parse" anywhere makes it a parse error): collect them all, as it does.
    out, errors = {}, []
    for key, value in rewards.items():
        try:
            out[key] = coerce_float_or_int(value, key)
        except ValidationError as e:
            errors.append(str(e))
    if errors:
        raise ValidationError("\n".join(errors))
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
