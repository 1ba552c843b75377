"""The comparator: bit-exact equality of two surface results, with named NaN rules.

A result is a value or a raised exception (compared by class name; where a
surface says its messages matter downstream, also by the agent-challenge
reason code the message normalizes to). Values compare structurally through deepdiff, with
every float wrapped so that deepdiff sees its bits rather than ``==``:
-0.0 differs from 0.0, ``1``, ``1.0`` and ``True`` differ, and NaN equals NaN
only as the policy says. Every difference becomes a :class:`Mismatch` with a
class, a path, and for floats both bit patterns and the ULP distance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, ClassVar

from conformance.core.registry import Registry
from conformance.kit import wire
from conformance.kit.wire import float_to_bits, float_to_hex

# 1.1: the reason-code class. 1.2: float-far, for finite floats of different signs or more than CLOSE_ULPS apart
# (classed ulp before): a report's classes mean what its version says.
COMPARATOR_VERSION = "1.2"

# The top of the close range: finite floats of one sign at most this many ULPs apart are `ulp`, the rest
# `float-far`. 2^20 ULPs is a relative difference of about 2^-32: the top 32 of a double's 53 bits agree. The
# same formula in double precision lands well inside: reordering a sum of n terms moves it by about n ULPs of
# the terms at most (each addition rounds once), a fused multiply-add or another libm by a few. A different
# formula lands far outside (1.0 against 0.0 is about 2^62 ULPs), and so does a value rounded through single
# precision on the way (24 bits: up to 2^28 ULPs). A sum that cancels is the exception: its few surviving bits
# can move further under reordering alone, so the class says how far apart, not why.
CLOSE_ULPS = 2**20


@dataclass(frozen=True)
class NanPolicy:
    """How two NaNs compare (any other float equals only its own bits); the name is written into every report.

    Policies are registered by name (:data:`POLICIES`, entry-point group
    ``harbor_conformance.policies``); :func:`nan_policy` declares one.
    """

    name: str
    nans_equal: Callable[[float, float], bool]
    description: str = ""

    ANY: ClassVar[NanPolicy]
    BITWISE: ClassVar[NanPolicy]

    def __str__(self) -> str:
        return self.name


POLICIES: Registry[NanPolicy] = Registry("comparison policy", "harbor_conformance.policies")


def nan_policy(name: str) -> Callable[[Callable[[float, float], bool]], NanPolicy]:
    """Decorator: the function deciding whether two NaNs are equal becomes the registered policy ``name``."""

    def declare(nans_equal: Callable[[float, float], bool]) -> NanPolicy:
        policy = NanPolicy(name, nans_equal, (nans_equal.__doc__ or "").strip())
        return POLICIES.register(name, origin=nans_equal.__module__)(policy)

    return declare


@nan_policy("any-nan-equal")
def _any_nan(a: float, b: float) -> bool:
    """Every NaN equals every NaN, whatever its sign or payload."""
    return True


@nan_policy("bitwise")
def _same_bits(a: float, b: float) -> bool:
    """A NaN equals only a NaN with the same bits."""
    return float_to_bits(a) == float_to_bits(b)


NanPolicy.ANY = _any_nan
NanPolicy.BITWISE = _same_bits


class MismatchClass(str, Enum):
    SIGN_OF_ZERO = "sign-of-zero"
    NAN_VS_NUMBER = "nan-vs-number"
    NAN_PAYLOAD = "nan-payload"
    INF_VS_FINITE = "inf-vs-finite"
    INF_SIGN = "inf-sign"
    ULP = "ulp"
    FLOAT_FAR = "float-far"
    TYPE = "type"
    VALUE = "value"
    MISSING_KEY = "missing-key"
    EXTRA_KEY = "extra-key"
    KEY_ORDER = "key-order"
    LENGTH = "length"
    ERROR_VS_VALUE = "error-vs-value"
    ERROR_TYPE = "error-type"
    REASON_CODE = "reason-code"


# The classes from the most to the least severe: the first one a mismatch list holds names what went wrong
# (a wrong exception matters more than a key order; a type more than a last bit). A float far off is a wrong
# value, as `value` is for the other types: a wrong formula, ahead of the edges of the float domain (infinities,
# NaNs) that a formula right elsewhere can still get wrong, and of a last bit.
SEVERITY = [MismatchClass(c) for c in (
    "error-vs-value", "error-type", "reason-code", "type", "missing-key", "extra-key", "length", "key-order", "value",
    "float-far", "inf-vs-finite", "inf-sign", "nan-vs-number", "ulp", "sign-of-zero", "nan-payload")]
assert set(SEVERITY) == set(MismatchClass), "every mismatch class needs a severity"


def most_severe(mismatches: Iterable[Mismatch]) -> MismatchClass | None:
    """The most severe class among ``mismatches``; None for none."""
    return min((m.cls for m in mismatches), key=SEVERITY.index, default=None)


@dataclass(frozen=True)
class Result:
    """What one implementation did with one input."""

    value: Any = None
    raised: str | None = None  # exception class name, when it raised
    # For surfaces whose messages matter downstream: the agent-challenge reason code the
    # message normalizes to, when it is one agent-challenge lists (None: no listed code).
    reason_code: str | None = None
    # The value's wire form, when it came over the wire: two equal wire forms are the same value, bit
    # for bit and in key order, so the comparison is settled without walking the values.
    encoded: Any = field(default=None, compare=False, repr=False)
    # The exception's message, when it raised: shown to whoever reads the result, never compared (only its
    # reason code is, where the surface reads messages).
    message: str | None = field(default=None, compare=False)

    @classmethod
    def of_value(cls, value: Any, encoded: Any = None) -> Result:
        return cls(value=value, encoded=encoded)

    def wire_form(self) -> Any:
        return self.encoded if self.encoded is not None else wire.encode(self.value)

    @classmethod
    def of_raised(cls, type_name: str, reason_code: str | None = None, message: str | None = None) -> Result:
        return cls(raised=type_name, reason_code=reason_code, message=message)


@dataclass(frozen=True)
class Mismatch:
    # How pydantic reads one back from a report line: no field it does not know (every pydantic release
    # writes the same schema for it).
    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}

    cls: MismatchClass
    path: str
    expected: str  # repr of the oracle's side
    actual: str  # repr of the candidate's side
    ulps: int | None = None
    expected_bits: str | None = None
    actual_bits: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["cls"] = self.cls.value
        return {k: v for k, v in data.items() if v is not None}

    def describe(self, expected: str = "oracle", actual: str = "candidate", *, bits: bool = True) -> str:
        """The one rendering of a mismatch: class, path, both sides by their labels, ULPs and bit patterns."""
        text = f"{self.cls.value} at {self.path}: {expected} {self.expected} / {actual} {self.actual}"
        if self.ulps is not None:
            text += f" ulps={self.ulps}"
        if bits and self.expected_bits is not None:
            text += f" bits {self.expected_bits} vs {self.actual_bits}"
        return text


# -- floats ------------------------------------------------------------------


def _ordered(bits: int) -> int:
    """Map float bits onto integers whose order is the floats' order."""
    return -(bits & 0x7FFF_FFFF_FFFF_FFFF) if bits >> 63 else bits


