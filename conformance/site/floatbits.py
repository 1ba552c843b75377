"""Two 64-bit float patterns side by side: their sign, exponent and mantissa bits, and which bits differ.

A ULP mismatch is usually one or two low mantissa bits; a sign-of-zero one
is the sign bit alone; a NaN payload differs in the mantissa only. Showing
the fields apart (and each differing bit marked) lets a reader tell these
apart at a glance. The patterns come from a mismatch's ``expected_bits`` and
``actual_bits`` (16 hex digits, as the comparator writes them).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Literal

FieldName = Literal["sign", "exponent", "mantissa"]
# IEEE 754 binary64, from the most significant bit: 1 sign bit, 11 exponent bits, 52 mantissa bits.
FIELDS: tuple[tuple[FieldName, int], ...] = (("sign", 1), ("exponent", 11), ("mantissa", 52))
_HEX = re.compile(r"[0-9a-fA-F]{16}")


@dataclass(frozen=True)
class Bit:
    value: Literal["0", "1"]
    differs: bool


@dataclass(frozen=True)
class BitField:
    """One field of one pattern: its bits, most significant first."""

    name: FieldName
    bits: tuple[Bit, ...]

    @property
    def differs(self) -> bool:
        return any(bit.differs for bit in self.bits)

    @property
    def text(self) -> str:
        return "".join(bit.value for bit in self.bits)


@dataclass(frozen=True)
class Pattern:
    """One float's 64 bits, in its three fields."""

    hex: str
    value: str  # the float as Python shows it
    fields: tuple[BitField, ...]

    @property
    def text(self) -> str:
        return "".join(field.text for field in self.fields)


@dataclass(frozen=True)
class BitsDiff:
    """The oracle's and the candidate's patterns, each bit marked where the two differ."""

    expected: Pattern
    actual: Pattern
    ulps: int | None

    @property
    def differing(self) -> int:
        return sum(bit.differs for field in self.actual.fields for bit in field.bits)

    @property
    def fields_differing(self) -> list[FieldName]:
        return [field.name for field in self.actual.fields if field.differs]


def _value(bits: int) -> str:
    return repr(struct.unpack(">d", bits.to_bytes(8, "big"))[0])


def _pattern(bits: int, other: int, text: str) -> Pattern:
    binary, theirs = format(bits, "064b"), format(other, "064b")
    fields, start = [], 0
    for name, width in FIELDS:
        chosen = range(start, start + width)
        fields.append(BitField(name, tuple(Bit("1" if binary[i] == "1" else "0", binary[i] != theirs[i])
                                           for i in chosen)))
        start += width
    return Pattern(text.lower(), _value(bits), tuple(fields))


def compare(expected: str | None, actual: str | None, ulps: int | None = None) -> BitsDiff | None:
    """The two patterns of a float mismatch; None unless both sides are 16 hex digits (a mismatch that is not
    between two floats has no bits)."""
    if expected is None or actual is None or not (_HEX.fullmatch(expected) and _HEX.fullmatch(actual)):
        return None
    a, b = int(expected, 16), int(actual, 16)
    return BitsDiff(_pattern(a, b, expected), _pattern(b, a, actual), ulps)
