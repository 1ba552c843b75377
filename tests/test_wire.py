"""Tests for conformance.kit.wire: the lossless JSON value codec.

Expected wire forms are computed here with struct / binascii, never taken
from the module under test.
"""

from __future__ import annotations

import binascii
import json
import math
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.kit.wire import WireError, bits_to_float, decode, dumps, encode, loads
from tests.budget import examples

# -- independent helpers -----------------------------------------------------


def bits_of(value: float) -> int:
    return int.from_bytes(struct.pack(">d", value), "big")


def float_of(bits: int) -> float:
    return struct.unpack(">d", bits.to_bytes(8, "big"))[0]


def hex_of(value: float) -> str:
    return struct.pack(">d", value).hex()


def canon(value: Any) -> Any:
    """A form where == means: same types, same float bits, same dict order."""
    if value is None:
        return ("none",)
    if type(value) is bool:
        return ("bool", value)
    if type(value) is int:
        return ("int", value)
    if type(value) is float:
        return ("float", bits_of(value))
    if type(value) is str:
        return ("str", value)
    if type(value) is bytes:
        return ("bytes", value)
    if type(value) is list:
        return ("list", tuple(canon(v) for v in value))
    if type(value) is dict:
        return ("dict", tuple((canon(k), canon(v)) for k, v in value.items()))
    raise AssertionError(f"unexpected type {type(value).__name__}")


def round_trip(value: Any) -> Any:
    line = dumps({"value": encode(value)})
    assert "\n" not in line
    return decode(loads(line)["value"])


# -- strategies ---------------------------------------------------------------

any_float = st.integers(0, 2**64 - 1).map(bits_to_float)
big_ints = st.integers(min_value=-(10**1000), max_value=10**1000)
scalars = (
    st.none()
    | st.booleans()
    | st.text()
    | st.integers()
    | big_ints
    | any_float
    | st.binary()
)
keys = st.text() | st.integers() | big_ints
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(keys, children, max_size=5),
    max_leaves=30,
)

SPECIAL_BITS = [
    0x0000000000000000,  # +0.0
    0x8000000000000000,  # -0.0
    0x0000000000000001,  # smallest subnormal
    0x8000000000000001,  # smallest negative subnormal
    0x000FFFFFFFFFFFFF,  # largest subnormal
    0x0010000000000000,  # smallest normal
    0x7FEFFFFFFFFFFFFF,  # largest finite
    0x7FF0000000000000,  # +inf
    0xFFF0000000000000,  # -inf
    0x7FF8000000000000,  # quiet NaN
    0xFFF8000000000000,  # negative quiet NaN
    0x7FF0000000000001,  # signalling NaN, payload 1
    0x7FF8000000000001,  # quiet NaN, payload 1
    0xFFFFFFFFFFFFFFFF,  # all ones NaN
    0x3FF0000000000000,  # 1.0
]


# -- round trips --------------------------------------------------------------


@settings(max_examples=examples(300))
@given(values)
def test_round_trip_nested_values(value):
    assert canon(round_trip(value)) == canon(value)


@settings(max_examples=examples(1000))
@given(st.integers(0, 2**64 - 1))
def test_every_float_bit_pattern_survives(bits):
    value = float_of(bits)
    wire = encode(value)
    assert wire == {"float": format(bits, "016x")}
    assert wire == {"float": hex_of(value)}
    back = round_trip(value)
    assert type(back) is float
    assert bits_of(back) == bits


@pytest.mark.parametrize("bits", SPECIAL_BITS, ids=lambda b: format(b, "016x"))
def test_special_float_bits_survive(bits):
    back = round_trip(float_of(bits))
    assert type(back) is float
    assert bits_of(back) == bits


def test_nan_payloads_and_signed_zero_distinct_on_the_wire():
    forms = {dumps({"v": encode(float_of(b))}) for b in SPECIAL_BITS}
    assert len(forms) == len(SPECIAL_BITS)
    assert encode(-0.0) != encode(0.0)


@given(st.integers())
def test_int_wire_form_is_decimal_string(n):
    assert encode(n) == {"int": str(n)}
    back = round_trip(n)
    assert type(back) is int and back == n


@pytest.mark.parametrize(
    "n", [0, -1, 2**63 - 1, 2**63, -(2**63) - 1, 2**64, 2**1000, -(10**4000)]
)
def test_large_ints_round_trip(n):
    back = round_trip(n)
    assert type(back) is int and back == n


@given(st.binary())
def test_bytes_wire_form_is_standard_base64(data):
    expected = binascii.b2a_base64(data, newline=False).decode("ascii")
    assert encode(data) == {"bytes": expected}
    back = round_trip(data)
    assert type(back) is bytes and back == data


def test_bytearray_and_tuple_encode_as_bytes_and_list():
    assert encode(bytearray(b"ab")) == encode(b"ab")
    assert encode((1, "x")) == encode([1, "x"])
    assert round_trip((1, 2.5)) == [1, 2.5]