def ulp_distance(a: float, b: float) -> int:
    """How many floats apart ``a`` and ``b`` are, counted through zero (``-0.0`` and ``0.0`` are one place)."""
    return abs(_ordered(float_to_bits(a)) - _ordered(float_to_bits(b)))


class UlpBucket(str, Enum):
    """Where a float mismatch's ULP distance falls: each bucket runs from above the previous one's top to its own
    (``17-2^10``: 17 to 1024; ``2^10-2^20``: 1025 to :data:`CLOSE_ULPS`); ``far`` is every `float-far`."""

    ONE = "1"
    FEW = "2-4"
    SOME = "5-16"
    MANY = "17-2^10"
    CLOSE = "2^10-2^20"
    FAR = "far"


_BUCKET_TOPS = ((1, UlpBucket.ONE), (4, UlpBucket.FEW), (16, UlpBucket.SOME), (2**10, UlpBucket.MANY),
                (CLOSE_ULPS, UlpBucket.CLOSE))


def ulp_bucket(mismatch: Mismatch) -> UlpBucket | None:
    """The bucket of a mismatch's ULP distance; None for a mismatch with none (not two finite floats)."""
    if mismatch.ulps is None:
        return None
    # A report of comparator 1.1 classed far floats `ulp`: its distance still puts them here.
    if mismatch.cls is MismatchClass.FLOAT_FAR or mismatch.ulps > CLOSE_ULPS:
        return UlpBucket.FAR
    return next(bucket for top, bucket in _BUCKET_TOPS if mismatch.ulps <= top)


