"""pydantic 2's lax ``dict[str, float | int]`` on JSON values, and its validation message, by hand.

Observed on harbor 0.13.1's pinned pydantic (2.14, pydantic-core 2.50):

* ints stay ints (any size), floats stay floats, bools become 0.0/1.0; null,
  lists and objects are errors;
* a string is tried as a float first, then as an int, and the first that
  parses wins (the union's "smart" mode: both are lax matches, so the first
  member does):

  - **float**: the string, trimmed of Unicode White_Space, parsed by Rust's
    ``f64`` grammar (ASCII digits, ``inf``/``infinity``/``nan`` in any case,
    a sign, ``1.``, ``.5``, an exponent; no hex, no underscores); failing
    that, the *untrimmed* string, if it holds underscores but none at either
    end and no two together, parsed again with them removed (so ``"1_0"`` is
    10.0 and ``"i_nf"`` is inf, but ``" 1_0"`` fails here);
  - **int**: the trimmed string, an optional sign, a ``.000`` fraction
    dropped, then leading zeros *and underscores* dropped up to the first
    other digit or a ``-`` (so ``"0-1"`` is -1 and ``"0__1"`` is 1), the
    remaining underscores (single, not at either end) dropped, and what is
    left read as JSON's integer grammar; more than 4300 digits fail. So
    ``" 1_0 "`` is the int 10, where ``"1_0"`` is the float 10.0;

* a string holding a lone surrogate (JSON's ``"\\ud800"``) is neither;
* every failure is listed in one ``ValidationError`` whose message quotes
  each key (its location) and each bad value (``input_value=``, Python's
  repr, cut to its first 25 and last 24 UTF-8 bytes when longer than 50).
  agent-challenge reads a reason code out of that text, so its words count:
  :func:`validation_error` writes it as pydantic does.

The character sets come from :mod:`.unicode_tables` (the oracle's, not this
interpreter's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from conformance.reference.unicode_tables import PYDANTIC_WHITESPACE, is_printable

PYDANTIC_DOCS = "https://errors.pydantic.dev/2.14/v/"
MESSAGES = {
    "dict_type": "Input should be a valid dictionary",
    "float_type": "Input should be a valid number",
    "int_type": "Input should be a valid integer",
    "float_parsing": "Input should be a valid number, unable to parse string as a number",
    "int_parsing": "Input should be a valid integer, unable to parse string as an integer",
    "int_parsing_size": "Unable to parse input string as an integer, exceeded maximum size",
    "string_unicode": "Input should be a valid string, unable to parse raw data as a unicode string",
}
MAX_INT_DIGITS = 4300
_RUST_FLOAT = re.compile(
    r"[+-]?(?:inf|infinity|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)",
    re.IGNORECASE | re.ASCII,
)
_JSON_INT = re.compile(r"-?(?:0|[1-9][0-9]*)", re.ASCII)
_LEADING_INT = re.compile(r"-?[1-9][0-9]*", re.ASCII)
_SURROGATE = re.compile("[\ud800-\udfff]")


class ValidationError(ValueError):
    """Stands for pydantic's ValidationError (compared by class name; its message read for a reason code)."""


@dataclass(frozen=True)
class ErrorDetail:
    """One line of a validation error: where, which error type, and the value found there."""

    loc: tuple[str, ...]
    type: str
    input: Any


# -- numbers in strings ------------------------------------------------------------------------

def _rust_f64(text: str) -> float | None:
    if not _RUST_FLOAT.fullmatch(text):
        return None
    # On this grammar Python's float() (of ASCII text) and Rust's parse are both correctly rounded.
    return float(text)


def _underscores_out(text: str) -> str | None:
    """pydantic-core's ``strip_underscores``: None unless it holds single underscores, none at an end."""
    if "_" not in text or text.startswith("_") or text.endswith("_") or "__" in text:
        return None
    return text.replace("_", "")


def str_as_float(text: str) -> float | None:
    value = _rust_f64(text.strip(PYDANTIC_WHITESPACE))
    if value is None:
        stripped = _underscores_out(text)  # of the untrimmed text: any whitespace left makes it fail
        value = None if stripped is None else _rust_f64(stripped)
    return value


def _leading_zeros_out(text: str) -> str | None:
    """Zeros and underscores before the first other digit, or a ``-``, dropped; None if anything else comes."""
    if text[:1] in tuple("123456789"):
        return text
    if text[:1] != "0":
        return None
    for at, char in enumerate(text):
        if char in "0_":
            continue
        return text[at:] if char in "123456789-" else None
    return "0"


