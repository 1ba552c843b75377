"""reason.normalize: the kinds of reason text its strategy is meant to reach."""

from __future__ import annotations

from typing import Any

from conformance.core.features import Feature
from conformance.surfaces.reason_normalize.agent_challenge import LISTED_CODES

_CODES = frozenset(LISTED_CODES)


def _text(value: Any) -> str:
    text = value.get("value")
    return text if isinstance(text, str) else ""


FEATURES = (
    # Whitespace only: stripped to nothing, as no value or as a code of its own.
    Feature("blank value", "the value is empty or whitespace",
            lambda value: value.get("value") is not None and not _text(value).strip(),
            minimum={"ci": 0.01, "dev": 0.01, "explore": 0.025}),
    # A code agent-challenge lists, as it is: taken as it is, or run through the rules again.
    Feature("listed code", "the value is a listed code, in any case",
            lambda value: _text(value).strip().lower() in _CODES or _text(value).strip() in _CODES,
            minimum={"ci": 0.005, "explore": 0.02}),
    # Past 50 bytes of UTF-8 pydantic's repr is cut in the middle: a word there is hidden, or two halves join.
    Feature("over 50 bytes", "the value is longer than 50 bytes of UTF-8",
            lambda value: len(_text(value).encode("utf-8", "surrogatepass")) > 50,
            minimum={"ci": 0.033, "dev": 0.11, "explore": 0.06}),
    # Non-ASCII text: lowering, casefolding and where a byte-counted cut falls.
    Feature("non-ASCII text", "the value holds a character outside ASCII",
            lambda value: not _text(value).isascii(),
            minimum={"ci": 0.08, "dev": 0.14, "explore": 0.16}),
    # A later attempt: whether the failure is retried depends on the attempt number.
    Feature("later attempt", "attempt_number above 1",
            lambda value: value.get("attempt_number", 1) > 1,
            minimum={"ci": 0.19, "dev": 0.27, "explore": 0.3}),
)