def classify_floats(expected: float, actual: float, policy: NanPolicy) -> MismatchClass | None:
    """The class of the difference between two floats, or None when they conform."""
    if float_to_bits(expected) == float_to_bits(actual):
        return None
    e_nan, a_nan = math.isnan(expected), math.isnan(actual)
    if e_nan and a_nan:
        return None if policy.nans_equal(expected, actual) else MismatchClass.NAN_PAYLOAD
    if e_nan or a_nan:
        return MismatchClass.NAN_VS_NUMBER
    if math.isinf(expected) and math.isinf(actual):
        return MismatchClass.INF_SIGN
    if math.isinf(expected) or math.isinf(actual):
        return MismatchClass.INF_VS_FINITE
    if expected == 0.0 and actual == 0.0:
        return MismatchClass.SIGN_OF_ZERO
    # The sign bit decides, a zero's included: 0.0 against -5e-324 is far, as the comparator tells zeros apart.
    if math.copysign(1.0, expected) != math.copysign(1.0, actual) or ulp_distance(expected, actual) > CLOSE_ULPS:
        return MismatchClass.FLOAT_FAR
    return MismatchClass.ULP


class PolicyFloat:
    """A float as deepdiff should see it: equal only per the policy."""

    __slots__ = ("policy", "value")

    def __init__(self, value: float, policy: NanPolicy) -> None:
        self.value = value
        self.policy = policy

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PolicyFloat):
            return False
        if math.isnan(self.value) and math.isnan(other.value):
            return self.policy.nans_equal(self.value, other.value)
        return float_to_bits(self.value) == float_to_bits(other.value)

    def __hash__(self) -> int:
        return hash("nan") if math.isnan(self.value) else hash(float_to_bits(self.value))

    def __repr__(self) -> str:
        return repr(self.value)


def _wrap(value: Any, policy: NanPolicy) -> Any:
    if isinstance(value, float):
        return PolicyFloat(value, policy)
    if isinstance(value, list):
        return [_wrap(v, policy) for v in value]
    if isinstance(value, dict):
        return {k: _wrap(v, policy) for k, v in value.items()}
    return value


def _unwrap(value: Any) -> Any:
    return value.value if isinstance(value, PolicyFloat) else value


def _describe(value: Any) -> str:
    value = _unwrap(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_describe(v) for v in value) + "]"
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _float_mismatch(cls: MismatchClass, path: str, e: float, a: float) -> Mismatch:
    return Mismatch(
        cls, path, repr(e), repr(a),
        ulps=ulp_distance(e, a) if cls in (MismatchClass.ULP, MismatchClass.FLOAT_FAR) else None,
        expected_bits=float_to_hex(e), actual_bits=float_to_hex(a),
    )


