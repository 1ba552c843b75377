"""Lossless values on the wire.

Standard library only: the oracle adapter loads this file by path inside the
oracle's own virtualenv, where the harness and its dependencies are absent.
Where msgspec is installed (the harness's optional ``fast`` extra) it reads
and writes the JSON text, giving the same bytes and the same values, errors
included, as the standard library (tests/test_wire_codec.py holds them to
it). Which one is a value the caller picks (:class:`Codec`: :data:`STDLIB`,
:data:`FAST`); :func:`dumps`, :func:`dump_line` and :func:`loads` use
:data:`DEFAULT`, the fast one where msgspec is importable. Nothing here reads
the environment: an edge that honours ``HARBOR_CONFORMANCE_JSON=stdlib``
turns it into a codec with :func:`codec_from_environment`.

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
import codecs
import gc
import importlib
import json
import re
import struct
import sys
import threading
from collections.abc import Mapping
from json.encoder import encode_basestring_ascii
from typing import Any


def _optional(name: str) -> Any:
    """A module that may be missing (None then): the kit runs where only the standard library is."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _fast_codec() -> Any:
    """msgspec, if installed at 0.19 or later (before it, some ints past 64 bits were read wrong)."""
    module = _optional("msgspec")
    try:
        release = tuple(int(part) for part in module.__version__.split(".")[:2])
    except (AttributeError, ValueError):
        return None
    return module if release >= (0, 19) else None


msgspec = _fast_codec()

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


class _GcPaused:
    """While any thread is inside, the cyclic garbage collector does not run.

    Coding a value makes thousands of lists and dicts at once (a batch line: hundreds of thousands). Each of
    them counts toward the collector's next pass, and each pass walks every container still alive, the half-made
    value included: on a batch that is most of the cost. The values are trees, with no cycle to collect, so the
    collector waits until the outermost coding is done; then it runs as before. Counted, so threads coding at
    once (a runner asking oracle and candidate together) leave it as they found it: the last pause to end turns
    the collector back on, whichever thread began first, and only if it was on before the first began.

    Measured again (2 cores, msgspec 0.22, Python 3.11): a 256-input pass_at_k batch coded both ways (encoded,
    written, read, decoded, its outputs encoded, written, read, decoded; 2.7 MB of lines) takes 172 ms a batch
    paused, 314 ms with only each value's own coding paused, 456 ms never paused; with a million more objects
    alive, 158 ms against 372 ms. It still pays, around every loop that codes a batch too.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inside = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._lock:
            if self._inside == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._inside += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._inside -= 1
            if self._inside == 0 and self._was_enabled:
                gc.enable()


gc_paused = _GcPaused()


_pack_double = _BIG_ENDIAN_DOUBLE.pack


def encode(value: Any) -> Any:
    """Python value -> JSON-ready wire value."""
    kind = type(value)
    if kind is not dict and kind is not list:  # no container of its own: nothing for the collector
        return _encode(value)
    with gc_paused:
        return _encode(value)


def _encode(value: Any) -> Any:
    # The exact built-in types first (the hot path: every input and output of a run passes here), a str inside a
    # list or dict, the most common value, taken as it is without a call ...
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is dict:
        return {"dict": [[k if type(k) is str else _encode(k), v if type(v) is str else _encode(v)]
                         for k, v in value.items()]}
    if kind is list:
        return [item if type(item) is str else _encode(item) for item in value]
    if kind is float:
        return {"float": _pack_double(value).hex()}
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
        return [_encode(item) for item in value]
    if isinstance(value, dict):
        return {"dict": [[_encode(k), _encode(v)] for k, v in value.items()]}
    raise WireError(f"no wire form for {type(value).__name__}")


_PLAIN = frozenset({str, bool, type(None)})  # JSON values that are their own wire form

# Tag bodies already read, and what they read as: a run's floats and ints repeat (0.0, 1.0, a trial count), and a
# dict lookup costs less than checking and converting the text again. Never a NaN: each NaN read stays an object
# of its own (two NaN keys of one dict are two keys, as Python has them). Each memo starts afresh once full.
_FLOATS: dict[str, float] = {}
_INTS: dict[str, int] = {}
_MEMO_SIZE = 4096


def decode(value: Any, _depth: int = 1) -> Any:
    """JSON wire value -> Python value; raises WireError on anything malformed, TooDeep past MAX_DEPTH levels."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is not list and (kind is not dict or "dict" not in value):  # a scalar's tag: no container to make
        return _decode_fast(value, _depth)
    with gc_paused:
        return _decode_fast(value, _depth)


