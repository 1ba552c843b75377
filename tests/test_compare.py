"""Tests for conformance.core.compare: the bit-exact comparator.

Float classes and ULP distances are computed here from the IEEE-754 bit
fields (and by stepping with math.nextafter), independently of the module.
"""

from __future__ import annotations

import math
import struct
import sys

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
    most_severe,
    ulp_bucket,
)
from tests.budget import examples

SIGN = 1 << 63
EXP_MASK = 0x7FF0_0000_0000_0000
MANT_MASK = (1 << 52) - 1
U64 = 2**64
CLOSE = 2**20  # the documented top of the `ulp` class (docs/cases.md): farther, or of another sign, is float-far


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
    if (e ^ a) & SIGN or ulps_between(e, a) > CLOSE:
        return MismatchClass.FLOAT_FAR
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
# Pairs about the bound apart, on either side of it.
bound_pairs = bits.flatmap(
    lambda b: st.tuples(st.just(b), st.integers(-3, 3).map(lambda d: (b + CLOSE + d) % U64))
)
nan_pairs = st.tuples(
    st.integers(0, 1), st.integers(1, MANT_MASK), st.integers(0, 1), st.integers(1, MANT_MASK)
).map(lambda t: ((t[0] << 63) | EXP_MASK | t[1], (t[2] << 63) | EXP_MASK | t[3]))
pairs = st.tuples(bits, bits) | nearby_pairs | bound_pairs | sign_flipped | nan_pairs
policies = st.sampled_from([POLICIES.get("any-nan-equal"), POLICIES.get("bitwise")])


def check_float_mismatch(m: Mismatch, e: int, a: int, cls: MismatchClass, path: str) -> None:
    assert m.cls is cls
    assert m.path == path
    assert m.expected_bits == format(e, "016x")
    assert m.actual_bits == format(a, "016x")
    assert len(m.expected_bits) == 16 and len(m.actual_bits) == 16
    assert m.expected == repr(float_of(e)) and m.actual == repr(float_of(a))
    if cls in (MismatchClass.ULP, MismatchClass.FLOAT_FAR):
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
        (0.0, 5e-324, 1),
        (-0.0, -5e-324, 1),
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
        (math.inf, sys.float_info.max, MismatchClass.INF_VS_FINITE),  # the next float up, yet no ULP apart
        (0.0, -math.inf, MismatchClass.INF_VS_FINITE),
        (1.0, 1.5, MismatchClass.FLOAT_FAR),
        (1.0, -1.0, MismatchClass.FLOAT_FAR),
        (1.0, 0.0, MismatchClass.FLOAT_FAR),
        (0.0, 5e-324, MismatchClass.ULP),
        (0.0, -5e-324, MismatchClass.FLOAT_FAR),  # a zero's sign counts, as it does against -0.0
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
    assert data["cls"] == "float-far"
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
        ("$['a']", MismatchClass.FLOAT_FAR),
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
    assert [(m.cls, m.path) for m in found] == [(MismatchClass.FLOAT_FAR, "$['rewards']['a']")]


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


# -- how far apart: ulp within the bound, float-far beyond it or across zero --------------


def _stepped(x: float, steps: int) -> float:
    """``x`` moved ``steps`` floats away from zero (within one sign)."""
    return float_of(bits_of(x) + steps)


@pytest.mark.parametrize("start", [1.0, -1.0, 5e-324, -2.0**-1022, 1e300, -0.1],
                         ids=["one", "minus-one", "subnormal", "minus-smallest-normal", "huge", "minus-tenth"])
@pytest.mark.parametrize(("steps", "cls"), [(CLOSE - 1, MismatchClass.ULP), (CLOSE, MismatchClass.ULP),
                                            (CLOSE + 1, MismatchClass.FLOAT_FAR)])
def test_the_close_range_ends_at_its_bound(start, steps, cls):
    far = _stepped(start, steps)
    assert math.isfinite(far) and math.copysign(1.0, far) == math.copysign(1.0, start)
    (m,) = compare_values(start, far)
    assert (m.cls, m.ulps) == (cls, steps)
    (back,) = compare_values(far, start)  # either side may be the oracle's
    assert (back.cls, back.ulps) == (cls, steps)


