"""Unicode in reward files: whitespace, digits and byte order marks, from the oracle's own tables.

The sets are not this interpreter's: ``unicode_sets.json`` beside this module
is what harbor's oracle (its CPython, its pydantic-core) accepts, probed one
code point at a time by ``oracles/unicode_sets.py``, and
``tests/test_unicode_sets.py`` re-derives it. So a draw holds the characters
that matter to the oracle even where the harness runs on another Unicode
version (Python 3.11 has no Kawi digits; 3.14 has digits the oracle rejects).

* reward.txt (``float()``): numbers spelt with Unicode decimal digits of one
  script or several, padded with the whitespace float() strips or with
  characters it does not (``str.isspace()`` ones among them);
* reward.json string values (pydantic): numbers padded with the whitespace
  pydantic-core trims, with underscores (a padded ``"1_0"`` is the int 10,
  an unpadded one the float 10.0), with zeros before a sign (``"0-1"``), or
  with digits pydantic refuses;
* byte order marks: alone, before, inside or after the content, doubled,
  UTF-16 and UTF-32 ones, and whole files encoded with them.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.labels import composite
from conformance.strategies.picks import pick, pick_each
from conformance.strategies.weights import pooled, table

SETS_FILE = Path(__file__).with_name("unicode_sets.json")


@cache
def derived() -> dict[str, Any]:
    """The oracle's character sets (``oracles/unicode_sets.py``'s output, committed)."""
    data: dict[str, Any] = json.loads(SETS_FILE.read_text(encoding="utf-8"))
    return data


def chars(name: str) -> list[str]:
    """Every character of a derived set, in code point order."""
    return [chr(cp) for first, last, *_ in derived()[name] for cp in range(first, last + 1)]


def digit_zeros() -> list[str]:
    """The zero of each run of ten decimal digits float() reads (ASCII's first)."""
    return [chr(first - value) for first, _, value in derived()["float_digits"]]


FLOAT_WHITESPACE = chars("float_whitespace")
PYDANTIC_WHITESPACE = chars("pydantic_float_whitespace")
# isspace() but kept by float() and by pydantic: U+001C..U+001F.
ISSPACE_ONLY = sorted(set(chars("str_whitespace")) - set(FLOAT_WHITESPACE))
# Characters that look like, or once were, whitespace and are not: Mongolian vowel separator (White_Space
# until Unicode 6.3), zero-width space, word joiner, BOM, NUL, DEL, the halfwidth hangul filler.
LOOKALIKES = ["\u180e", "\u200b", "\u2060", "\ufeff", "\x00", "\x7f", "\uffa0"]
JSON_WHITESPACE = chars("json_whitespace")
# Digit runs whose zero is new to a Unicode version the harness may not have (14.0: Tangsa; 15.0: Kawi,
# Nag Mundari), with ASCII, Arabic-Indic, Devanagari, fullwidth and mathematical bold ones.
ZEROS = digit_zeros()
FEATURED_ZEROS = ["0", "\u0660", "\u0966", "\uff10", "\U0001d7ce", "\U00016ac0", "\U00011f50", "\U0001e4f0"]
# Unicode 16.0 decimal digits (Garay, Sunuwar, Gurung Khema, Kirat Rai, outlined), which the oracle's
# Python 3.12 does not read; and characters with a digit value that are no decimal digit.
NEWER_DIGITS = ["\U00010d41", "\U00011bf1", "\U00016131", "\U00016d71", "\U0001ccf1"]
NOT_DECIMAL = ["\u00b2", "\u2460", "\u216b", "\u00bd", "\u4e09", "\u0f33", "\U0001f101"]


def _digit(zero: str, value: int) -> str:
    return chr(ord(zero) + value)


# Half the featured zeros, half any script's: one pick from the table.
ZERO_TABLE = table((len(ZEROS), FEATURED_ZEROS), (len(FEATURED_ZEROS), ZEROS))


def seed_runs(seed: int, alphabet: str, sizes: tuple[int, ...], longest: int) -> list[str]:
    """Runs of characters of ``alphabet`` of the given sizes (each at most ``longest``), from the digits of
    ``seed`` in the alphabet's base: run i takes every len(sizes)-th digit from the i-th lowest on.

    A number's runs of digits drawn as one integer are one choice (a run of text a part was a choice a part),
    and a shrink of the integer takes them to the alphabet's first character; the low digits vary the most,
    so each run starts with them.
    """
    base, chars = len(alphabet), []
    for _ in range(len(sizes) * longest):
        seed, digit = divmod(seed, base)
        chars.append(alphabet[digit])
    every = len(sizes)
    return ["".join(chars[i::every][:size]) for i, size in enumerate(sizes)]


# The digit values of a number's runs (4, 3 and 2 at most, from three each): the decimal digits of one integer.
_DIGIT_VALUES = st.integers(0, 10**9 - 1)


@st.composite
def unicode_number(draw: st.DrawFn) -> str:
    """A decimal number in Unicode digits of one script (mostly) or several: integer, with a fraction, an
    exponent, a sign, an underscore between two digits; or a digit-like character that is not a decimal
    digit (to the oracle's Python) put in."""
    (sign, point, exponent, odd, mixed, underscore), sizes = pick_each(draw, _NUMBER_FORMS, _RUN_SIZES)
    script = pick(draw, ZERO_TABLE)
    runs = seed_runs(draw(_DIGIT_VALUES), "0123456789", sizes, 3)
    runs = [run if keep else "" for run, keep in zip(runs, (True, point, bool(exponent)), strict=True)]
    parts = ["".join(_digit(pick(draw, ZERO_TABLE) if mixed else script, int(value)) for value in run)
             for run in runs]
    gaps = [(i, at) for i, part in enumerate(parts) for at in range(1, len(part))]
    if underscore and gaps:
        i, at = pick(draw, gaps)
        parts[i] = parts[i][:at] + "_" + parts[i][at:]
    body = parts[0] + ("." + parts[1] if point else "") + (exponent + parts[2] if exponent else "")
    if odd:
        at = pick(draw, range(len(body) + 1))
        body = body[:at] + pick(draw, NOT_DIGITS) + body[at:]
    return f"{sign}{body}"


# A number's form as one pick (a product of small picks, shrinking to its first entry): its sign, a fraction
# (half), an exponent (half; its letter's case and its sign), a character that is no digit put in (one in
# six), digits of several scripts (one in five), an underscore (one in three); with it, the lengths of its
# whole part (1 to 4 digits), fraction (1 to 3) and exponent (1 or 2), all alike.
EXPONENTS = ("", "", "", "", "", "", "e", "e-", "e+", "E", "E-", "E+")
_NUMBER_FORMS = [(sign, point, exponent, odd, mixed, underscore) for sign in ("", "", "-", "+")
                 for point in (False, True) for exponent in EXPONENTS for odd in [False] * 5 + [True]
                 for mixed in [False] * 4 + [True] for underscore in (False, False, True)]
_RUN_SIZES = [(whole, fraction, power) for whole in (1, 2, 3, 4) for fraction in (1, 2, 3) for power in (1, 2)]
NOT_DIGITS = NEWER_DIGITS + NOT_DECIMAL


def _pad(chars_of: list[str]) -> st.SearchStrategy[str]:
    # st.text over the characters is one string choice; a list of picks is two choices a character.
    return st.text("".join(chars_of), max_size=3)


def _padding(chars_of: list[str]) -> st.SearchStrategy[str]:
    """Mostly a run of ``chars_of``; a third of the time one character that is not whitespace to either
    parser (pooled: one choice for one of them)."""
    others = ISSPACE_ONLY + LOOKALIKES
    return pooled((2 * len(others), _pad(chars_of)), (1, others))


# What float() strips, mostly; sometimes what it does not.
float_padding = _padding(FLOAT_WHITESPACE)
# What pydantic-core trims, mostly; sometimes what it does not (JSON escapes them as needed).
pydantic_padding = _padding(PYDANTIC_WHITESPACE)


@composite
def padded(draw: st.DrawFn, body: st.SearchStrategy[str], pad: st.SearchStrategy[str]) -> str:
    """``body`` between two draws of ``pad``: a composite, where tuples(...).map(join) draws two layers more."""
    return draw(pad) + draw(body) + draw(pad)


# reward.txt text: Unicode numbers with float()'s whitespace and its lookalikes around them.
unicode_reward_text = padded(unicode_number(), float_padding)


@st.composite
def _int_fallback(draw: st.DrawFn) -> str:
    """What pydantic's float parse refuses and its int parse may take: underscores with padding, zeros
    (and underscores) before a sign, a ``.000`` fraction."""
    digits = pick(draw, ("1_0", "1_000", "0_1", "9_223_372_036_854_775_808", "1__0", "_1", "1_", "1_0.0", "1_0.00",
                         "1_0.5", "1_0.", "1_0e1", "0__1", "12"))
    prefix = pick(draw, ("", "", "", "", "-", "+", "0-", "00-", "0_-", "+0-", "0+", "-0-", "0--"))
    return prefix + digits


# Half pydantic's int fallback, a quarter fixed spellings (pooled), a quarter Unicode numbers; padded.
numeric_string = padded(
    pooled((18, _int_fallback()), (1, ("1", "0.5", "-1e3", "inf", "NaN", "1_0", "i_nf", ".5", "1.")),
           (9, unicode_number())),
    pydantic_padding,
)

# --- byte order marks -------------------------------------------------------------------

UTF8_BOM = b"\xef\xbb\xbf"
OTHER_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff", b"\xef\xbb", b"\xbb\xbf")
BOM_ENCODINGS = ("utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32")


@composite
def with_bom(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> bytes:
    """A text's bytes with a byte order mark somewhere: alone, before (after whitespace), inside,
    after, twice; another encoding's mark; or the whole text in an encoding that writes one."""
    text = draw(texts)
    data = text.encode("utf-8", "surrogatepass")
    how = pick(draw, ("alone", "before", "before", "after-space", "inside", "after", "twice", "other", "encoded"))
    if how == "alone":
        return pick(draw, (UTF8_BOM, UTF8_BOM * 2, *OTHER_BOMS))
    if how == "before":
        return UTF8_BOM + data
    if how == "after-space":
        return pick(draw, (b" ", b"\n", b"\r\n", b"\t")) + UTF8_BOM + data
    if how == "inside":
        at = draw(st.integers(0, len(text)))
        return (text[:at] + "\ufeff" + text[at:]).encode("utf-8", "surrogatepass")
    if how == "after":
        return data + UTF8_BOM
    if how == "twice":
        return UTF8_BOM * 2 + data
    if how == "other":
        return pick(draw, OTHER_BOMS) + data
    encoding = pick(draw, BOM_ENCODINGS)
    try:
        return text.encode(encoding)
    except UnicodeEncodeError:  # a lone surrogate: only UTF-8 with surrogatepass writes it
        return UTF8_BOM + data

