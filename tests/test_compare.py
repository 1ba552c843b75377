"""Tests for conformance.core.compare: the bit-exact comparator.

Float classes and ULP distances are computed here from the IEEE-754 bit
fields (and by stepping with math.nextafter), independently of the module.
"""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.core.compare import (
    POLICIES,
    Mismatch,
    MismatchClass,
    NanPolicy,
    Result,
    classify_floats,
    compare,
    compare_values,
)
from tests.budget import examples

SIGN = 1 << 63
EXP_MASK = 0x7FF0_0000_0000_0000
MANT_MASK = (1 << 52) - 1
U64 = 2**64


# -- independent float model ----------------------------------------------------


def float_of(bits: int) -> float:
    return struct.unpack(">d", bits.to_bytes(8, "big"))[0]


def bits_of(value: float) -> int:
    return int.from_bytes(struct.pack(">d", value), "big")


def is_nan(bits: int) -> bool:
    return bits & EXP_MASK == EXP_MASK and bits & MANT_MASK != 0


def is_inf(bits: int) -> bool:
    return bits & EXP_MASK == EXP_MASK and bits & MANT_MASK == 0


def is_zero(bits: int) -> bool:
    return bits & ~SIGN == 0


def expected_class(e: int, a: int, policy: NanPolicy) -> MismatchClass | None:
    if e == a:
        return None
    if is_nan(e) and is_nan(a):
        return None if policy is NanPolicy.ANY else MismatchClass.NAN_PAYLOAD
    if is_nan(e) or is_nan(a):
        return MismatchClass.NAN_VS_NUMBER
    if is_inf(e) and is_inf(a):
        return MismatchClass.INF_SIGN
    if is_inf(e) or is_inf(a):
        return MismatchClass.INF_VS_FINITE
    if is_zero(e) and is_zero(a):
        return MismatchClass.SIGN_OF_ZERO
    return MismatchClass.ULP


def lexical_rank(bits: int) -> int:
    """Position on the number line counted in representable doubles; +0 and -0 share 0."""
    magnitude = bits & ~SIGN
    return -magnitude if bits & SIGN else magnitude


def ulps_between(e: int, a: int) -> int:
    return abs(lexical_rank(e) - lexical_rank(a))


def nextafter_steps(start: float, stop: float, limit: int) -> int | None:
    """How many math.nextafter steps lead from start to stop (None past limit)."""
    x, steps = start, 0
    while x != stop:
        if steps >= limit:
            return None
        x = math.nextafter(x, stop)
        steps += 1
    return steps


# -- strategies ------------------------------------------------------------------

SPECIAL_BITS = [
    0x0000000000000000, 0x8000000000000000,  # ±0
    0x0000000000000001, 0x8000000000000001,  # ±smallest subnormal
    0x000FFFFFFFFFFFFF, 0x800FFFFFFFFFFFFF,  # ±largest subnormal
    0x0010000000000000, 0x8010000000000000,  # ±smallest normal
    0x3FF0000000000000, 0xBFF0000000000000,  # ±1
    0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,  # ±max finite
    0x7FF0000000000000, 0xFFF0000000000000,  # ±inf
    0x7FF8000000000000, 0xFFF8000000000000,  # ±quiet NaN
    0x7FF0000000000001, 0xFFF0000000000001,  # ±signalling NaN
    0x7FF8000000000001, 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,  # payloads
]

any_bits = st.integers(0, U64 - 1)
bits = any_bits | st.sampled_from(SPECIAL_BITS)
nearby_pairs = bits.flatmap(
    lambda b: st.tuples(st.just(b), st.integers(-300, 300).map(lambda d: (b + d) % U64))
)
sign_flipped = bits.map(lambda b: (b, b ^ SIGN))
nan_pairs = st.tuples(
    st.integers(0, 1), st.integers(1, MANT_MASK), st.integers(0, 1), st.integers(1, MANT_MASK)
).map(lambda t: ((t[0] << 63) | EXP_MASK | t[1], (t[2] << 63) | EXP_MASK | t[3]))
pairs = st.tuples(bits, bits) | nearby_pairs | sign_flipped | nan_pairs
policies = st.sampled_from([POLICIES.get("any-nan-equal"), POLICIES.get("bitwise")])


def check_float_mismatch(m: Mismatch, e: int, a: int, cls: MismatchClass, path: str) -> None:
    assert m.cls is cls
    assert m.path == path
    assert m.expected_bits == format(e, "016x")
    assert m.actual_bits == format(a, "016x")
    assert len(m.expected_bits) == 16 and len(m.actual_bits) == 16
    assert m.expected == repr(float_of(e)) and m.actual == repr(float_of(a))
    if cls is MismatchClass.ULP:
        assert m.ulps == ulps_between(e, a)
        assert m.ulps > 0
    else:
        assert m.ulps is None