def test_dict_keeps_insertion_order_and_key_types():
    value = {"b": 1, 2: "two", "a": [None, True], -(2**70): b"\x00"}
    back = round_trip(value)
    assert list(back) == ["b", 2, "a", -(2**70)]
    assert canon(back) == canon(value)
    assert encode({"a": 1}) == {"dict": [["a", {"int": "1"}]]}


def test_json_natives_pass_through():
    for v in (None, True, False, "", "text", "\u00e9\u2603\U0001f600"):
        assert encode(v) == v
        assert canon(round_trip(v)) == canon(v)


# -- bool / int / float stay distinct -----------------------------------------


def test_bool_int_float_have_distinct_wire_forms():
    wire_true, wire_one, wire_float = encode(True), encode(1), encode(1.0)
    assert wire_true is True
    assert wire_one == {"int": "1"}
    assert wire_float == {"float": struct.pack(">d", 1.0).hex()}
    assert len({json.dumps(w) for w in (wire_true, wire_one, wire_float)}) == 3
    assert encode(False) is False and encode(0) == {"int": "0"}
    assert encode(0.0) == {"float": "0" * 16}


def test_bool_int_float_decode_to_their_own_types():
    back = round_trip([True, 1, 1.0, False, 0, 0.0])
    assert [type(v) for v in back] == [bool, int, float, bool, int, float]


def test_bool_and_int_keys_stay_distinct_types():
    back = round_trip({True: "t", 2: "i", 3.5: "f"})
    assert [type(k) for k in back] == [bool, int, float]


# -- unsupported values ------------------------------------------------------


@pytest.mark.parametrize("value", [object(), {1, 2}, 1 + 2j, [1, object()], {"k": frozenset()}])
def test_encode_refuses_values_without_a_wire_form(value):
    with pytest.raises(WireError):
        encode(value)


# -- malformed wire values ---------------------------------------------------


MALFORMED = {
    "bare int": 1,
    "bare float": 1.5,
    "bare int in list": [{"int": "1"}, 2],
    "bare number in dict value": {"dict": [["a", 3]]},
    "empty object": {},
    "two keys": {"int": "1", "float": "3ff0000000000000"},
    "two keys same kind": {"int": "1", "bytes": "MQ=="},
    "unknown tag": {"complex": "1"},
    "unknown tag str": {"str": "x"},
    "int body not str": {"int": 12},
    "int body float text": {"int": "1.5"},
    "int body garbage": {"int": "abc"},
    "int body empty": {"int": ""},
    "float body not str": {"float": 1.0},
    "float 15 hex digits": {"float": "3ff000000000000"},
    "float 17 hex digits": {"float": "3ff00000000000000"},
    "float empty": {"float": ""},
    "float non-hex": {"float": "zzzzzzzzzzzzzzzz"},
    "float decimal text": {"float": "1.00000000000000"},
    "bytes not str": {"bytes": 5},
    "bytes bad alphabet": {"bytes": "!!!!"},
    "bytes bad padding": {"bytes": "MQ"},
    "bytes urlsafe alphabet": {"bytes": "-_-_"},
    "dict body not list": {"dict": {"a": 1}},
    "dict body str": {"dict": "a"},
    "dict pair too short": {"dict": [["a"]]},
    "dict pair too long": {"dict": [["a", 1, 2]]},
    "dict pair not list": {"dict": [{"a": 1}]},
    "dict pair scalar": {"dict": ["a"]},
    "dict unhashable list key": {"dict": [[[], None]]},
    "dict unhashable dict key": {"dict": [[{"dict": []}, None]]},
    "nested malformed": [[{"float": "x"}]],
}


@pytest.mark.parametrize("wire", list(MALFORMED.values()), ids=list(MALFORMED))
def test_decode_rejects_malformed(wire):
    with pytest.raises(WireError):
        decode(wire)


@pytest.mark.parametrize("wire", list(MALFORMED.values()), ids=list(MALFORMED))
def test_malformed_rejected_after_json_line(wire):
    with pytest.raises(WireError):
        decode(loads(json.dumps(wire)))


@pytest.mark.parametrize(
    "line", ["NaN", "Infinity", "-Infinity", "[1, NaN]", '{"v": Infinity}', '{"float": -Infinity}']
)
def test_loads_refuses_nan_and_infinity_tokens(line):
    with pytest.raises(WireError):
        loads(line)


@pytest.mark.parametrize("line", ["", "{", "[1,", "nul", "{'a': 1}", '{"a" 1}', b"[1,]"])
def test_loads_refuses_non_json(line):
    with pytest.raises(WireError):
        loads(line)


def test_loads_accepts_bytes_and_bare_numbers_are_refused_later():
    assert loads(b'{"a":[1,2]}') == {"a": [1, 2]}
    with pytest.raises(WireError):
        decode(loads("[1, 2]"))


def test_wire_error_is_value_error():
    assert issubclass(WireError, ValueError)


def test_dumps_is_one_compact_ascii_line():
    line = dumps({"v": encode(["\u00e9\n", 1.5])})
    assert line.isascii() and "\n" not in line and ", " not in line
    assert json.loads(line) == {"v": ["\u00e9\n", {"float": hex_of(1.5)}]}


def test_dumps_refuses_raw_nan():
    with pytest.raises(ValueError):
        dumps({"v": math.nan})