def _decode_fast(value: Any, _depth: int) -> Any:
    # The common shapes first, on a fast path that only ever returns what the checked one (_decode) would: on
    # anything unusual (a subclass, a malformed tag, a duplicate or unhashable key, the depth limit) it hands
    # the value to _decode, which says what is wrong in the same words as always.
    kind = type(value)
    if kind in _PLAIN:
        return value
    if _depth > MAX_DEPTH:
        return _decode(value, _depth)
    if kind is list:
        inner = _depth + 1
        return [item if type(item) in _PLAIN else _decode_fast(item, inner) for item in value]
    if kind is not dict or len(value) != 1:
        return _decode(value, _depth)
    if "dict" in value:
        body = value["dict"]
        if type(body) is list and _depth + 2 <= MAX_DEPTH:
            inner = _depth + 3  # the tag object, its list of pairs, a pair: the keys and values are three levels down
            out: dict[Any, Any] = {}
            try:
                for pair in body:
                    if type(pair) is not list or len(pair) != 2:
                        break
                    key, item = pair
                    out[key if type(key) in _PLAIN else _decode_fast(key, inner)] = (
                        item if type(item) in _PLAIN else _decode_fast(item, inner))
                else:
                    if len(out) == len(body):  # else a key repeats (True and 1 included)
                        return out
            except (WireError, TypeError):  # the checked path finds which pair comes first, and why
                pass
    elif "float" in value:
        body = value["float"]
        if type(body) is str:
            known = _FLOATS.get(body)
            if known is not None:
                return known
            number = _decode(value, _depth)
            if number == number:  # not a NaN
                if len(_FLOATS) >= _MEMO_SIZE:
                    _FLOATS.clear()
                _FLOATS[body] = number
            return number
    elif "int" in value:
        body = value["int"]
        if type(body) is str:
            known_int = _INTS.get(body)
            if known_int is not None:
                return known_int
            integer = _decode(value, _depth)
            if len(body) < 20:  # a short text only: a memo of long ones would hold much for little
                if len(_INTS) >= _MEMO_SIZE:
                    _INTS.clear()
                _INTS[body] = integer
            return integer
    return _decode(value, _depth)


def _shown(value: Any) -> str:
    """``repr(value)``, or what it is when it has none (an in-process int past the 4300-digit limit)."""
    try:
        return repr(value)
    except ValueError:
        return f"<an {type(value).__name__} of more than 4300 digits>"


