"""pydantic 2's lax ``float | int`` union on Python values, by hand.

Observed on the oracle's pinned pydantic: ints stay ints (any size), floats
stay floats, bools become 0.0/1.0, strings are parsed by pydantic-core's own
number parser (Unicode whitespace trimmed, Rust float grammar with ASCII
digits only, single underscores between characters allowed), anything else
is a validation error.
"""

from __future__ import annotations

import re
from typing import Any

# Characters with the Unicode White_Space property (what Rust's str::trim removes).
_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_RUST_FLOAT = re.compile(
    r"[+-]?(?:inf|infinity|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)",
    re.IGNORECASE | re.ASCII,
)


class FloatParsingError(ValueError):
    pass


class ValidationError(ValueError):
    """Stands for pydantic's ValidationError (compared by class name)."""


def _rust_parse_f64(text: str) -> float | None:
    if not _RUST_FLOAT.fullmatch(text):
        return None
    # On this grammar Python's float() and Rust's parse are both correctly rounded.
    return float(text)


def parse_str_as_float(text: str) -> float:
    stripped = text.strip(_WHITE_SPACE)
    value = _rust_parse_f64(stripped)
    if value is None and "_" in stripped:
        if not (stripped.startswith("_") or stripped.endswith("_") or "__" in stripped):
            value = _rust_parse_f64(stripped.replace("_", ""))
    if value is None:
        raise FloatParsingError(f"unable to parse string as a number: {text!r}")
    return value


def coerce_float_or_int(value: Any, key: str = "") -> int | float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return parse_str_as_float(value)
        except FloatParsingError as e:
            raise ValidationError(f"rewards.{key}: {e}") from None
    raise ValidationError(f"rewards.{key}: Input should be a valid number")
