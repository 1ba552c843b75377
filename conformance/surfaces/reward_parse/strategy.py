"""reward.parse: what a verifier leaves in its logs dir.

reward.txt is whatever the test script echoed: every spelling ``float()``
accepts or rejects, Unicode digits and whitespace by the oracle's own tables
(:mod:`.unicode_text`). reward.json is a JSON document, well-formed or not,
built from a tree so the generator controls each token's spelling (duplicate
keys, ``NaN``/``Infinity``, huge and tiny numbers, numeric strings padded
with the whitespace pydantic trims, keys and values naming agent-challenge's
reason codes). Either file sometimes carries a byte order mark. Two documents
in fifteen are an object of telling values (underscores at an edge or
doubled, error names between multibyte characters past 50 bytes quoted).
Numbers, runs of whitespace and blank files are built from a seed each
draws, not character by character.
"""

from __future__ import annotations

import json
import random

from hypothesis import strategies as st

from conformance.strategies.picks import pick
from conformance.strategies.text_bytes import SEEDS, encoded, padding, whitespace
from conformance.strategies.unicode_text import PYDANTIC_WHITESPACE, numeric_string, unicode_reward_text, with_bom
from conformance.strategies.weights import weighted
from conformance.surfaces.reason_normalize.strategy import code_words, multibyte_code_words

DIGITS = "0123456789"
# Unicode decimal digits float() accepts (Arabic-Indic, Devanagari, fullwidth,
# mathematical bold) and digit-like characters it rejects (superscript, roman).
FOREIGN_DIGITS = "٠١٢٣٤٥٦٧٨٩०१२३४５０１２３𝟏𝟐" + "¹²³Ⅻ"


def _digit_run(rng: random.Random, alphabet: str) -> str:
    """Digits, sometimes with underscores: between digits (valid), doubled or at an edge (not)."""
    digits = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5)))
    if rng.randrange(5) == 0:
        at = rng.randrange(len(digits) + 1)
        digits = digits[:at] + rng.choice(["_", "__"]) + digits[at:]
    return digits


def _decimal_spelling(seed: int) -> str:
    """A number as float() spells it (whole and fraction, either optional, an exponent), built from one seed:
    a draw per character was most of the surface's draws."""
    rng = random.Random(seed)
    alphabet = DIGITS + FOREIGN_DIGITS if rng.randrange(8) == 0 else DIGITS
    whole = _digit_run(rng, alphabet) if rng.randrange(2) else ""
    frac = _digit_run(rng, alphabet) if rng.randrange(2) else ""
    shape = rng.choice(["int", "point", "point", "lead", "trail"])
    body = {"int": whole or "0", "point": f"{whole or '0'}.{frac or '0'}", "lead": f".{frac or '5'}",
            "trail": f"{whole or '1'}."}[shape]
    if rng.randrange(2):
        body += rng.choice("eE") + rng.choice(["", "+", "-"]) + (_digit_run(rng, alphabet) if rng.randrange(2) else "")
    return body


decimal_spelling = SEEDS.map(_decimal_spelling)


def _casings(word: str) -> st.SearchStrategy[str]:
    # One drawn mask, a bit per letter, rather than a draw per letter.
    return st.integers(0, 2 ** len(word) - 1).map(
        lambda mask: "".join(c.upper() if mask >> i & 1 else c for i, c in enumerate(word)))


SPECIAL_WORDS = st.one_of(
    st.one_of(_casings("nan"), _casings("inf"), _casings("infinity")),
    st.sampled_from(["infinit", "nan(1)", "snan", "in f", "n an", "infinityy", "0x1p3", "1,5", "½", "--1", "+-1"]),
)

