"""What is left to simplify after Hypothesis has shrunk a finding: duplicate keys in its JSON files.

A reward.json is drawn as text, token by token, so the shrinker sees
characters, not members: it shrinks distinct keys toward the same smallest
key and leaves ``{"reward": 0, "reward": "1"}`` where ``{"reward": "1"}``
diverges the same way. :func:`without_duplicate_keys` offers each input
that has one occurrence of a duplicated key fewer, in one JSON file of the
input (a ``*_json`` field, as :func:`conformance.core.scope.json_files`
finds them); the generator keeps one if the divergence is still of the same
kind and shape, asking the oracle and the candidate again, and goes on
until no occurrence can go.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from conformance.core import scope

# A JSON token after any whitespace: a string, a structural character, or a run of anything else (a number,
# true/false/null, NaN, Infinity). Only text json.loads accepts is scanned, so this is enough to split it.
_TOKEN = re.compile(r'[ \t\n\r]*(?:("(?:[^"\\]|\\.)*")|([{}\[\]:,])|([^ \t\n\r{}\[\]:,"]+))', re.S)

_COLON = re.compile(r"[ \t\n\r]*:")

Member = tuple[str, int, int]  # key, where the member starts (its key) and ends (its value's last character + 1)


def objects(text: str) -> list[list[Member]]:
    """The members of each object in a JSON text, in order; read without recursion. [] if no object."""
    done: list[list[Member]] = []
    stack: list[tuple[list[Member] | None, str | None, int]] = []  # (members or None for an array, key, start)
    pending: tuple[str, int] | None = None  # the key just read in the innermost object, and where it started
    position = 0

    def value_ended(end: int) -> None:
        nonlocal pending
        if stack and stack[-1][0] is not None and pending is not None:
            members = stack[-1][0]
            members.append((pending[0], pending[1], end))
            pending = None

    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            break
        string, structure, _scalar = match.groups()
        start = match.end() - len(match.group(1) or match.group(2) or match.group(3))
        position = match.end()
        if structure in ("{", "["):
            stack.append(([] if structure == "{" else None, pending[0] if pending else None,
                          pending[1] if pending else -1))
            pending = None
        elif structure in ("}", "]"):
            members, key, key_start = stack.pop()
            if members is not None:
                done.append(members)
            pending = (key, key_start) if key is not None else None
            value_ended(position)
        elif structure in (":", ","):
            continue
        elif string is not None and stack and stack[-1][0] is not None and pending is None and \
                _COLON.match(text, position):
            pending = (json.loads(string), start)  # a key
        else:
            value_ended(position)
    return done


def _without(text: str, members: list[Member], index: int) -> str:
    """``text`` without the ``index``-th of an object's ``members``, and the comma that joined it to the others."""
    _, start, end = members[index]
    if index + 1 < len(members):
        return text[:start] + text[members[index + 1][1]:]
    if index > 0:
        return text[:members[index - 1][2]] + text[end:]
    return text[:start] + text[end:]


def removals(data: bytes) -> Iterator[bytes]:
    """``data`` with one occurrence of a duplicated key removed, each way there is; the earliest occurrences
    first (harbor's json.loads keeps the last, so removing an earlier one leaves the value as it was)."""
    try:
        text = data.decode("utf-8")
        json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return
    for members in objects(text):
        keys = [key for key, _, _ in members]
        for index, key in enumerate(keys):
            if keys.count(key) > 1:
                yield _without(text, members, index).encode("utf-8")


def _replaced(value: Any, path: tuple[str | int, ...], new: bytes) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {key: _replaced(item, rest, new) if key == head else item for key, item in value.items()}
    return [_replaced(item, rest, new) if index == head else item for index, item in enumerate(value)]


def without_duplicate_keys(value: Any) -> Iterator[Any]:
    """``value`` with one occurrence of a duplicated key fewer in one of its JSON files, each way there is."""
    for path, data in scope.json_files(value):
        for smaller in removals(data):
            yield _replaced(value, path, smaller)
