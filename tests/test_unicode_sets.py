"""The oracle's character sets: derived from it, committed as data, encoded in the reference, drawn by the strategies.

``oracles/unicode_sets.py`` probes every code point in the oracle's own
virtualenv; its output is ``conformance/strategies/unicode_sets.json``. The
oracle tests re-derive it (so the data cannot drift from the wheel) and hold
the reference's number parsing and pydantic messages to the oracle's on a
sample; the offline tests hold the reference's tables and the strategies to
the data.
"""

from __future__ import annotations

import itertools
import json
import random
import struct
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import ORACLE_RELEASE
from conformance.reference import pydantic_float, unicode_tables
from conformance.shipped import oracle_file
from conformance.strategies import unicode_text
from conformance.surfaces.reward_parse import reference as reward_files
from tests.budget import examples


def _ranges(ranges: list[tuple[int, int]]) -> list[list[int]]:
    return [list(r) for r in ranges]


def _code_points(ranges: list[list[int]]) -> set[int]:
    return {cp for first, last, *_ in ranges for cp in range(first, last + 1)}


# -- offline: the data, the reference's tables, the strategies ------------------------------------

def test_the_sets_name_the_oracle_they_come_from():
    versions = unicode_text.derived()["versions"]
    assert versions["harbor"] == ORACLE_RELEASE
    assert versions["python"].startswith("3.12.")
    assert versions["unicodedata"] == "15.0.0"


def test_the_reference_tables_are_the_derived_sets():
    sets = unicode_text.derived()
    assert _ranges(unicode_tables.parse_ranges(unicode_tables.FLOAT_WHITESPACE_RANGES)) == sets["float_whitespace"]
    digits = unicode_tables.parse_digit_runs(unicode_tables.FLOAT_DIGITS_RANGES)
    assert [list(run) for run in digits] == sets["float_digits"]
    pydantic_whitespace = _ranges(unicode_tables.parse_ranges(unicode_tables.PYDANTIC_WHITESPACE_RANGES))
    assert pydantic_whitespace == sets["pydantic_float_whitespace"] == sets["pydantic_int_whitespace"]
    assert _ranges(unicode_tables.parse_ranges(unicode_tables.PRINTABLE_RANGES)) == sets["repr_printable"]
    # What the reference takes as given rather than from a table: ASCII digits in pydantic's parses and in
    # JSON numbers, and json.loads's own four whitespace characters.
    assert sets["pydantic_digits"] == sets["pydantic_int_digits"] == sets["json_digits"] == [[48, 57, 0]]
    assert sets["json_whitespace"] == [[9, 10], [13, 13], [32, 32]]


def test_float_ascii_reads_the_oracles_digits_not_this_pythons():
    assert unicode_tables.float_ascii("\U00011f51") == "1"  # KAWI DIGIT ONE, Unicode 15.0
    assert unicode_tables.float_ascii("\u3000\u0663\xa0") == " 3 "
    assert unicode_tables.float_ascii("\U00010d41") == "?"  # GARAY DIGIT ONE, Unicode 16.0: not the oracle's
    assert unicode_tables.float_ascii("\xb2") == "?"  # a digit, not a decimal digit
    assert unicode_tables.float_ascii("\x1c1") == "\x1c1"  # ASCII goes through: float() itself refuses it


def test_the_strategies_constants_agree_with_the_data():
    digits = _code_points(unicode_text.derived()["float_digits"])
    spaces = _code_points(unicode_text.derived()["float_whitespace"])
    assert {ord(z) for z in unicode_text.FEATURED_ZEROS} <= {ord(z) for z in unicode_text.ZEROS}
    assert not {ord(c) for c in unicode_text.NEWER_DIGITS + unicode_text.NOT_DECIMAL} & digits
    assert not {ord(c) for c in unicode_text.LOOKALIKES + unicode_text.ISSPACE_ONLY} & spaces
    assert unicode_text.ISSPACE_ONLY == ["\x1c", "\x1d", "\x1e", "\x1f"]


