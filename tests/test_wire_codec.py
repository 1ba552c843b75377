"""The JSON codec under the wire: msgspec where installed, the standard library everywhere, the same bytes.

Every line the fast path writes must be the standard library's, byte for byte, and every line it reads must
give the same message (types, float bits, key order) or the same error (class, words, ``at_end``). The
standard library's path is the codec ``wire.STDLIB``: the code the oracle's virtualenv runs, where msgspec is
absent. The two are held to each other whatever the environment says: a codec is a value the caller picks.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.kit import wire
from tests.budget import examples

pytest.importorskip("msgspec")
FAST = wire.FAST
STDLIB = wire.STDLIB
pytestmark = pytest.mark.skipif(FAST is None, reason="msgspec is older than 0.19: no fast codec")


def bits(value: float) -> int:
    return int.from_bytes(struct.pack(">d", value), "big")


def canon(value: Any) -> Any:
    """A form where == means: same types, same float bits, same key order."""
    if type(value) is float:
        return ("float", bits(value))
    if type(value) is list:
        return ("list", tuple(canon(v) for v in value))
    if type(value) is dict:
        return ("dict", tuple((canon(k), canon(v)) for k, v in value.items()))
    return (type(value).__name__, value)


def read(reader: Any, line: str | bytes) -> Any:
    """What ``reader`` makes of a line: the message's canonical form, or the error it raises."""
    try:
        return canon(reader(line))
    except wire.WireError as e:
        return ("error", type(e).__name__, str(e), e.at_end)


def same_line(message: dict[str, Any]) -> str:
    fast = FAST.dumps(message)
    assert fast == STDLIB.dumps(message)
    assert FAST.dump_line(message) == STDLIB.dump_line(message) == (fast + "\n").encode("ascii")
    assert wire.dumps(message) == fast  # the module's functions: the default codec, the fast one here
    return fast


def same_reading(line: str | bytes) -> Any:
    got = read(FAST.loads, line)
    assert got == read(STDLIB.loads, line), line[:200]
    return got


# -- a corpus of awkward values -------------------------------------------------

EVERY_CHARACTER = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
SPECIAL_FLOATS = [struct.unpack(">d", b.to_bytes(8, "big"))[0] for b in (
    0x0000000000000000, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
    0xFFF8000000000000, 0x7FF0000000000001, 0x7FF4000000000000, 0x0000000000000001, 0x000FFFFFFFFFFFFF,
    0x3FB999999999999A, 0x4340000000000000)]
AWKWARD: list[Any] = [
    None, True, False, "", "plain", "\x7f", "\x00\x01\x1f\x08\x0c\n\r\t", '"\\/', "\u2028\u2029", "\ufeff1",
    "r\u00e9ward", "\U0001f600", "\ud800", "\udfff", "\ud83d\ude00", "a\ud800b\x7f\u00e9", "\\ud800",
    0, -1, 2**53 + 1, 2**63, -(2**63) - 1, 2**64, 10**300, -(10**4299), *SPECIAL_FLOATS,
    b"", bytes(range(256)), b"\xef\xbb\xbf1",
    [], [[[]]], {}, {"b": 1, "a": 2}, {2: 0.5, 1: 0.25}, {None: 1, True: 2, 0.5: 3, b"k": 4, "": 5},
    {"reward": math.nan, "n": [1, 1.0, True, "1"]},
    EVERY_CHARACTER[:0x800], EVERY_CHARACTER[0x800:0x10000], EVERY_CHARACTER[0x10000:0x20000],
    EVERY_CHARACTER[-0x1000:],
]


