"""Lossless values on the wire.

Standard library only: the oracle adapter loads this file by path inside the
oracle's own virtualenv, where the harness and its dependencies are absent.

Every JSON object on the wire is a one-key tag, so nothing is left to a JSON
parser's idea of numbers:

    null, true, false, "text"      None, bool, str (as JSON has them)
    [v, ...]                       list
    {"int": "-12"}                 int of any size, in decimal
    {"float": "3ff0000000000000"}  float by its IEEE-754 binary64 bits (16 hex digits)
    {"bytes": "MQo="}              bytes, standard base64
    {"dict": [[k, v], ...]}        dict, in insertion order; keys are values too

Floats travel as bits so -0.0, every NaN payload, infinities and subnormals
survive any language's JSON library.

A protocol line is bounded before it is parsed: arrays and objects nest at
most ``MAX_DEPTH`` levels (every real message nests under 25), and no number
token is longer than ``MAX_NUMBER_CHARS`` characters (CPython reads no longer
integer). A line past either is refused with :class:`TooDeep` or
:class:`NumberTooLarge`, without recursion, so no parser or decoder of the
value can run out of stack on it; :func:`decode` holds a value it is given
directly (in process) to the same depth.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from typing import Any

WIRE_VERSION = 1
TAGS = ("int", "float", "bytes", "dict")
MAX_DEPTH = 128  # levels of arrays and objects in one line or value
MAX_NUMBER_CHARS = 4300  # characters of one JSON number token: CPython's int-from-text limit is 4300 digits
_INT = re.compile(r"-?[0-9]+", re.ASCII)
_BITS = re.compile(r"[0-9a-f]{16}", re.ASCII)


class WireError(ValueError):
    """A JSON value that is not a well-formed wire value.

    ``at_end``: the line is JSON cut off before its end (the parser would have gone on reading).
    """

    def __init__(self, message: str, *, at_end: bool = False) -> None:
        super().__init__(message)
        self.at_end = at_end


class TooDeep(WireError):
    """A line or value nested more than MAX_DEPTH levels deep."""


class NumberTooLarge(WireError):
    """A JSON number token longer than MAX_NUMBER_CHARS characters."""


def float_to_bits(value: float) -> int:
    bits: int = struct.unpack("<Q", struct.pack("<d", value))[0]
    return bits


def bits_to_float(bits: int) -> float:
    value: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return value


_BIG_ENDIAN_DOUBLE = struct.Struct(">d")


def float_to_hex(value: float) -> str:
    return _BIG_ENDIAN_DOUBLE.pack(value).hex()  # the bits, most significant first: 16 lowercase hex digits


def hex_to_float(text: str) -> float:
    if not _BITS.fullmatch(text):
        raise WireError(f"float bits must be 16 lowercase hex digits, got {text!r}")
    value: float = _BIG_ENDIAN_DOUBLE.unpack(bytes.fromhex(text))[0]
    return value


def encode(value: Any) -> Any:
    """Python value -> JSON-ready wire value."""
    # The exact built-in types first (the hot path: every input and output of a run passes here) ...
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is float:
        return {"float": _BIG_ENDIAN_DOUBLE.pack(value).hex()}
    if kind is list:
        return [encode(item) for item in value]
    if kind is dict:
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if kind is int and -(10**18) < value < 10**18:  # far from the 4300-digit limit below
        return {"int": str(value)}
    # ... then subclasses and the rest; bool before int: bool is a subclass of int and must stay distinct.
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        try:
            return {"int": str(int(value))}
        except ValueError:  # CPython's int/str conversion limit (4300 digits)
            raise WireError("an int of more than 4300 decimal digits has no wire form") from None
    if isinstance(value, float):
        return {"float": float_to_hex(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, (list, tuple)):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    raise WireError(f"no wire form for {type(value).__name__}")


_PLAIN = frozenset({str, bool, type(None)})  # JSON values that are their own wire form


def decode(value: Any, _depth: int = 1) -> Any:
    """JSON wire value -> Python value; raises WireError on anything malformed, TooDeep past MAX_DEPTH levels."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if _depth > MAX_DEPTH:  # a list or a tag object this deep: refused before the recursion goes on
        raise TooDeep(f"a value nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, list):
        return [item if type(item) in _PLAIN else decode(item, _depth + 1) for item in value]
    if not isinstance(value, dict):
        # Bare JSON numbers are refused: they are exactly what the tags replace.
        raise WireError(f"bare JSON number {value!r}; use an int or float tag")
    if len(value) != 1:
        raise WireError(f"a wire object has exactly one tag key, got {sorted(value)}")
    ((tag, body),) = value.items()
    if tag == "int":
        if not isinstance(body, str) or not _INT.fullmatch(body):
            raise WireError(f"int tag takes a decimal string (ASCII digits, optional '-'), got {body!r}")
        try:
            return int(body, 10)
        except ValueError:  # CPython's int/str conversion limit (4300 digits)
            raise WireError("an int of more than 4300 decimal digits has no wire form") from None
    if tag == "float":
        if not isinstance(body, str):
            raise WireError("float tag takes 16 hex digits")
        return hex_to_float(body)
    if tag == "bytes":
        if not isinstance(body, str):
            raise WireError("bytes tag takes a base64 string")
        try:
            data = base64.b64decode(body, validate=True)
        except (ValueError, binascii.Error):
            raise WireError(f"bytes tag takes a base64 string, got {body!r:.80}") from None
        if base64.b64encode(data).decode("ascii") != body:
            raise WireError(f"bytes tag takes canonical base64, got {body!r:.80}")
        return data
    if tag == "dict":
        if not isinstance(body, list):
            raise WireError("dict tag takes a list of [key, value] pairs")
        out: dict[Any, Any] = {}
        inner = _depth + 3  # the tag object, its list of pairs, a pair: the keys and values are three levels down
        if _depth + (2 if body else 1) > MAX_DEPTH:
            raise TooDeep(f"a value nested more than {MAX_DEPTH} levels deep")
        for pair in body:
            if not isinstance(pair, list) or len(pair) != 2:
                raise WireError("dict tag takes a list of [key, value] pairs")
            key = pair[0] if type(pair[0]) in _PLAIN else decode(pair[0], inner)
            try:
                duplicate = key in out
            except TypeError:
                raise WireError(f"unhashable dict key {key!r:.80}") from None
            if duplicate:  # also catches True vs 1, which a Python dict would merge
                raise WireError(f"duplicate dict key {key!r:.80}")
            out[key] = pair[1] if type(pair[1]) in _PLAIN else decode(pair[1], inner)
        return out
    raise WireError(f"unknown wire tag {tag!r}; known tags: {', '.join(TAGS)}")


def dumps(message: dict[str, Any]) -> str:
    """One protocol message as one line (no NaN tokens: floats are tags)."""
    return json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _no_constants(token: str) -> Any:
    raise WireError(f"bare JSON constant {token} is not a wire value")


def _number_token(token: str) -> None:
    if len(token) > MAX_NUMBER_CHARS:
        raise NumberTooLarge(f"a JSON number of {len(token)} characters (at most {MAX_NUMBER_CHARS}): "
                             f"{token[:20]}...")


def _int_token(token: str) -> int:
    _number_token(token)
    try:
        return int(token)
    except ValueError:  # a digit limit set lower than the default (sys.set_int_max_str_digits)
        raise NumberTooLarge(f"a JSON integer of {len(token)} digits: {token[:20]}...") from None


def _float_token(token: str) -> float:
    _number_token(token)
    return float(token)


_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"')))  # all but brackets and quotes
_STEP = tuple({ord("["): 1, ord("{"): 1}.get(byte, -1) for byte in range(256))  # +1 an opening, -1 a closing


def nesting_exceeds(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON ``text`` nests arrays and objects more than ``limit`` levels deep; read without recursion.

    Brackets inside strings do not count. On text that is not JSON the answer is an upper bound: the
    deepest a parser could get before it stopped.
    """
    if text.count("[") + text.count("{") <= limit:
        return False  # not even that many openings, in strings or out
    data = text.encode("utf-8", "surrogatepass")
    # Drop the strings. First the escapes that could hide a quote (an escaped backslash, then an escaped
    # quote: scanned left to right, as a parser pairs them); then all but brackets and quotes. Two quotes
    # side by side then enclose no bracket, or have none between them: dropping them loses no bracket outside
    # a string and keeps every later quote an opening or a closing one as it was. What is left between
    # quotes is inside strings.
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = data.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    brackets = b"".join(kept.split(b'"')[::2]) if b'"' in kept else kept
    depth = 0
    for start in range(0, len(brackets), limit):
        chunk = brackets[start:start + limit]
        opened = chunk.count(b"[") + chunk.count(b"{")
        if depth + opened > limit:  # the limit may be crossed in this chunk: step through it
            for byte in chunk:
                depth += _STEP[byte]
                if depth > limit:
                    return True
        else:
            depth += 2 * opened - len(chunk)
    return False


def loads(line: str | bytes) -> Any:
    """Parse one protocol line; NaN/Infinity tokens are refused, and so are lines past the bounds (TooDeep,
    NumberTooLarge)."""
    if isinstance(line, (bytes, bytearray)):
        try:  # as json.loads reads bytes: UTF-8 (or a BOM's UTF-16/32), encoded surrogates let through
            line = bytes(line).decode(json.detect_encoding(line), "surrogatepass")
        except UnicodeDecodeError as e:
            raise WireError(f"not a JSON line: {e}") from None
    if nesting_exceeds(line):
        raise TooDeep(f"a line nested more than {MAX_DEPTH} levels deep")
    try:
        return json.loads(line, parse_constant=_no_constants, parse_int=_int_token, parse_float=_float_token)
    except WireError:
        raise
    except json.JSONDecodeError as e:
        raise WireError(f"not a JSON line: {e}", at_end=e.pos >= len(e.doc.rstrip())) from None
    except ValueError as e:
        raise WireError(f"not a JSON line: {e}") from None