number_text = st.one_of(
    st.tuples(st.sampled_from(["", "", "+", "-"]), st.one_of(decimal_spelling, SPECIAL_WORDS)).map("".join),
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
BLANKS = (" ", "\n", "\r\n", "\t", "\x0b", "\x0c", "\xa0", "\u3000", "\x00", "\u2028")


def _blank(seed: int) -> bytes:
    # Half of them ASCII whitespace alone, which bytes.strip() also empties: a file harbor reads, not empty.
    rng = random.Random(seed)
    chars = BLANKS[:6] if rng.randrange(2) else BLANKS
    return "".join(rng.choice(chars) for _ in range(rng.randint(1, 6))).encode()


BLANK = SEEDS.map(_blank)

# Six draws in seven are text a verifier could have written, so the rules for numbers are reached; the seventh
# is a file no number is read from (blank, empty, not UTF-8) or one with a byte order mark.
reward_txt = weighted(
    (6, encoded(reward_txt_text)),
    (1, weighted((2, BLANK), (1, st.just(b"")), (1, st.binary(max_size=12)), (2, with_bom(reward_txt_text)))),
)

# --- reward.json ----------------------------------------------------------

# The tokens that decide a rule (Python's json reads NaN and Infinity, which strict parsers refuse; -0;
# overflow to infinity; subnormals; ints past 64 bits) are drawn as often as all other numbers together.
JSON_NUMBERS = weighted(
    (1, st.sampled_from(["NaN", "Infinity", "-Infinity"])),
    (3, st.sampled_from(["0.0", "1.0", "-0", "-0.0", "0e0", "1E400", "-1e400", "1e-400", "4.9e-324", "2.5e-324",
                         "1.7976931348623157e308", "1.7976931348623159e308", "0.1", "1.0000000000000001",
                         "12345678901234567890123"])),
    (1, st.integers(-5, 5).map(str)),
    (1, st.integers(min_value=-(10**30), max_value=10**30).map(str)),
    (1, st.floats(allow_nan=False, allow_infinity=False).map(repr)),
    (1, st.integers(300, 4200).map(lambda n: "9" * n)),
)
# Spellings a strict JSON parser refuses.
BAD_NUMBERS = st.sampled_from(["01", "+1", ".5", "1.", "0x10", "1_0", "nan", "inf", "-", "1e", "--1", "١"])
NUMERIC_STRINGS = st.sampled_from(["1", "0", "1.5", " 2 ", "1_0", "1__0", "_1", "1e3", "nan", "-inf", "Infinity",
                                   "-0", "", "true", "１", "0x1", "\xa01\u3000", "1 0", "0.1e-1"])
KEYS = st.one_of(st.sampled_from(["reward", "accuracy", "pass", "a", "b", "", " ", "ü", "reward", "a.b"]),
                 st.text(max_size=4), code_words)


def _string(value: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(value, st.booleans()).map(lambda pair: json.dumps(pair[0], ensure_ascii=pair[1]))


# JSON strings whose escapes make a lone surrogate, which pydantic refuses to read as text.
SURROGATE_STRINGS = st.sampled_from(['"\\ud800"', '"1\\udfff"', '"\\udc00 1"'])

# A value's chance follows how much of pydantic it reaches: numbers, then strings it must parse (the float
# grammar's spellings with the padding either side trims or keeps, and its int fallback), then the rest.
json_scalar = weighted(
    (3, JSON_NUMBERS),
    (1, st.sampled_from(["-0.0", "-0", "-0e0", "-0.0e5"])),
    (2, _string(st.one_of(NUMERIC_STRINGS, st.text(max_size=6)))),
    (3, _string(numeric_string)),
    (2, _string(st.tuples(padding, number_text, padding).map("".join))),
    (2, _string(code_words)),
    (2, st.sampled_from(["true", "false", "null"])),
    (1, SURROGATE_STRINGS),
    (1, _string(multibyte_code_words)),  # quoted in the message, cut after 50 bytes (not characters)
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
# ones only its int fallback reads. One object holds several, so one draw reaches several rules.
VALID_STRINGS = st.sampled_from(["1", "0.5", " 2 ", "\u00a01\u3000", "1_0", "-0", "+1.5", "1e3", "inf", "-Infinity",
                                 "nan", ".5", "1.", " 1_0 ", "0_1", "\t0-1 ", "1_0.00 ", "00_7", "0__1"])
NON_ASCII_WHITESPACE = [c for c in PYDANTIC_WHITESPACE if c > "\x7f"]
# Numbers between the whitespace pydantic trims beyond ASCII's (a runtime's own strip() may keep it).
NON_ASCII_PADDING = st.one_of(st.sampled_from(NON_ASCII_WHITESPACE),
                              st.tuples(*[st.sampled_from(NON_ASCII_WHITESPACE)] * 2).map("".join))
padded_number = st.tuples(NON_ASCII_PADDING, st.sampled_from(["1", "0.5", "-2", "1e3", "inf", "1_0"]),
                          st.one_of(st.just(""), NON_ASCII_PADDING)).map("".join)
valid_value = st.one_of(
    st.integers(-3, 3).map(str), st.sampled_from(["0.5", "-0.0", "1e400", "12345678901234567890", "NaN"]),
    st.sampled_from(["true", "false"]), _string(VALID_STRINGS), _string(padded_number),
)
mixed_object = st.lists(st.tuples(st.sampled_from(["a", "b", "c", "reward", "d"]), valid_value),
                        min_size=2, max_size=5).map(
    lambda pairs: "{" + ", ".join(f'"{k}{i}": {v}' for i, (k, v) in enumerate(pairs)) + "}")
# Values that tell a few of pydantic's rules apart, each of which a single rare draw reached before: underscores
# at an edge or doubled (its float grammar refuses them, its int parse drops them among leading zeros), and
# error names and codes between multibyte characters, under 50 characters but over 50 bytes quoted, where
# pydantic's cut of a long value (by bytes) hides them from the message.
TELLING_STRINGS = ["_1", "1_", "1__0", " 1__0 ", "__1", "0__1", " 0__1", "_0_1", "0_0_1 ", "00__7", "0_-1", "_-1",
                   "0__-1", "1_0_", "_1_0"]
TELLING_WORDS = ["CancelledError", "AgentTimeoutError", "connection refused", "missing", "harbor_reward_empty",
                 "VerifierTimeoutError", "submission code"]
TELLING_VALUES = [json.dumps(v, ensure_ascii=ascii) for v in TELLING_STRINGS for ascii in (True, False)] + [
    quoted for word in TELLING_WORDS for pad, n in (("é", 12), ("键", 9), ("😀", 8), ("é", 16))
    if len(quoted := json.dumps(pad * n + word + pad * n, ensure_ascii=False)) <= 50 < len(quoted.encode())]
telling_object = st.lists(st.sampled_from(TELLING_VALUES), min_size=1, max_size=3).map(
    lambda values: "{" + ", ".join(f'"v{i}": {v}' for i, v in enumerate(values)) + "}")
# Hypothesis draws a choice's first option more often than the others (its simplest): flat objects come first.
json_document = weighted(
    (3, mixed_object),
    (4, _object(json_scalar, min_size=1)),  # the usual shape: one flat object
    (1, _object(json_scalar)),
    (1, _object(json_value)),
    (1, json_value),
    (1, _object(_string(st.one_of(numeric_string, code_words)))),  # values pydantic must read, or quote
    (2, NOT_OBJECTS),
    (2, telling_object),
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
    layout = pick(draw, LAYOUTS)
    found = {}
    if layout in ("txt", "both"):
        found["reward_txt"] = draw(reward_txt)
    if layout in ("json", "both"):
        found["reward_json"] = draw(reward_json)
    return found
