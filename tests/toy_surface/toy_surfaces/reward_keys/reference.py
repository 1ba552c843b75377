"""The reference's answer: a dict's keys keep their insertion order through VerifierResult."""

from typing import Any


def answer(request: dict[str, Any]) -> list[str]:
    return list(request["rewards"])