def _decode(value: Any, _depth: int) -> Any:
    """:func:`decode` one step at a time, every rule checked in order: what says what is wrong with a value."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if _depth > MAX_DEPTH:  # a list or a tag object this deep: refused before the recursion goes on
        raise TooDeep(f"a value nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, list):
        return [item if type(item) in _PLAIN else _decode_fast(item, _depth + 1) for item in value]
    if not isinstance(value, dict):
        # Bare JSON numbers are refused: they are exactly what the tags replace.
        raise WireError(f"bare JSON number {_shown(value)}; use an int or float tag")
    if len(value) != 1:
        raise WireError(f"a wire object has exactly one tag key, got {sorted(value)}")
    ((tag, body),) = value.items()
    if tag == "int":
        if not isinstance(body, str) or not _INT.fullmatch(body):
            raise WireError(f"int tag takes a decimal string (ASCII digits, optional '-'), got {_shown(body)}")
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
            key = pair[0] if type(pair[0]) in _PLAIN else _decode_fast(pair[0], inner)
            try:
                duplicate = key in out
            except TypeError:
                raise WireError(f"unhashable dict key {key!r:.80}") from None
            if duplicate:  # also catches True vs 1, which a Python dict would merge
                raise WireError(f"duplicate dict key {key!r:.80}")
            out[key] = pair[1] if type(pair[1]) in _PLAIN else _decode_fast(pair[1], inner)
        return out
    raise WireError(f"unknown wire tag {tag!r}; known tags: {', '.join(TAGS)}")


# -- the JSON text --------------------------------------------------------------
#
# msgspec, in the codec that has it, reads and writes the text; the standard library in the other,
# and wherever msgspec refuses something (a lone surrogate, malformed JSON, a number past its range), so that the
# answer, or the error, is always the standard library's.

_ESCAPES = "conformance-kit-json-ascii"


def _json_ascii(error: UnicodeError) -> tuple[str, int]:
    """A codec error handler: each run of non-ASCII characters as the standard library's ensure_ascii writes it
    (lowercase \\u escapes, a surrogate pair for a character beyond the BMP)."""
    assert isinstance(error, UnicodeEncodeError)
    return encode_basestring_ascii(error.object[error.start:error.end])[1:-1], error.end


codecs.register_error(_ESCAPES, _json_ascii)


def _dumps_stdlib(message: Any) -> str:
    return json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


_JSON_FIELDS = frozenset({str, int, bool, type(None), list, dict})


def _envelope_is_json(message: dict[str, Any]) -> bool:
    """Whether a message's own fields (and those of each batch item or reply in a list field) are of JSON's types
    other than float: a float, or a type JSON has not (bytes, a set), is for the standard library to write or
    refuse."""
    for field in message.values():
        kind = type(field)
        if kind not in _JSON_FIELDS:
            return False
        if kind is list:
            for item in field:
                if type(item) is dict and not all(type(v) in _JSON_FIELDS for v in item.values()):
                    return False
    return True


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


def nesting_exceeds(text: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON ``text`` nests arrays and objects more than ``limit`` levels deep; read without recursion.

    Brackets inside strings do not count. On text that is not JSON the answer is an upper bound: the
    deepest a parser could get before it stopped.
    """
    if len(text) <= limit:
        return False  # not even that many characters
    if isinstance(text, str):
        if text.count("[") + text.count("{") <= limit:
            return False  # not even that many openings, in strings or out
        data = text.encode("utf-8", "surrogatepass")
    else:
        data = text if type(text) is bytes else bytes(text)
        if data.count(b"[") + data.count(b"{") <= limit:
            return False
    # Drop the strings. First the escapes that could hide a quote (an escaped backslash, then an escaped
    # quote: scanned left to right, as a parser pairs them); then all but brackets and quotes. Two quotes
    # side by side then enclose no bracket, or have none between them: dropping them loses no bracket outside
    # a string and keeps every later quote an opening or a closing one as it was. What is left between
    # quotes is inside strings.
    if b"\\\\" in data:
        data = data.replace(b"\\\\", b"")
    if b'\\"' in data:
        data = data.replace(b'\\"', b"")
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


_int_digits = getattr(sys, "get_int_max_str_digits", lambda: 0)