# -- floats over all bit patterns ------------------------------------------------------


@settings(max_examples=examples(500))
@given(bits, policies)
def test_identical_bits_never_mismatch(b, policy):
    x = float_of(b)
    y = float_of(b)  # a distinct object with the same bits
    assert classify_floats(x, y, policy) is None
    assert compare_values(x, y, policy) == []
    assert compare_values([x, {"k": x}], [y, {"k": y}], policy) == []
    assert compare(Result.of_value(x), Result.of_value(y), policy) == []


@settings(max_examples=examples(1500))
@given(pairs, policies)
def test_classify_floats_matches_bit_field_model(pair, policy):
    e, a = pair
    assert classify_floats(float_of(e), float_of(a), policy) == expected_class(e, a, policy)


@settings(max_examples=examples(600))
@given(pairs, policies)
def test_top_level_float_mismatch(pair, policy):
    e, a = pair
    cls = expected_class(e, a, policy)
    out = compare_values(float_of(e), float_of(a), policy)
    if cls is None:
        assert out == []
    else:
        assert len(out) == 1
        check_float_mismatch(out[0], e, a, cls, "$")


@settings(max_examples=examples(300))
@given(pairs, policies)
def test_nested_float_mismatch(pair, policy):
    e, a = pair
    cls = expected_class(e, a, policy)
    expected = {"a": [1.0, float_of(e)], "b": "x"}
    actual = {"a": [1.0, float_of(a)], "b": "x"}
    out = compare_values(expected, actual, policy)
    if cls is None:
        assert out == []
    else:
        assert len(out) == 1
        check_float_mismatch(out[0], e, a, cls, "$['a'][1]")


@settings(max_examples=examples(500))
@given(nearby_pairs)
def test_ulps_agree_with_nextafter_steps(pair):
    e, a = pair
    if expected_class(e, a, NanPolicy.BITWISE) is not MismatchClass.ULP:
        return
    out = compare_values(float_of(e), float_of(a), NanPolicy.BITWISE)
    assert len(out) == 1 and out[0].cls is MismatchClass.ULP
    steps = nextafter_steps(float_of(e), float_of(a), limit=1000)
    if steps is not None:
        assert out[0].ulps == steps
    else:
        assert out[0].ulps > 1000


@pytest.mark.parametrize(
    ("e", "a", "ulps"),
    [
        (1.0, math.nextafter(1.0, 2.0), 1),
        (1.0, math.nextafter(1.0, 0.0), 1),
        (0.1 + 0.2, 0.3, 1),
        (5e-324, -5e-324, 2),  # through the single zero point
        (0.0, 5e-324, 1),
        (-0.0, 5e-324, 1),
        (1.0, 1.0 + 4 * 2.0**-52, 4),
        (2.0, math.nextafter(math.nextafter(2.0, 0.0), 0.0), 2),
    ],
)
def test_ulp_examples(e, a, ulps):
    (m,) = compare_values(e, a)
    assert m.cls is MismatchClass.ULP
    assert m.ulps == ulps
    assert nextafter_steps(e, a, limit=10) == ulps


@pytest.mark.parametrize(
    ("e", "a", "cls"),
    [
        (0.0, -0.0, MismatchClass.SIGN_OF_ZERO),
        (-0.0, 0.0, MismatchClass.SIGN_OF_ZERO),
        (math.nan, 0.0, MismatchClass.NAN_VS_NUMBER),
        (1.0, math.nan, MismatchClass.NAN_VS_NUMBER),
        (math.inf, math.nan, MismatchClass.NAN_VS_NUMBER),
        (math.inf, -math.inf, MismatchClass.INF_SIGN),
        (math.inf, 1e308, MismatchClass.INF_VS_FINITE),
        (0.0, -math.inf, MismatchClass.INF_VS_FINITE),
        (1.0, 1.5, MismatchClass.ULP),
        (1.0, -1.0, MismatchClass.ULP),
        (0.0, 5e-324, MismatchClass.ULP),
    ],
)
def test_float_class_examples(e, a, cls):
    (m,) = compare_values(e, a)
    assert m.cls is cls
    assert m.expected_bits == struct.pack(">d", e).hex()
    assert m.actual_bits == struct.pack(">d", a).hex()