@pytest.mark.parametrize("value", AWKWARD, ids=lambda v: repr(v)[:40])
def test_a_wire_message_is_one_line_on_either_codec(value):
    for message in ({"cmd": "run", "seq": 7, "surface": "s\u00e9", "input": wire.encode(value)},
                    {"seq": 2**70, "output": wire.encode(value)},
                    {"cmd": "batch", "seq": 1, "items": [{"seq": 1, "surface": "x", "input": wire.encode(value)}] * 3}):
        line = same_line(message)
        assert line.isascii()
        expected = canon(json.loads(line))  # the message itself, but for a pair of surrogates: one character
        for form in (line, line.encode("ascii"), line + "\r\n"):
            assert same_reading(form) == expected
        # raw UTF-8, as a candidate may write it: the same message again
        raw = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        if "\ud800" not in raw and "\udfff" not in raw and "\ud83d" not in raw:
            assert same_reading(raw.encode("utf-8")) == expected
        back = wire.loads(line)
        for wired in [back[k] for k in ("input", "output") if k in back] + [i["input"] for i in back.get("items", [])]:
            assert canon(wire.decode(wired)) == canon(wire.decode(json.loads(json.dumps(wire.encode(value)))))


def test_the_envelope_keeps_the_standard_librarys_numbers():
    assert same_line({"cmd": "run", "seq": 1e16, "input": None}) == '{"cmd":"run","seq":1e+16,"input":null}'
    assert same_line({"cmd": "batch", "items": [{"seq": 0.1}]}) == '{"cmd":"batch","items":[{"seq":0.1}]}'
    for bad in (math.nan, math.inf):
        for message in ({"v": bad}, {"items": [{"seq": bad}]}):
            for codec in (FAST, STDLIB):
                with pytest.raises(ValueError):
                    codec.dumps(message)
                with pytest.raises(ValueError):
                    codec.dump_line(message)
    for codec in (FAST, STDLIB):
        with pytest.raises(TypeError):  # msgspec would write bytes as base64; the standard library refuses them
            codec.dumps({"v": b"x"})
        with pytest.raises(TypeError):
            codec.dumps({"v": {1, 2}})


# -- lines as a candidate may write them ------------------------------------------

AWKWARD_LINES: list[str | bytes] = [
    "", " ", "\n", "{}", "[]", "1", "-0", "1.5", "1E400", "-1e-400", "null", "true", '"x"', '{"seq":1}',
    '{"a":1,"b":2,"a":3}', '{"a":1} x', "{", '{"a":', '{"a":[1,2', "[1,]", "{,}", "NaN", "[Infinity]",
    '{"seq":-Infinity}', "00", "01", "1.", ".5", "+1", "0x10", "1_0", "-", '"\\ud800"', '"\\udc00x"',
    '"\\ud83d\\ude00"', '"\\ud83d\\u0041"', '"\\u00E9\\u00e9"', '"\\x41"', '"a\x01b"', '"a\tb"', '"\x7f"',
    '"\\/"', "\ufeff{}", "{}\ufeff", " {\"a\" : [ 1 , 2 ] } ", "{}\r\n", "\t{}\t",
    "9" * 4300, "-" + "9" * 4299, "-" + "9" * 4300, "9" * 4301, "1." + "0" * 4298, "1." + "0" * 4299,
    "1e" + "0" * 4298, "[" * 128 + "]" * 128, "[" * 129 + "]" * 129, "[" * 129, '["' + "[" * 200 + '"]',
    '{"a":' * 64 + "1" + "}" * 64, '{"a":' * 129 + "1" + "}" * 129, "[" * 5000,
    b"\xef\xbb\xbf{}", b'"\xed\xa0\x80"', b'"\xff"', b'{"a":"\xc3"}', "{}".encode("utf-16"),
    "{}".encode("utf-16-le"), "{}".encode("utf-32"), b"\x00{}", b'{"\xc3\xa9":1}', b"[" * 129 + b"\xff",
    '{"seq":1,"output":{"float":"7ff8000000000001"}}', '{"seq":1,"output":{"int":"' + "7" * 4300 + '"}}',
]


@pytest.mark.parametrize("line", AWKWARD_LINES, ids=lambda v: repr(v)[:40])
def test_a_line_reads_the_same_on_either_codec(line):
    same_reading(line)
    if isinstance(line, str):
        try:
            data = line.encode("utf-8")
        except UnicodeEncodeError:
            return
        same_reading(data)
        same_reading(bytearray(data))