class Codec:
    """The JSON text of protocol lines: the standard library's (``fast`` None), or msgspec's with the standard
    library's bytes, values and errors.

    A process picks one and passes it where lines are written and read; both give the same lines and the same
    messages, so the choice only ever changes how long coding takes.
    """

    def __init__(self, fast: Any = None) -> None:
        self.name = "json" if fast is None else f"msgspec {fast.__version__}"
        self._encode_json = None if fast is None else fast.json.Encoder().encode
        self._decode_json = None if fast is None else fast.json.Decoder(float_hook=_float_token).decode

    def __repr__(self) -> str:
        return f"Codec({self.name})"

    def _fast_line(self, message: dict[str, Any]) -> bytes | None:
        """The ASCII line msgspec writes for ``message``, escaped as the standard library would; None where only
        the standard library can say (what msgspec refuses, and floats)."""
        assert self._encode_json is not None
        try:
            data: bytes = self._encode_json(message)
        except (TypeError, ValueError):  # a lone surrogate, a type JSON has not: written or refused by the stdlib
            return None
        if not data.isascii():
            data = data.decode("utf-8").encode("ascii", _ESCAPES)
        if b"\x7f" in data:  # ASCII, yet escaped by ensure_ascii; raw, it can only be inside a string
            data = data.replace(b"\x7f", b"\\u007f")
        return data if _envelope_is_json(message) else None

    def dumps(self, message: dict[str, Any]) -> str:
        """One protocol message as one line of ASCII (no NaN tokens: floats are tags).

        A message holds JSON's own values (dicts with str keys, lists, str, int, bool, None): its own fields
        ints and strings, every value a wire value. The line is then the same on either codec, byte for byte. A
        float, or bytes, is no part of one: in a field it is written (or refused) by the standard library;
        deeper, inside what should be a wire value, msgspec would write NaN as null (bytes as base64) where the
        standard library refuses it.
        """
        if self._encode_json is not None and (data := self._fast_line(message)) is not None:
            return data.decode("ascii")
        return _dumps_stdlib(message)

    def dump_line(self, message: dict[str, Any]) -> bytes:
        """:meth:`dumps` as the bytes a pipe takes, its newline included."""
        if self._encode_json is not None and (data := self._fast_line(message)) is not None:
            return data + b"\n"
        return (_dumps_stdlib(message) + "\n").encode("ascii")

    def loads(self, line: str | bytes) -> Any:
        """Parse one protocol line; NaN/Infinity tokens are refused, and so are lines past the bounds (TooDeep,
        NumberTooLarge)."""
        with gc_paused:
            # msgspec takes well-formed UTF-8 JSON within the bounds, its floats read by _float_token, its ints to
            # 4300 digits as CPython's int() (while the interpreter's digit limit is the default); a line it
            # refuses is read again by the standard library, which gives the error. The depth is checked first.
            if self._decode_json is not None and _int_digits() in (0, 4300) and not nesting_exceeds(line):
                try:
                    return self._decode_json(line)
                except Exception:  # whatever it refuses, the standard library reads again and says why
                    pass
            return _loads_stdlib(line)


STDLIB = Codec()
FAST: Codec | None = None if msgspec is None else Codec(msgspec)  # None where msgspec is not importable
DEFAULT = FAST if FAST is not None else STDLIB
CODEC = DEFAULT.name  # the default codec's name (a benchmark's record of the machine)
ENVIRONMENT_VARIABLE = "HARBOR_CONFORMANCE_JSON"


def codec_from_environment(environ: Mapping[str, str]) -> Codec:
    """The codec ``HARBOR_CONFORMANCE_JSON`` in ``environ`` asks for: the standard library's for ``stdlib``, else
    :data:`DEFAULT`. For an edge (a program's entry point) to call; the kit itself never reads the environment."""
    return STDLIB if environ.get(ENVIRONMENT_VARIABLE, "").strip().lower() == "stdlib" else DEFAULT


def dumps(message: dict[str, Any]) -> str:
    """:meth:`Codec.dumps` on :data:`DEFAULT`."""
    return DEFAULT.dumps(message)


def dump_line(message: dict[str, Any]) -> bytes:
    """:meth:`Codec.dump_line` on :data:`DEFAULT`."""
    return DEFAULT.dump_line(message)


def loads(line: str | bytes) -> Any:
    """:meth:`Codec.loads` on :data:`DEFAULT`."""
    return DEFAULT.loads(line)


def _loads_stdlib(line: str | bytes) -> Any:
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