def test_nan_payload_depends_on_policy():
    quiet = float_of(0x7FF8000000000000)
    payload = float_of(0x7FF8000000000001)
    negative = float_of(0xFFF8000000000000)
    for other in (payload, negative):
        assert compare_values(quiet, other, NanPolicy.ANY) == []
        (m,) = compare_values(quiet, other, NanPolicy.BITWISE)
        assert m.cls is MismatchClass.NAN_PAYLOAD
        assert m.expected_bits == "7ff8000000000000"
        assert m.actual_bits == format(bits_of(other), "016x")
        assert m.ulps is None
    assert compare_values([quiet], [negative], NanPolicy.ANY) == []
    assert compare_values({"k": quiet}, {"k": payload}, NanPolicy.ANY) == []


def test_default_policy_is_any_nan_equal():
    assert compare_values(float_of(0x7FF8000000000000), float_of(0xFFF8000000000001)) == []


def test_mismatch_to_json_drops_absent_fields():
    (m,) = compare_values(1.0, 1.5)
    data = m.to_json()
    assert data["cls"] == "ulp"
    assert data["path"] == "$"
    assert data["ulps"] == 2**51
    assert data["expected_bits"] == "3ff0000000000000"
    assert data["actual_bits"] == "3ff8000000000000"
    (m,) = compare_values("a", "b")
    assert set(m.to_json()) == {"cls", "path", "expected", "actual"}


# -- non-float classes -----------------------------------------------------------------


def only(expected, actual, policy=NanPolicy.ANY) -> Mismatch:
    out = compare_values(expected, actual, policy)
    assert len(out) == 1, out
    return out[0]


@pytest.mark.parametrize(
    ("e", "a"),
    [
        (1, 1.0),
        (1.0, 1),
        (True, 1),
        (1, True),
        (False, 0.0),
        (None, {}),
        ({}, []),
        ("1", 1),
        (b"1", "1"),
        (None, 0),
    ],
)
def test_type_mismatch(e, a):
    m = only(e, a)
    assert m.cls is MismatchClass.TYPE
    assert m.path == "$"
    assert m.expected == repr(e) and m.actual == repr(a)


def test_type_mismatch_nested():
    m = only({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2.0}]})
    assert m.cls is MismatchClass.TYPE
    assert m.path == "$['a'][1]['b']"


def test_value_mismatch_str_int_bytes():
    m = only("abc", "abd")
    assert (m.cls, m.path, m.expected, m.actual) == (MismatchClass.VALUE, "$", "'abc'", "'abd'")
    assert only(1, 2).cls is MismatchClass.VALUE
    assert only(b"\x00", b"\x01").cls is MismatchClass.VALUE
    assert only(True, False).cls is MismatchClass.VALUE


def test_missing_key():
    m = only({"a": 1, "b": 2}, {"a": 1})
    assert (m.cls, m.path, m.actual) == (MismatchClass.MISSING_KEY, "$['b']", "<absent>")
    assert m.expected == "2"


def test_extra_key():
    m = only({"a": 1}, {"a": 1, "z": [1.5]})
    assert (m.cls, m.path, m.expected) == (MismatchClass.EXTRA_KEY, "$['z']", "<absent>")
    assert m.actual == "[1.5]"


def test_int_keys_in_path():
    m = only({1: {"k": 1.0}}, {1: {}})
    assert m.cls is MismatchClass.MISSING_KEY
    assert m.path == "$[1]['k']"