@settings(max_examples=examples(300), database=None, deadline=None)
@given(st.text())
def test_the_reference_repr_is_pythons_where_the_unicode_versions_agree(text):
    if all(c.isprintable() == unicode_tables.is_printable(c) for c in text):
        assert pydantic_float.python_repr(text) == repr(text)
        assert pydantic_float.python_repr([text, {text: None}]) == repr([text, {text: None}])


def test_a_deep_value_is_quoted_without_recursion():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    assert pydantic_float.python_repr(deep) == "[" * 5001 + "]" * 5001


# -- the oracle: the data re-derived, the reference held to pydantic itself --------------------------

@pytest.mark.slow
def test_the_committed_sets_are_what_the_oracle_derives(harbor_env):
    proc = subprocess.run([str(harbor_env.python), "-I", "-X", "utf8", str(oracle_file("unicode_sets.py"))],
                          capture_output=True, text=True, encoding="utf-8", timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == unicode_text.SETS_FILE.read_text(encoding="utf-8"), (
        "the oracle's sets changed: write its output to conformance/strategies/unicode_sets.json and bring "
        "conformance/reference/unicode_tables.py along (tests/test_unicode_sets.py shows where they differ)")


_ORACLE_SIDE = r"""
import json, struct, sys
import pydantic
from harbor.models.verifier.result import VerifierResult

def answer(rewards):
    try:
        out = VerifierResult(rewards=rewards).rewards
    except pydantic.ValidationError as error:
        return {"message": str(error)}
    return {"rewards": None if out is None else [[k, type(v).__name__,
            struct.pack(">d", v).hex() if isinstance(v, float) else str(v)] for k, v in out.items()]}

print(json.dumps([answer(r) for r in json.load(sys.stdin)]))
"""


def _answer(rewards):
    try:
        out = reward_files.validate_rewards(rewards)
    except pydantic_float.ValidationError as error:
        return {"message": str(error)}
    return {"rewards": None if out is None else [[k, type(v).__name__,
            struct.pack(">d", v).hex() if isinstance(v, float) else str(v)] for k, v in out.items()]}


def _samples() -> list:
    # Every short string over the characters the number grammars turn on, as a reward value...
    alphabet = "01-+_.e \u3000\x1c"
    strings = ["".join(t) for n in range(5) for t in itertools.product(alphabet, repeat=n)]
    values: list = [{"r": s} for s in strings]
    # ... and whole documents, for the message: keys and values of every JSON type, long, escaped, nested.
    rnd = random.Random(0)
    words = ["reward", "broker connection", "é", "x" * 30, "\n", "\t", "'", '"', ".", "\\", "\x00", "\u200b",
             "\U00011f04", "\U0001e4f0", "\ud800", " ", "a.b", " 1_0 ", "0-1", "agent timeout", "error"]

    def text() -> str:
        return "".join(rnd.choice(words) for _ in range(rnd.randint(0, 6)))

    def value(depth: int = 0):
        kind = rnd.randint(0, 9 if depth < 3 else 5)
        if kind <= 3:
            return text()
        if kind == 4:
            return None
        if kind == 5:
            return rnd.choice([1, 1.5, True, -0.0, 10**40, 2.5e-300])
        if kind <= 7:
            return [value(depth + 1) for _ in range(rnd.randint(0, 3))]
        return {text(): value(depth + 1) for _ in range(rnd.randint(0, 3))}

    values += [value() if rnd.random() < 0.2 else {text(): value() for _ in range(rnd.randint(1, 4))}
               for _ in range(3000)]
    return values


def test_the_reference_reads_strings_and_words_messages_as_pydantic_does(harbor_env):
    samples = _samples()
    proc = subprocess.run([str(harbor_env.python), "-I", "-X", "utf8", "-c", _ORACLE_SIDE],
                          input=json.dumps(samples), capture_output=True, text=True, encoding="utf-8", timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    oracle = json.loads(proc.stdout)
    differ = [(sample, want, got) for sample, want in zip(samples, oracle, strict=True)
              if (got := _answer(sample)) != want]
    assert not differ, f"{len(differ)} of {len(samples)} differ, the first: {differ[0]}"