def test_a_lowered_digit_limit_is_the_standard_librarys_to_apply(monkeypatch):
    if not hasattr(sys, "set_int_max_str_digits"):
        pytest.skip("no digit limit on this interpreter")
    before = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(640)
        for line in ("9" * 640, "9" * 641, "-" + "9" * 640, '{"int":"' + "9" * 700 + '"}'):
            same_reading(line)
    finally:
        sys.set_int_max_str_digits(before)


# -- generated messages and lines -------------------------------------------------

TEXT = st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)  # surrogates too
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | TEXT | st.binary(max_size=8)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.none() | st.booleans() | st.integers() | TEXT | st.binary(max_size=4), inner, max_size=4), max_leaves=20)
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | TEXT, lambda inner: st.lists(
    inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=20)


@settings(max_examples=examples(300), deadline=None)
@given(VALUES)
def test_generated_wire_values_write_and_read_alike(value):
    line = same_line({"cmd": "run", "seq": 3, "surface": "pass_at_k", "input": wire.encode(value)})
    same_reading(line)
    same_reading(line.encode())


@settings(max_examples=examples(300), deadline=None)
@given(JSON_VALUES)
def test_generated_json_messages_write_alike(value):
    same_line({"seq": 1, "value": value})


JSON_ALPHABET = st.sampled_from(list('{}[]:,"\\ -+.0123456789eEtrufalsn') + ["\u00e9", "\ud800", "\x7f", "\x01"])


@settings(max_examples=examples(500), deadline=None)
@given(st.text(JSON_ALPHABET, max_size=30) | JSON_VALUES.map(lambda v: json.dumps(v, ensure_ascii=False)))
def test_generated_lines_read_alike(line):
    same_reading(line)
    try:
        same_reading(line.encode("utf-8"))
    except UnicodeEncodeError:
        pass


# -- which codec ---------------------------------------------------------------------


def test_the_codec_is_picked_by_the_caller_and_the_environment_only_read_at_an_edge(monkeypatch):
    assert wire.DEFAULT is FAST and wire.CODEC == FAST.name and FAST.name.startswith("msgspec ")
    assert STDLIB.name == "json"
    assert wire.codec_from_environment({}) is FAST
    assert wire.codec_from_environment({"HARBOR_CONFORMANCE_JSON": " StdLib "}) is STDLIB
    assert wire.codec_from_environment({"HARBOR_CONFORMANCE_JSON": "msgspec"}) is FAST
    monkeypatch.setenv("HARBOR_CONFORMANCE_JSON", "stdlib")  # read by nothing but codec_from_environment's callers
    assert wire.DEFAULT is FAST and wire.dumps({"seq": 1}) == '{"seq":1}'


def test_a_kit_candidate_serves_on_the_codec_it_is_given_or_the_environment_names(monkeypatch):
    import io

    from conformance.kit.candidate import Candidate

    candidate = Candidate("codec-check", "1.0")
    candidate.surface("pass_at_k")(lambda request: request)
    request = wire.dumps({"cmd": "run", "seq": 1, "surface": "pass_at_k", "input": wire.encode({"a": 0.5})}) + "\n"
    used: list[str] = []
    for codec in (FAST, STDLIB):
        monkeypatch.setattr(codec, "loads", lambda line, _c=codec, _o=codec.loads: used.append(_c.name) or _o(line))
    for codec in (FAST, STDLIB):
        out = io.StringIO()
        candidate.serve(io.StringIO(request), out, codec=codec)
        assert wire.decode(json.loads(out.getvalue())["output"]) == {"a": 0.5}
    monkeypatch.setenv("HARBOR_CONFORMANCE_JSON", "stdlib")
    candidate.serve(io.StringIO(request), io.StringIO())
    assert used == [FAST.name, STDLIB.name, STDLIB.name]