def str_as_int(text: str) -> int | str:
    """The int a string parses to, or the error type (``int_parsing`` / ``int_parsing_size``)."""
    # A plain JSON integer prefix longer than the limit fails at once, on the untrimmed text.
    leading = _LEADING_INT.match(text)
    if leading and len(leading.group().lstrip("-")) > MAX_INT_DIGITS:
        return "int_parsing_size"
    body = text.strip(PYDANTIC_WHITESPACE)
    negative = body.startswith("-")
    if body[:1] in ("-", "+"):
        body = body[1:]
    point = body.find(".")
    if point >= 0 and len(body) > point + 1 and body[point + 1:].strip("0") == "":
        body = body[:point]
    if body.endswith("_"):
        return "int_parsing"
    cleaned = _leading_zeros_out(body)
    if cleaned is None:
        return "int_parsing"
    if negative:
        cleaned = "-" + cleaned
    if "_" in cleaned:
        cleaned = _underscores_out(cleaned) or "_"
    if not _JSON_INT.fullmatch(cleaned) or len(cleaned.lstrip("-")) > MAX_INT_DIGITS:
        return "int_parsing"
    return int(cleaned)


def float_or_int(value: Any, loc: tuple[str, ...]) -> tuple[int | float | None, list[ErrorDetail]]:
    """``float | int`` of one JSON value: (the value, []) or (None, its errors)."""
    if isinstance(value, bool):
        return float(value), []
    if isinstance(value, (int, float)):
        return value, []
    if isinstance(value, str):
        if _SURROGATE.search(value):
            return None, [ErrorDetail((*loc, member), "string_unicode", value) for member in ("float", "int")]
        as_float = str_as_float(value)
        if as_float is not None:
            return as_float, []
        as_int = str_as_int(value)
        if not isinstance(as_int, str):
            return as_int, []
        return None, [ErrorDetail((*loc, "float"), "float_parsing", value), ErrorDetail((*loc, "int"), as_int, value)]
    return None, [ErrorDetail((*loc, "float"), "float_type", value), ErrorDetail((*loc, "int"), "int_type", value)]


# -- the message -----------------------------------------------------------------------------

class _Raw(str):
    """Text of a repr being built, as opposed to a string value still to be quoted."""


def _str_repr(text: str) -> str:
    quote = '"' if "'" in text and '"' not in text else "'"
    out = [quote]
    for char in text:
        code = ord(char)
        if char in (quote, "\\"):
            out.append("\\" + char)
        elif char in "\t\n\r":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r"}[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x7F or is_printable(char):
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append(quote)
    return "".join(out)


def python_repr(value: Any) -> str:
    """``repr()`` of a JSON value as the oracle's Python writes it (its printable set, any depth)."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Raw):
            out.append(item)
        elif isinstance(item, str):
            out.append(_str_repr(item))
        elif isinstance(item, list):
            parts: list[Any] = [_Raw("[")]
            for at, element in enumerate(item):
                parts.extend([_Raw(", ")] * bool(at) + [element])
            stack.extend(reversed([*parts, _Raw("]")]))
        elif isinstance(item, dict):
            parts = [_Raw("{")]
            for at, (key, element) in enumerate(item.items()):
                parts.extend([_Raw(", ")] * bool(at) + [key, _Raw(": "), element])
            stack.extend(reversed([*parts, _Raw("}")]))
        else:
            out.append(repr(item))
    return "".join(out)


def _cut(text: str) -> str:
    """pydantic-core's ``input_value``: over 50 UTF-8 bytes, its first 25 and last 24, at character bounds."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= 50:
        return text
    head, tail = 25, len(data) - 24
    while head > 0 and data[head] & 0xC0 == 0x80:
        head -= 1
    while tail < len(data) and data[tail] & 0xC0 == 0x80:
        tail += 1
    return data[:head].decode("utf-8", "surrogatepass") + "..." + data[tail:].decode("utf-8", "surrogatepass")


def _loc(loc: tuple[str, ...]) -> str:
    # A key with a dot is quoted in backticks; a lone surrogate cannot leave Rust as itself.
    parts = [f"`{part}`" if "." in part else part for part in loc]
    return ".".join(parts).encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def validation_error(title: str, details: list[ErrorDetail]) -> ValidationError:
    """The ValidationError pydantic raises for ``details`` on model ``title``, with its message."""
    lines = [f"{len(details)} validation error{'s' if len(details) != 1 else ''} for {title}"]
    for detail in details:
        lines.append(_loc(detail.loc))
        lines.append(f"  {MESSAGES[detail.type]} [type={detail.type}, input_value={_cut(python_repr(detail.input))}, "
                     f"input_type={type(detail.input).__name__}]")
        lines.append(f"    For further information visit {PYDANTIC_DOCS}{detail.type}")
    return ValidationError("\n".join(lines))