def test_the_subnormals_count_one_ulp_each_up_to_the_normals():
    largest_subnormal = float_of(0x000FFFFFFFFFFFFF)
    (m,) = compare_values(largest_subnormal, 2.0**-1022)
    assert (m.cls, m.ulps) == (MismatchClass.ULP, 1)
    (m,) = compare_values(5e-324, float_of(1 + CLOSE))
    assert (m.cls, m.ulps) == (MismatchClass.ULP, CLOSE)


@pytest.mark.parametrize(("e", "a", "ulps"), [
    (5e-324, -5e-324, 2),  # two floats apart through the one zero point, still another sign
    (-0.0, 5e-324, 1),
    (1.0, -1.0, 2 * 0x3FF0000000000000),
    (-1e-300, 1e300, bits_of(1e-300) + bits_of(1e300)),
])
def test_opposite_signs_are_far_however_few_ulps_apart(e, a, ulps):
    (m,) = compare_values(e, a)
    assert (m.cls, m.ulps) == (MismatchClass.FLOAT_FAR, ulps)
    assert m.expected_bits == format(bits_of(e), "016x") and m.actual_bits == format(bits_of(a), "016x")


def test_a_wrong_formula_is_far_where_a_last_bit_is_close():
    (wrong,) = compare_values({"mean": 1.0}, {"mean": 0.0})
    assert (wrong.cls, wrong.ulps) == (MismatchClass.FLOAT_FAR, 0x3FF0000000000000)
    (rounding,) = compare_values({"mean": 0.1}, {"mean": 0.30000000000000004 - 0.2})
    assert (rounding.cls, rounding.ulps) == (MismatchClass.ULP, 2)
    assert wrong.describe().startswith("float-far at $['mean']: oracle 1.0 / candidate 0.0 ulps=4607182418800017408")


def test_signs_of_zero_nans_and_infinities_have_no_distance():
    for e, a in ((0.0, -0.0), (math.inf, -math.inf), (math.inf, sys.float_info.max), (math.nan, 1.0)):
        (m,) = compare_values(e, a)
        assert m.cls not in (MismatchClass.ULP, MismatchClass.FLOAT_FAR) and m.ulps is None


def test_a_far_float_outranks_a_last_bit_and_yields_to_a_wrong_value():
    far = Mismatch(MismatchClass.FLOAT_FAR, "$['a']", "1.0", "0.0", ulps=1)
    close = Mismatch(MismatchClass.ULP, "$['b']", "1.0", "1.0000000000000002", ulps=1)
    value = Mismatch(MismatchClass.VALUE, "$['c']", "1", "2")
    assert most_severe([close, far]) is MismatchClass.FLOAT_FAR
    assert most_severe([far, value]) is MismatchClass.VALUE
    assert most_severe([far, Mismatch(MismatchClass.INF_VS_FINITE, "$", "inf", "1.0")]) is MismatchClass.FLOAT_FAR


@pytest.mark.parametrize(("cls", "ulps", "bucket"), [
    (MismatchClass.ULP, 1, "1"), (MismatchClass.ULP, 2, "2-4"), (MismatchClass.ULP, 4, "2-4"),
    (MismatchClass.ULP, 5, "5-16"), (MismatchClass.ULP, 16, "5-16"), (MismatchClass.ULP, 17, "17-2^10"),
    (MismatchClass.ULP, 1024, "17-2^10"), (MismatchClass.ULP, 1025, "2^10-2^20"),
    (MismatchClass.ULP, CLOSE, "2^10-2^20"), (MismatchClass.FLOAT_FAR, CLOSE + 1, "far"),
    (MismatchClass.FLOAT_FAR, 2, "far"),  # of two signs
    (MismatchClass.ULP, CLOSE + 1, "far"),  # as a report of comparator 1.1 has it
    (MismatchClass.SIGN_OF_ZERO, None, None), (MismatchClass.VALUE, None, None),
])
def test_each_distance_falls_in_one_bucket(cls, ulps, bucket):
    m = Mismatch(cls, "$", "e", "a", ulps=ulps)
    assert (ulp_bucket(m).value if ulp_bucket(m) is not None else None) == bucket