def _same_key(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return float_to_bits(a) == float_to_bits(b)
    return type(a) is type(b)


def _keys(expected: Any, actual: Any, path: str, out: list[Mismatch]) -> None:
    """What deepdiff cannot see of dict keys: their order, and keys equal but of another type (2 vs 2.0)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if set(expected) == set(actual) and list(expected) != list(actual):
            out.append(Mismatch(MismatchClass.KEY_ORDER, path, repr(list(expected)), repr(list(actual))))
        actual_keys = {key: key for key in actual}
        for key in expected:
            if key in actual_keys:
                if not _same_key(key, actual_keys[key]):
                    out.append(Mismatch(MismatchClass.TYPE, f"{path} key {key!r}", repr(key), repr(actual_keys[key])))
                _keys(expected[key], actual[key], f"{path}[{key!r}]", out)
    elif isinstance(expected, list) and isinstance(actual, list):
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            _keys(e, a, f"{path}[{i}]", out)


def compare_values(expected: Any, actual: Any, policy: NanPolicy = NanPolicy.ANY) -> list[Mismatch]:
    # deepdiff (and the numpy it loads) is imported on the first structural comparison, not with this module:
    # every candidate, oracle and CLI process imports this module, and most never diff two values.
    from conformance.core import deep_diff

    def differs(e: PolicyFloat, a: PolicyFloat) -> bool:
        return classify_floats(e.value, a.value, policy) is not None

    out: list[Mismatch] = []
    lengths: set[str] = set()
    for report, levels in deep_diff.tree(_wrap(expected, policy), _wrap(actual, policy), PolicyFloat, differs).items():
        for level in levels:
            path = deep_diff.path(level)
            if report == "float_changed":
                e, a = level.t1.value, level.t2.value
                cls = classify_floats(e, a, policy)
                assert cls is not None  # reported only for floats that differ
                out.append(_float_mismatch(cls, path, e, a))
            elif report == "type_changes":
                out.append(Mismatch(MismatchClass.TYPE, path, _describe(level.t1), _describe(level.t2)))
            elif report == "values_changed":
                out.append(Mismatch(MismatchClass.VALUE, path, _describe(level.t1), _describe(level.t2)))
            elif report == "dictionary_item_removed":
                out.append(Mismatch(MismatchClass.MISSING_KEY, path, _describe(level.t1), "<absent>"))
            elif report == "dictionary_item_added":
                out.append(Mismatch(MismatchClass.EXTRA_KEY, path, "<absent>", _describe(level.t2)))
            elif report in ("iterable_item_added", "iterable_item_removed"):
                parent = deep_diff.path(level.up)
                if parent not in lengths:
                    lengths.add(parent)
                    e, a = _unwrap(level.up.t1), _unwrap(level.up.t2)
                    out.append(Mismatch(MismatchClass.LENGTH, parent, f"{len(e)} items", f"{len(a)} items"))
            else:  # pragma: no cover - a deepdiff report this comparator does not know
                out.append(Mismatch(MismatchClass.VALUE, path, _describe(level.t1), _describe(level.t2)))
    _keys(expected, actual, "$", out)
    out.sort(key=lambda m: (m.path, m.cls.value))
    return out


def compare(
    expected: Result, actual: Result, policy: NanPolicy = NanPolicy.ANY, unordered: frozenset[str] = frozenset(),
) -> list[Mismatch]:
    """All the ways ``actual`` (the candidate) differs from ``expected`` (the oracle).

    ``unordered`` names the paths (``$['a']['b']``) of dicts whose key order
    harbor does not fix; a different order there is not a mismatch.
    """
    if expected.raised is not None or actual.raised is not None:
        if expected.raised is not None and actual.raised is not None:
            if expected.raised != actual.raised:
                return [Mismatch(MismatchClass.ERROR_TYPE, "$", expected.raised, actual.raised)]
            if expected.reason_code != actual.reason_code:
                return [Mismatch(MismatchClass.REASON_CODE, "$", repr(expected.reason_code), repr(actual.reason_code))]
            return []
        e = f"raised {expected.raised}" if expected.raised else _describe(expected.value)
        a = f"raised {actual.raised}" if actual.raised else _describe(actual.value)
        return [Mismatch(MismatchClass.ERROR_VS_VALUE, "$", e, a)]
    try:
        if expected.wire_form() == actual.wire_form():  # the fast path: identical, whatever the policy
            return []
    except wire.WireError:
        pass  # a value with no wire form (a test's own object): compared the long way
    found = compare_values(expected.value, actual.value, policy)
    return [m for m in found if not (m.cls is MismatchClass.KEY_ORDER and m.path in unordered)]
