"""The character sets harbor's reward parsing depends on, probed one code point at a time.

Run inside the oracle's own virtualenv (its CPython, its pydantic-core)::

    <venv>/bin/python -I oracles/unicode_sets.py > conformance/strategies/unicode_sets.json

Nothing here is read from a Unicode table: every set is what the oracle's
own code accepts, asked of each code point (surrogates excepted: strict
UTF-8 never decodes to one).

* ``float_whitespace``: what ``float()`` strips around a number (reward.txt).
  It is not ``str.isspace()``: U+001C..U+001F are ``isspace`` but float()
  keeps them (``str_whitespace`` is the ``isspace`` set, for comparison).
* ``float_digits``: the characters ``float()`` reads as a decimal digit
  (Unicode Nd of this Python's ``unicodedata``), as ``[first, last, value of
  first]`` runs.
* ``pydantic_float_whitespace``: what pydantic-core trims around a numeric
  string before parsing it as a float (reward.json string values).
* ``pydantic_int_whitespace``: the same for its integer parse, which the
  ``float | int`` union falls back to (``" 1_0 "`` is the int 10).
* ``pydantic_digits`` / ``pydantic_int_digits``: the characters a numeric
  string may hold as a digit, in the float and in the integer parse.
* ``json_whitespace``: what ``json.loads`` skips around a document and between
  tokens; ``json_digits``: what it reads as a digit of a number.
* ``repr_printable``: what ``repr()`` of a string leaves unescaped
  (``str.isprintable()``), which shapes pydantic's ``input_value=...`` in a
  validation message, and where that message is cut.

Each set is a list of ``[first, last]`` code point ranges, inclusive.
"""

from __future__ import annotations

import importlib.metadata
import json
import platform
import sys
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

import pydantic
from harbor.models.verifier.result import VerifierResult

SURROGATES = range(0xD800, 0xE000)
CODE_POINTS = [cp for cp in range(sys.maxunicode + 1) if cp not in SURROGATES]


