"""reward.parse: what a verifier leaves in its logs dir.

reward.txt is whatever the test script echoed: every spelling ``float()``
accepts or rejects, Unicode digits and whitespace by the oracle's own tables
(:mod:`.unicode_text`). reward.json is a JSON document, well-formed or not,
built from a tree so the generator controls each token's spelling (duplicate
keys, ``NaN``/``Infinity``, huge and tiny numbers, numeric strings padded
with the whitespace pydantic trims, keys and values naming agent-challenge's
reason codes). Either file sometimes carries a byte order mark.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.labels import composite
from conformance.strategies.picks import lists_of, pick, pick_each
from conformance.strategies.text_bytes import encoded, encodings, padding, whitespace
from conformance.strategies.unicode_text import (
    EXPONENTS,
    PYDANTIC_WHITESPACE,
    numeric_string,
    padded,
    seed_runs,
    unicode_reward_text,
    with_bom,
)
from conformance.strategies.weights import pool, pooled, weighted
from conformance.surfaces.reason_normalize.strategy import code_words, multibyte_code_words

DIGITS = "0123456789"
# Unicode decimal digits float() accepts (Arabic-Indic, Devanagari, fullwidth,
# mathematical bold) and digit-like characters it rejects (superscript, roman).
FOREIGN_DIGITS = "٠١٢٣٤٥٦٧٨٩०१२३४５０１２３𝟏𝟐" + "¹²³Ⅻ"


# Digits of each spelling's runs (three of up to five), ASCII or with foreign ones: one integer, read in the
# alphabet's base.
_RUN_DIGITS = {foreign: (alphabet, st.integers(0, len(alphabet) ** 15 - 1))
               for foreign, alphabet in ((False, DIGITS), (True, DIGITS + FOREIGN_DIGITS))}


@st.composite
def decimal_spelling(draw: st.DrawFn) -> str:
    """A number as float() reads it, or nearly: its shape, digits (foreign ones one time in eight), an exponent,
    and underscores between digits (valid), doubled or at an edge (not)."""
    (foreign, shape, exponent), (whole_there, frac_there, power_there), sizes, underscore = pick_each(
        draw, _SPELLING_FORMS, _RUNS_THERE, _RUN_SIZES, _UNDERSCORES)
    alphabet, digits = _RUN_DIGITS[foreign]
    runs = seed_runs(draw(digits), alphabet, sizes, 5)
    if underscore is not None:
        i, mark = underscore
        at = pick(draw, range(len(runs[i]) + 1))
        runs[i] = runs[i][:at] + mark + runs[i][at:]
    whole, frac = runs[0] if whole_there else "", runs[1] if frac_there else ""
    body = {"int": whole or "0", "point": f"{whole or '0'}.{frac or '0'}", "lead": f".{frac or '5'}",
            "trail": f"{whole or '1'}."}[shape]
    if exponent:
        body += exponent + (runs[2] if power_there else "")
    return body


# A spelling's form as one pick: foreign digits (one in eight), its shape, an exponent (half); which of its
# whole part, fraction and exponent digits are there (each half; a shrink leaves out the first two and keeps
# the third); each run's length (1 to 5); an underscore (or two) in one run, two times in five.
_SPELLING_FORMS = [(foreign, shape, exponent) for foreign in [False] * 7 + [True]
                   for shape in ("int", "point", "point", "lead", "trail") for exponent in EXPONENTS]
_RUNS_THERE = [(whole, frac, power) for whole in (False, True) for frac in (False, True) for power in (True, False)]
_RUN_SIZES = [(a, b, c) for a in range(1, 6) for b in range(1, 6) for c in range(1, 6)]
_UNDERSCORES: list[tuple[int, str] | None] = [None] * 9 + [(run, mark) for run in range(3) for mark in ("_", "__")]


@st.composite
def _casing(draw: st.DrawFn) -> str:
    """nan, inf or infinity, each letter in either case."""
    word = pick(draw, ("nan", "inf", "infinity"))
    # The casing is one choice, an integer whose bits are the letters (0, all lower case, is what it shrinks to).
    upper = draw(_CASINGS[len(word)])
    return "".join(c.upper() if upper >> i & 1 else c for i, c in enumerate(word))


_CASINGS = {size: st.integers(0, 2**size - 1) for size in (3, 8)}

# Half the casings of nan and inf, half other words float() refuses (pooled: one choice for one of them).
ODD_WORDS = ("infinit", "nan(1)", "snan", "in f", "n an", "infinityy", "0x1p3", "1,5", "½", "--1", "+-1")
SPECIAL_WORDS = pooled((len(ODD_WORDS), _casing()), (1, ODD_WORDS))
_SIGNS = ("", "", "+", "-")
_SPELLING: st.SearchStrategy[str] = weighted((1, decimal_spelling()), (1, SPECIAL_WORDS))


@st.composite
def _signed_spelling(draw: st.DrawFn) -> str:
    return pick(draw, _SIGNS) + draw(_SPELLING)


# A fifth each: a sign before a decimal spelling or a special word, repr of a float, 17 digits of one, an int
# past any float, and fixed spellings at the edges of the float grammar (pooled).
NUMBER_SPELLINGS = ("1", "0", "1.0", "0.0", "-0", "-0.0", "0.5", "1e-400", "1e400", "4.9e-324", "2.4e-324",
                    "1.7976931348623157e308", "1.7976931348623159e308", "1.0000000000000001")
number_text: st.SearchStrategy[str] = pooled(
    *((len(NUMBER_SPELLINGS), strategy) for strategy in (
        _signed_spelling(),
        st.floats().map(repr),
        st.floats(allow_nan=False).map(lambda f: f"{f:.17g}"),
        st.integers(min_value=-(10**400), max_value=10**400).map(str),
    )),
    (1, NUMBER_SPELLINGS),
)
padded_number_text = padded(number_text, padding)


@st.composite
def _echoed(draw: st.DrawFn) -> str:
    """What ``echo`` writes: whitespace, a number, a line end."""
    return draw(whitespace) + draw(number_text) + "\n"

# Long inputs: many digits, deep fractions, long runs of whitespace.
long_text = weighted(
    (1, st.integers(300, 6000).map(lambda n: "1" * n)),
    (1, st.integers(300, 6000).map(lambda n: "0." + "0" * n + "1")),
    (1, st.integers(300, 6000).map(lambda n: " " * n + "1" + "\n" * 3)),
)

SIGNED_ZEROS = ("-0", "-0.0", "-0e0", "-0.", "-.0", "+0", "-0\n", "-0.000")

# In tenths: padded numbers and Unicode numbers three each; signed zeros (pooled), echoed numbers, long
# inputs and any short text one each.
_TENTH = len(SIGNED_ZEROS)
reward_txt_text = pooled(
    (3 * _TENTH, padded_number_text),
    (3 * _TENTH, unicode_reward_text),
    (1, SIGNED_ZEROS),
    (_TENTH, _echoed()),
    (_TENTH, long_text),
    (_TENTH, st.text(max_size=8)),
)

# Files that hold only whitespace: not empty to harbor (it checks the size), blank to strip(). Half are ASCII
# whitespace alone, blank to bytes.strip() too; half have Unicode whitespace or NUL among it. Runs of them
# rather than a few fixed files: Hypothesis draws a branch with few distinct values less often than its weight
# says.
BLANK = weighted(
    (1, st.text(" \n\r\t\x0b\x0c", min_size=1, max_size=6)),
    (1, st.text(" \n\r\t\x0b\x0c\xa0\u3000\x00\u2028", min_size=1, max_size=6)),
).map(str.encode)

# Six draws in seven are text a verifier could have written, so the rules for numbers are reached; the seventh
# is a file no number is read from (blank, empty, not UTF-8) or one with a byte order mark.
reward_txt = pooled(
    *encodings(42, reward_txt_text),  # 462 in 539
    (33, BLANK), (11, (b"",)), (11, st.binary(max_size=12)), (22, with_bom(reward_txt_text)),
)

# --- reward.json ----------------------------------------------------------

# The tokens that decide a rule (Python's json reads NaN and Infinity, which strict parsers refuse; -0;
# overflow to infinity; subnormals; ints past 64 bits) are drawn as often as all other numbers together.
# Weights per value (pooled): the three non-finite tokens 1/8 of the numbers, the fifteen others 3/8, each
# strategy 1/8; 120 in all, so that json_scalar below can hold them at its own scale.
JSON_NUMBER_CHOICES: tuple[tuple[int, Any], ...] = (
    (5, ("NaN", "Infinity", "-Infinity")),
    (3, ("0.0", "1.0", "-0", "-0.0", "0e0", "1E400", "-1e400", "1e-400", "4.9e-324", "2.5e-324",
         "1.7976931348623157e308", "1.7976931348623159e308", "0.1", "1.0000000000000001", "12345678901234567890123")),
    (15, st.integers(-5, 5).map(str)),
    (15, st.integers(min_value=-(10**30), max_value=10**30).map(str)),
    (15, st.floats(allow_nan=False, allow_infinity=False).map(repr)),
    (15, st.integers(300, 4200).map(lambda n: "9" * n)),
)
# Spellings a strict JSON parser refuses.
BAD_NUMBERS = st.sampled_from(["01", "+1", ".5", "1.", "0x10", "1_0", "nan", "inf", "-", "1e", "--1", "١"])
NUMERIC_STRINGS = ("1", "0", "1.5", " 2 ", "1_0", "1__0", "_1", "1e3", "nan", "-inf", "Infinity", "-0", "", "true",
                   "１", "0x1", "\xa01\u3000", "1 0", "0.1e-1")


@composite
def _string(draw: st.DrawFn, value: st.SearchStrategy[str]) -> str:
    """A JSON string; one that is not all ASCII either as it is or in ``\\u`` escapes (the flag is drawn
    only where it makes a difference)."""
    text = draw(value)
    return json.dumps(text, ensure_ascii=not text.isascii() and draw(st.booleans()))


def json_strings(texts: Sequence[str]) -> list[str]:
    """Fixed texts as JSON strings, as ``_string`` writes them: one not all ASCII half the time escaped (two
    entries a text, so each text weighs alike in a pool)."""
    return [json.dumps(text, ensure_ascii=escaped and not text.isascii())
            for text in texts for escaped in (False, True)]


# JSON strings whose escapes make a lone surrogate, which pydantic refuses to read as text.
SURROGATES = ('"\\ud800"', '"1\\udfff"', '"\\udc00 1"')

# A value's chance follows how much of pydantic it reaches: numbers, then strings it must parse (the float
# grammar's spellings with the padding either side trims or keeps, and its int fallback), then the rest.
# In weights of 40 a share (the numbers' 120 are three shares); the fixed tokens pooled, one choice each.
json_scalar = pooled(
    *JSON_NUMBER_CHOICES,
    (10, ("-0.0", "-0", "-0e0", "-0.0e5")),
    (1, json_strings(NUMERIC_STRINGS)), (40, _string(st.text(max_size=6))),  # 38 fixed, 40 any text
    (120, _string(numeric_string)),
    (80, _string(padded_number_text)),
    (80, _string(code_words)),
    (27, ("true", "false", "null")),
    (13, SURROGATES),
    (40, _string(multibyte_code_words)),  # quoted in the message, cut after 50 bytes (not characters)
)


def _array(items: st.SearchStrategy[str], max_size: int = 3) -> st.SearchStrategy[str]:
    return lists_of(items, max_size=max_size).map(lambda xs: "[" + ", ".join(xs) + "]")


# A third each: common names (pooled, already JSON), any short text, reason-code words.
COMMON_KEYS = ('"reward"', '"accuracy"', '"pass"', '"a"', '"b"', '""', '" "', '"ü"', '"\\u00fc"', '"reward"', '"a.b"')
_KEY = pool((1, COMMON_KEYS), (len(COMMON_KEYS), _string(st.text(max_size=4))), (len(COMMON_KEYS), _string(code_words)))


@composite
def _object(draw: st.DrawFn, values: st.SearchStrategy[str], min_size: int = 0, max_size: int = 4) -> str:
    """An object as a list of pairs, not a dict: duplicate keys are drawn as often as real files have them.
    Its size is one pick, then a key and a value a pair (the choices of ``lists_of`` of pairs, without a
    strategy's layer a pair: an object's pairs were most of what a reward.json cost to draw)."""
    count = pick(draw, range(min_size, max_size + 1))
    return "{" + ", ".join(f"{_KEY(draw)}: {draw(values)}" for _ in range(count)) + "}"


# Arrays and objects of scalars, or of scalars and such arrays and objects of at most two items: two levels (three
# inside a document's object), far below scope.JSON_DEPTH_LIMIT, past which the interpreter, not harbor, decides.
# pydantic refuses any of them as a reward alike, and each leaf costs a draw: half the values are one scalar.
# Composites of picks, where st.recursive drew a value at twice the cost of a flat object.
_INNER = weighted((1, _array(json_scalar, 2)), (1, _object(json_scalar, max_size=2)))
_ITEM = weighted((2, json_scalar), (1, _INNER))
json_value = weighted((2, json_scalar), (1, _array(_ITEM)), (1, _object(_ITEM)))

JSON_SPACE = ("", "", " ", "\n", "\t", "\r\n", "  \n")  # the whitespace JSON itself allows

# The model refuses them, or (null) takes them as no rewards.
NOT_OBJECTS = pooled((7, ("null",)), (1, ("[]", "[1]", "1", "1.5", '"1"', "true", '""')))  # null half the time
# Values each coerced by another of pydantic's rules, and all of them valid, so that no error hides a coercion:
# an int, a float, a bool, numeric strings its float grammar reads (trimmed, with underscores, inf and nan) and
# ones only its int fallback reads. One object mostly holds several, so one draw reaches several rules; it may
# hold one, so that a finding shrinks to the single value that tells.
VALID_STRINGS = ("1", "0.5", " 2 ", "\u00a01\u3000", "1_0", "-0", "+1.5", "1e3", "inf", "-Infinity",
                 "nan", ".5", "1.", " 1_0 ", "0_1", "\t0-1 ", "1_0.00 ", "00_7", "0__1")
# Numbers between the whitespace pydantic trims beyond ASCII's (a runtime's own strip() may keep it).
NON_ASCII_PADDING = st.text("".join(c for c in PYDANTIC_WHITESPACE if c > "\x7f"), min_size=1, max_size=2)
_OPTIONAL_PADDING: st.SearchStrategy[str] = pooled((1, ("",)), (1, NON_ASCII_PADDING))


# Padded, "1_0" and "0_1" go to pydantic's int parse (its float parse refuses them), which drops the underscores
# among leading zeros too.
PADDED_NUMBERS = ("1", "0.5", "-2", "1e3", "inf", "1_0", "0_1", "00_7")


@st.composite
def padded_number(draw: st.DrawFn) -> str:
    return draw(NON_ASCII_PADDING) + pick(draw, PADDED_NUMBERS) + draw(_OPTIONAL_PADDING)

# A fifth each, the fixed ones pooled: small ints, other numbers, booleans, valid strings, padded numbers. The
# strings with underscores (where pydantic's float grammar, its int fallback and other parsers part most) weigh
# three times the others.
UNDERSCORED = tuple(text for text in VALID_STRINGS if "_" in text)
valid_value = pooled(
    (10, ("0", "1", "-1", "2", "-2", "3", "-3")), (14, ("0.5", "-0.0", "1e400", "12345678901234567890", "NaN")),
    (35, ("true", "false")), (2, json_strings(VALID_STRINGS)), (4, json_strings(UNDERSCORED)),
    (70, _string(padded_number())),
)
MIXED_KEYS = {"a": "a", "b": "b", "c": "c", "r": "reward", "d": "d"}
_MIXED_VALUES = lists_of(valid_value, min_size=1, max_size=5)
# Every key's name in one string choice (a letter each), not a pick per pair.
_MIXED_NAMES = {size: st.text("".join(MIXED_KEYS), min_size=size, max_size=size) for size in range(1, 6)}


@st.composite
def mixed_object(draw: st.DrawFn) -> str:
    values = draw(_MIXED_VALUES)
    names = draw(_MIXED_NAMES[len(values)])
    pairs = enumerate(zip(names, values, strict=True))
    return "{" + ", ".join(f'"{MIXED_KEYS[name]}{i}": {value}' for i, (name, value) in pairs) + "}"



# Hypothesis draws a choice's first option more often than the others (its simplest): flat objects come first.
json_document: st.SearchStrategy[str] = weighted(
    (3, mixed_object()),
    (4, _object(json_scalar, min_size=1, max_size=3)),  # the usual shape: one flat object of a few rewards
    (1, _object(json_scalar)),
    (1, _object(json_value)),
    (1, json_value),
    # values pydantic must read, or quote: one or two, so that one telling value is seldom hidden behind another error
    (1, _object(_string(weighted((1, numeric_string), (1, code_words))), min_size=1, max_size=2)),
    (2, NOT_OBJECTS),
)

JSON_SPACE_PAIRS = [(left, right) for left in JSON_SPACE for right in JSON_SPACE]


@st.composite
def well_formed_json(draw: st.DrawFn) -> str:
    left, right = pick(draw, JSON_SPACE_PAIRS)  # both sides in one choice
    return left + draw(json_document) + right



@st.composite
def _trailing_garbage(draw: st.DrawFn) -> str:
    return draw(json_document) + pick(draw, (" x", ",", "}", "\n{}", "\x00"))


damaged_json = weighted(
    (1, padded(json_document, padding)),  # whitespace JSON does not allow, BOM, NUL
    (1, _object(BAD_NUMBERS)),
    (1, _trailing_garbage()),
    (1, st.text(max_size=6)),
)
reward_json_text = weighted((3, well_formed_json()), (1, damaged_json))

# As for reward.txt: six draws in seven a JSON document (what pydantic makes of its values is most of the
# surface), the seventh damaged, blank, not UTF-8 or with a byte order mark.
reward_json = pooled(
    *encodings(54, well_formed_json()),  # 594 in 693
    (33, BLANK), (11, (b"",)), (22, encoded(damaged_json)), (11, st.binary(max_size=8)),
    (22, with_bom(reward_json_text)),
)

# Beside a reward.json, harbor never reads reward.txt (it reads reward.json first): the text only has to give
# another answer, so that a runner reading it shows. Two in three are a fixed file (pooled), one a drawn one.
UNREAD_TXT = (b"0.25", b"3\n", b"-2.5", b"nan", b"", b" ", b"x", b"\xff")
unread_reward_txt = pooled((1, UNREAD_TXT), (len(UNREAD_TXT) // 2, reward_txt))

# Most verifiers write one file; some write both; a crashed one writes none.
LAYOUTS = ("txt", "txt", "txt", "json", "json", "json", "both", "both", "neither")


@st.composite
def verifier_dirs(draw: st.DrawFn) -> dict:
    """A verifier dir: reward.txt, reward.json, both or neither (absent files are absent keys)."""
    layout = pick(draw, LAYOUTS)
    # reward.json is drawn first: a finding with both files then shrinks to its reward.json alone (the layout
    # made "json" leaves the reward.txt's choices unread at the end, where drawn first they would be read as
    # the reward.json's).
    json_file = draw(reward_json) if layout in ("json", "both") else None
    txt_file = draw(reward_txt) if layout == "txt" else draw(unread_reward_txt) if layout == "both" else None
    return {name: data for name, data in (("reward_txt", txt_file), ("reward_json", json_file)) if data is not None}