def test_key_order():
    m = only({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert (m.cls, m.path) == (MismatchClass.KEY_ORDER, "$")
    assert m.expected == repr(["a", "b"]) and m.actual == repr(["b", "a"])


def test_key_order_nested():
    m = only({"x": [{"a": 1, "b": 2}]}, {"x": [{"b": 2, "a": 1}]})
    assert (m.cls, m.path) == (MismatchClass.KEY_ORDER, "$['x'][0]")


def test_length_reported_once_per_list():
    m = only([1, 2], [1, 2, 3, 4])
    assert (m.cls, m.path, m.expected, m.actual) == (MismatchClass.LENGTH, "$", "2 items", "4 items")
    m = only({"a": [1.0, 2.0, 3.0]}, {"a": [1.0]})
    assert (m.cls, m.path, m.expected, m.actual) == (MismatchClass.LENGTH, "$['a']", "3 items", "1 items")


def test_several_mismatches_sorted_by_path():
    out = compare_values({"a": 1.0, "b": "x", "c": 1}, {"a": -1.0, "b": "y", "c": 1.0})
    assert [(m.path, m.cls) for m in out] == [
        ("$['a']", MismatchClass.ULP),
        ("$['b']", MismatchClass.VALUE),
        ("$['c']", MismatchClass.TYPE),
    ]


def test_equal_structures_conform():
    value = {"r": [1, 2.5, None, True, "s", b"b", {"n": -0.0}], "z": {}}
    copy = {"r": [1, 2.5, None, True, "s", b"b", {"n": -0.0}], "z": {}}
    assert compare_values(value, copy) == []
    assert compare(Result.of_value(value), Result.of_value(copy)) == []


# -- raised results ------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, 0, 0.0, {}, "RewardFileEmptyError"])
def test_error_vs_value(value):
    (m,) = compare(Result.of_raised("ValueError"), Result.of_value(value))
    assert (m.cls, m.path, m.expected) == (MismatchClass.ERROR_VS_VALUE, "$", "raised ValueError")
    assert m.actual == repr(value)
    (m,) = compare(Result.of_value(value), Result.of_raised("ValueError"))
    assert (m.cls, m.path, m.actual) == (MismatchClass.ERROR_VS_VALUE, "$", "raised ValueError")
    assert m.expected == repr(value)


def test_error_type():
    (m,) = compare(Result.of_raised("ValueError"), Result.of_raised("KeyError"))
    assert (m.cls, m.path, m.expected, m.actual) == (
        MismatchClass.ERROR_TYPE, "$", "ValueError", "KeyError",
    )


@given(st.text(min_size=1), st.text(), st.text())
def test_same_raised_class_conforms_whatever_the_messages(name, msg1, msg2):
    # A raised result is compared by class name only; whatever else rides along
    # (here a message in the value slot) is never compared.
    assert compare(Result.of_raised(name), Result.of_raised(name)) == []
    assert compare(Result(value=msg1, raised=name), Result(value=msg2, raised=name)) == []
    assert Result.of_raised(name) == Result(raised=name)


def test_dict_keys_equal_in_python_but_of_another_type_are_a_type_mismatch():
    from conformance.core.compare import MismatchClass as MC
    from conformance.core.compare import compare_values as cv

    assert [m.cls for m in cv({"g": {2: 0.5}}, {"g": {2.0: 0.5}})] == [MC.TYPE]
    assert [m.cls for m in cv({1: "x"}, {True: "x"})] == [MC.TYPE]
    assert cv({2: 0.5}, {2: 0.5}) == []


def test_key_order_is_ignored_only_at_the_paths_declared_unordered():
    expected = Result.of_value({"rewards": {"a": 0.5, "b": 1.0}, "steps": {"a": 1, "b": 2}})
    actual = Result.of_value({"rewards": {"b": 1.0, "a": 0.5}, "steps": {"b": 2, "a": 1}})
    found = compare(expected, actual, NanPolicy.ANY, frozenset({"$['rewards']"}))
    assert [(m.cls, m.path) for m in found] == [(MismatchClass.KEY_ORDER, "$['steps']")]
    # values under an unordered dict are still compared
    worse = Result.of_value({"rewards": {"b": 1.0, "a": 0.25}, "steps": {"a": 1, "b": 2}})
    found = compare(expected, worse, NanPolicy.ANY, frozenset({"$['rewards']"}))
    assert [(m.cls, m.path) for m in found] == [(MismatchClass.ULP, "$['rewards']['a']")]


# -- the fast path: equal wire forms settle it, and only equal ones ----------------------------------


@pytest.mark.parametrize(("expected", "actual"), [
    (0.0, -0.0),
    (1, 1.0),
    (True, 1),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    ([1.0], [1.0, 1.0]),
    (b"1", "1"),
])
def test_values_that_differ_still_mismatch_when_their_wire_forms_are_given(expected, actual):
    from conformance.kit import wire

    got = compare(Result.of_value(expected, wire.encode(expected)), Result.of_value(actual, wire.encode(actual)),
                  NanPolicy.ANY)
    assert got  # each pair differs in a way the comparator classifies


def test_equal_wire_forms_conform_under_the_bitwise_policy_too():
    from conformance.kit import wire

    nan = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
    value = {"x": [nan, -0.0, 5e-324]}
    assert compare(Result.of_value(value, wire.encode(value)), Result.of_value(value), NanPolicy.BITWISE) == []


def test_a_mismatch_under_a_key_without_a_literal_repr_still_has_a_path():
    # two NaN keys are two different keys; deepdiff alone writes no path through them
    found = compare_values({"a": {math.nan: 1.0}}, {"a": {math.nan: 2.0}})
    assert found and all(m.path == "$['a'][nan]" for m in found)


def test_a_mismatch_renders_with_both_sides_ulps_and_bits():
    (m,) = compare_values({"x": 0.1}, {"x": 0.30000000000000004 - 0.2})
    text = m.describe()
    assert text.startswith("ulp at $['x']: oracle 0.1 / candidate 0.10000000000000003")
    assert f"ulps={m.ulps}" in text and "bits 3fb999999999999a vs 3fb999999999999c" in text
    assert m.describe("recorded", "oracle", bits=False).endswith(f"recorded 0.1 / oracle {m.actual} ulps={m.ulps}")