def _ranges(code_points: Iterable[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for cp in sorted(code_points):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def _digit_runs(values: dict[int, int]) -> list[list[int]]:
    """``[first, last, value of first]``: consecutive code points whose values go up by one."""
    out: list[list[int]] = []
    for cp in sorted(values):
        if out and out[-1][1] == cp - 1 and out[-1][2] + (cp - out[-1][0]) == values[cp]:
            out[-1][1] = cp
        else:
            out.append([cp, cp, values[cp]])
    return out


def _where(test: Callable[[str], bool]) -> set[int]:
    return {cp for cp in CODE_POINTS if test(chr(cp))}


def _float_is(text: str, expected: float) -> bool:
    try:
        return float(text) == expected
    except ValueError:
        return False


def _float_value(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _json_is(text: str, expected: object) -> bool:
    try:
        decoded: object = json.loads(text)
        return decoded == expected
    except ValueError:
        return False


def _json_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _rewards(texts: dict[int, str]) -> dict[int, Any]:
    """What harbor's VerifierResult makes of each text as a reward value (absent: a validation error)."""
    out: dict[int, Any] = {}
    for key, text in texts.items():
        try:
            rewards = VerifierResult.model_validate({"rewards": {"r": text}}).rewards
            assert rewards is not None  # a table of rewards validates to one
            out[key] = rewards["r"]
        except pydantic.ValidationError:
            pass
    return out


def _pydantic_where(make: Callable[[str], str], accept: Callable[[Any], bool]) -> set[int]:
    found = _rewards({cp: make(chr(cp)) for cp in CODE_POINTS})
    return {cp for cp, value in found.items() if accept(value)}


def _same(name: str, *sets: set[int]) -> set[int]:
    if any(s != sets[0] for s in sets[1:]):  # a leading and a trailing set that differ would need two lists
        raise SystemExit(f"{name}: the probes disagree: {[sorted(s ^ sets[0])[:10] for s in sets[1:]]}")
    return sets[0]


def _is_float(value: Any, expected: float) -> bool:
    return type(value) is float and value == expected


def _is_int(value: Any, expected: int) -> bool:
    return type(value) is int and value == expected


def derive() -> dict[str, Any]:
    float_whitespace = _same(
        "float_whitespace",
        _where(lambda c: _float_is(c + "1" + c, 1.0)),
        _where(lambda c: _float_is(c + "-1", -1.0)),  # no digit, sign or point passes these
        _where(lambda c: _float_is("1e1" + c, 10.0)),
    )
    float_digits = {}
    for cp in CODE_POINTS:
        value = _float_value(chr(cp))
        if value is not None:
            float_digits[cp] = int(value)
    pydantic_float_whitespace = _same(
        "pydantic_float_whitespace",
        _pydantic_where(lambda c: c + "1" + c, lambda v: _is_float(v, 1.0)),
        _pydantic_where(lambda c: c + "-1", lambda v: _is_float(v, -1.0)),
        _pydantic_where(lambda c: "1e1" + c, lambda v: _is_float(v, 10.0)),
    )
    # " 1_0 " fails the float parse (its underscores are taken out of the untrimmed text), so the int parse answers.
    pydantic_int_whitespace = _same(
        "pydantic_int_whitespace",
        _pydantic_where(lambda c: c + "1_0" + c, lambda v: _is_int(v, 10)),
        _pydantic_where(lambda c: c + "+1_0", lambda v: _is_int(v, 10)),  # "0-1_0" is -10: zeros go first
        _pydantic_where(lambda c: "1_0" + c, lambda v: _is_int(v, 10)),
    )
    pydantic_digits = _rewards({cp: chr(cp) for cp in CODE_POINTS})
    pydantic_int_digits = _rewards({cp: " 1_" + chr(cp) + " " for cp in CODE_POINTS})
    json_whitespace = _same(
        "json_whitespace",
        _where(lambda c: _json_is(c + "1" + c, 1)),
        _where(lambda c: _json_is("[1" + c + "]", [1])),
        _where(lambda c: _json_is("{" + c + '"a"' + c + ":" + c + "1}", {"a": 1})),
    )
    json_digits = {cp: value for cp in CODE_POINTS if type(value := _json_value(chr(cp))) is int}
    return {
        "derived_by": "oracles/unicode_sets.py",
        "versions": {
            "python": platform.python_version(),
            "unicodedata": unicodedata.unidata_version,
            "harbor": importlib.metadata.version("harbor"),
            "pydantic": importlib.metadata.version("pydantic"),
            "pydantic-core": importlib.metadata.version("pydantic-core"),
        },
        "float_whitespace": _ranges(float_whitespace),
        "str_whitespace": _ranges(_where(str.isspace)),
        "float_digits": _digit_runs(float_digits),
        "pydantic_float_whitespace": _ranges(pydantic_float_whitespace),
        "pydantic_int_whitespace": _ranges(pydantic_int_whitespace),
        "pydantic_digits": _digit_runs({cp: int(v) for cp, v in pydantic_digits.items()}),
        "pydantic_int_digits": _digit_runs({cp: v - 10 for cp, v in pydantic_int_digits.items() if type(v) is int}),
        "json_whitespace": _ranges(json_whitespace),
        "json_digits": _digit_runs(json_digits),
        "repr_printable": _ranges(_where(str.isprintable)),
    }


def dumps(sets: dict[str, Any]) -> str:
    """One range per line: the committed file diffs by range when a table changes."""
    lines = ["{"]
    items = list(sets.items())
    for i, (name, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, list):
            rows = [json.dumps(row) for row in value]
            body = ",\n    ".join(rows)
            lines.append(f'  "{name}": [\n    {body}\n  ]{comma}' if rows else f'  "{name}": []{comma}')
        else:
            lines.append(f'  "{name}": {json.dumps(value)}{comma}')
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(dumps(derive()))
