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
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.picks import pick
from conformance.strategies.text_bytes import encoded, padding, whitespace
from conformance.strategies.unicode_text import PYDANTIC_WHITESPACE, numeric_string, unicode_reward_text, with_bom
from conformance.strategies.weights import pooled, weighted
from conformance.surfaces.reason_normalize.strategy import code_words, multibyte_code_words

DIGITS = "0123456789"
# Unicode decimal digits float() accepts (Arabic-Indic, Devanagari, fullwidth,
# mathematical bold) and digit-like characters it rejects (superscript, roman).
FOREIGN_DIGITS = "٠١٢٣٤٥٦٧٨٩०१२३४５０１２３𝟏𝟐" + "¹²³Ⅻ"


_DIGIT_TEXT = {alphabet: st.text(alphabet, min_size=1, max_size=5) for alphabet in (DIGITS, DIGITS + FOREIGN_DIGITS)}


@st.composite
def digit_run(draw: st.DrawFn, alphabet: str = DIGITS) -> str:
    """Digits, sometimes with underscores: between digits (valid), doubled or at an edge (not)."""
    digits = draw(_DIGIT_TEXT[alphabet])
    if draw(st.integers(0, 4)) == 0:
        at = draw(st.integers(0, len(digits)))
        digits = digits[:at] + pick(draw, ("_", "__")) + digits[at:]
    return digits


# Strategies a composite draws from are made once: one made in the draw is made and checked on every draw.
_ASCII_RUN, _FOREIGN_RUN = digit_run(), digit_run(DIGITS + FOREIGN_DIGITS)
_OPTIONAL_RUN = {run: (st.one_of(st.just(""), run), st.one_of(run, st.just(""))) for run in (_ASCII_RUN, _FOREIGN_RUN)}


@st.composite
def decimal_spelling(draw: st.DrawFn) -> str:
    empty_first, run_first = _OPTIONAL_RUN[_FOREIGN_RUN if draw(st.integers(0, 7)) == 0 else _ASCII_RUN]
    whole, frac = draw(empty_first), draw(empty_first)
    shape = pick(draw, ("int", "point", "point", "lead", "trail"))
    body = {"int": whole or "0", "point": f"{whole or '0'}.{frac or '0'}", "lead": f".{frac or '5'}",
            "trail": f"{whole or '1'}."}[shape]
    if draw(st.booleans()):
        body += pick(draw, "eE") + pick(draw, ("", "+", "-")) + draw(run_first)
    return body


@st.composite
def _casing(draw: st.DrawFn) -> str:
    """nan, inf or infinity, each letter in either case."""
    word = pick(draw, ("nan", "inf", "infinity"))
    return "".join(c.upper() if up else c for c, up in zip(word, draw(_FLAGS[len(word)]), strict=True))


_FLAGS = {size: st.lists(st.booleans(), min_size=size, max_size=size) for size in (3, 8)}

SPECIAL_WORDS = st.one_of(
    _casing(),
    st.sampled_from(["infinit", "nan(1)", "snan", "in f", "n an", "infinityy", "0x1p3", "1,5", "½", "--1", "+-1"]),
)

number_text = st.one_of(
    st.tuples(st.sampled_from(["", "", "+", "-"]), st.one_of(decimal_spelling(), SPECIAL_WORDS)).map("".join),
    st.floats().map(repr),
    st.floats(allow_nan=False).map(lambda f: f"{f:.17g}"),
    st.integers(min_value=-(10**400), max_value=10**400).map(str),
    st.sampled_from(["1", "0", "1.0", "0.0", "-0", "-0.0", "0.5", "1e-400", "1e400", "4.9e-324", "2.4e-324",
                     "1.7976931348623157e308", "1.7976931348623159e308", "1.0000000000000001"]),
)

# Long inputs: many digits, deep fractions, long runs of whitespace.
long_text = st.one_of(
    st.integers(300, 6000).map(lambda n: "1" * n),
    st.integers(300, 6000).map(lambda n: "0." + "0" * n + "1"),
    st.integers(300, 6000).map(lambda n: " " * n + "1" + "\n" * 3),
)

SIGNED_ZEROS = st.sampled_from(["-0", "-0.0", "-0e0", "-0.", "-.0", "+0", "-0\n", "-0.000"])

reward_txt_text = weighted(
    (3, st.tuples(padding, number_text, padding).map("".join)),
    (3, unicode_reward_text),
    (1, SIGNED_ZEROS),
    (1, st.tuples(whitespace, number_text, st.just("\n")).map("".join)),
    (1, long_text),
    (1, st.text(max_size=8)),
)

# Files that hold only whitespace: not empty to harbor (it checks the size), blank to strip().
# Runs of them rather than a few fixed files: Hypothesis draws a branch with few distinct values less often
# than its weight says.
BLANK = st.lists(st.sampled_from([" ", "\n", "\r\n", "\t", "\x0b", "\x0c", "\xa0", "\u3000", "\x00", "\u2028"]),
                 min_size=1, max_size=6).map(lambda parts: "".join(parts).encode())

# Six draws in seven are text a verifier could have written, so the rules for numbers are reached; the seventh
# is a file no number is read from (blank, empty, not UTF-8) or one with a byte order mark.
reward_txt = weighted(
    (6, encoded(reward_txt_text)),
    (1, weighted((2, BLANK), (1, st.just(b"")), (1, st.binary(max_size=12)), (2, with_bom(reward_txt_text)))),
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
NUMERIC_STRINGS = st.sampled_from(["1", "0", "1.5", " 2 ", "1_0", "1__0", "_1", "1e3", "nan", "-inf", "Infinity",
                                   "-0", "", "true", "１", "0x1", "\xa01\u3000", "1 0", "0.1e-1"])
# A third each: common names (pooled), any short text, reason-code words.
KEYS = pooled((1, ("reward", "accuracy", "pass", "a", "b", "", " ", "ü", "reward", "a.b")), (10, st.text(max_size=4)),
              (10, code_words))


def _string(value: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(value, st.booleans()).map(lambda pair: json.dumps(pair[0], ensure_ascii=pair[1]))


# JSON strings whose escapes make a lone surrogate, which pydantic refuses to read as text.
SURROGATES = ('"\\ud800"', '"1\\udfff"', '"\\udc00 1"')

# A value's chance follows how much of pydantic it reaches: numbers, then strings it must parse (the float
# grammar's spellings with the padding either side trims or keeps, and its int fallback), then the rest.
# In weights of 40 a share (the numbers' 120 are three shares); the fixed tokens pooled, one choice each.
json_scalar = pooled(
    *JSON_NUMBER_CHOICES,
    (10, ("-0.0", "-0", "-0e0", "-0.0e5")),
    (80, _string(st.one_of(NUMERIC_STRINGS, st.text(max_size=6)))),
    (120, _string(numeric_string)),
    (80, _string(st.tuples(padding, number_text, padding).map("".join))),
    (80, _string(code_words)),
    (27, ("true", "false", "null")),
    (13, SURROGATES),
    (40, _string(multibyte_code_words)),  # quoted in the message, cut after 50 bytes (not characters)
)


def _array(items: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(items, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]")


def _object(values: st.SearchStrategy[str], min_size: int = 0) -> st.SearchStrategy[str]:
    # A list of pairs, not a dict: duplicate keys are drawn as often as real files have them.
    pairs = st.lists(st.tuples(_string(KEYS), values), min_size=min_size, max_size=4)
    return pairs.map(lambda ps: "{" + ", ".join(f"{k}: {v}" for k, v in ps) + "}")


# At most four levels of arrays and objects (st.recursive extends its base log2(max_leaves) + 1 times), five
# inside a document's object: far below scope.JSON_DEPTH_LIMIT, past which the interpreter, not harbor, decides.
json_value = st.recursive(json_scalar, lambda inner: st.one_of(_array(inner), _object(inner)), max_leaves=8)

JSON_SPACE = st.sampled_from(["", "", " ", "\n", "\t", "\r\n", "  \n"])  # the whitespace JSON itself allows

# The model refuses them, or (null) takes them as no rewards.
NOT_OBJECTS = st.one_of(st.just("null"), st.sampled_from(["[]", "[1]", "1", "1.5", '"1"', "true", '""']))
# Values each coerced by another of pydantic's rules, and all of them valid, so that no error hides a coercion:
# an int, a float, a bool, numeric strings its float grammar reads (trimmed, with underscores, inf and nan) and
# ones only its int fallback reads. One object mostly holds several, so one draw reaches several rules; it may
# hold one, so that a finding shrinks to the single value that tells.
VALID_STRINGS = st.sampled_from(["1", "0.5", " 2 ", "\u00a01\u3000", "1_0", "-0", "+1.5", "1e3", "inf", "-Infinity",
                                 "nan", ".5", "1.", " 1_0 ", "0_1", "\t0-1 ", "1_0.00 ", "00_7", "0__1"])
# Numbers between the whitespace pydantic trims beyond ASCII's (a runtime's own strip() may keep it).
NON_ASCII_PADDING = st.lists(st.sampled_from([c for c in PYDANTIC_WHITESPACE if c > "\x7f"]), min_size=1,
                             max_size=2).map("".join)
padded_number = st.tuples(NON_ASCII_PADDING, st.sampled_from(["1", "0.5", "-2", "1e3", "inf", "1_0"]),
                          st.one_of(st.just(""), NON_ASCII_PADDING)).map("".join)
# A fifth each, the fixed ones pooled: small ints, other numbers, booleans, valid strings, padded numbers.
valid_value = pooled(
    (10, ("0", "1", "-1", "2", "-2", "3", "-3")), (14, ("0.5", "-0.0", "1e400", "12345678901234567890", "NaN")),
    (35, ("true", "false")), (70, _string(VALID_STRINGS)), (70, _string(padded_number)),
)
mixed_object = st.lists(st.tuples(st.sampled_from(["a", "b", "c", "reward", "d"]), valid_value),
                        min_size=1, max_size=5).map(
    lambda pairs: "{" + ", ".join(f'"{k}{i}": {v}' for i, (k, v) in enumerate(pairs)) + "}")
# Hypothesis draws a choice's first option more often than the others (its simplest): flat objects come first.
json_document = weighted(
    (3, mixed_object),
    (4, _object(json_scalar, min_size=1)),  # the usual shape: one flat object
    (1, _object(json_scalar)),
    (1, _object(json_value)),
    (1, json_value),
    (1, _object(_string(st.one_of(numeric_string, code_words)))),  # values pydantic must read, or quote
    (2, NOT_OBJECTS),
)

well_formed_json = st.tuples(JSON_SPACE, json_document, JSON_SPACE).map("".join)
damaged_json = st.one_of(
    st.tuples(padding, json_document, padding).map("".join),  # whitespace JSON does not allow, BOM, NUL
    _object(BAD_NUMBERS),
    st.tuples(json_document, st.sampled_from([" x", ",", "}", "\n{}", "\x00"])).map("".join),  # trailing garbage
    st.text(max_size=6),
)
reward_json_text = weighted((3, well_formed_json), (1, damaged_json))

# As for reward.txt: six draws in seven a JSON document (what pydantic makes of its values is most of the
# surface), the seventh damaged, blank, not UTF-8 or with a byte order mark.
reward_json = weighted(
    (6, encoded(well_formed_json)),
    (1, weighted((2, BLANK), (1, st.just(b"")), (2, encoded(damaged_json)), (1, st.binary(max_size=8)),
                 (2, with_bom(reward_json_text)))),
)

# Most verifiers write one file; some write both; a crashed one writes none.
LAYOUTS = ("txt", "txt", "txt", "json", "json", "json", "both", "both", "neither")


@st.composite
def verifier_dirs(draw: st.DrawFn) -> dict:
    """A verifier dir: reward.txt, reward.json, both or neither (absent files are absent keys)."""
    layout = draw(st.sampled_from(LAYOUTS))
    found = {}
    if layout in ("txt", "both"):
        found["reward_txt"] = draw(reward_txt)
    if layout in ("json", "both"):
        found["reward_json"] = draw(reward_json)
    return found
