"""Scopes: the inputs a candidate claims, and the inputs the suite itself leaves out.

A candidate's scope comes from its handshake (``implementation.scope``). An
implementation that answers part of a surface says so, e.g. an evsys metric
plugin named ``pass@3`` claims ``{"evsys.metric": {"metric": ["pass@3"]}}``. It
is then certified on the scoped surfaces alone, on the cases whose input keys
hold a claimed value, and on generated inputs drawn to hold one; the report's
header carries the scope. No scope (None): every surface and input.

The suite's own scope leaves out the inputs whose outcome depends on the
interpreter that runs harbor rather than on harbor: :data:`JSON_DEPTH_LIMIT`
and :func:`out_of_scope` say which. No generator draws one, and a case file
that holds one is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

Scope = dict[str, dict[str, list[Any]]]


def surfaces(scope: Scope | None, names: list[str]) -> list[str]:
    """Of ``names``, those the scope claims."""
    return names if scope is None else [name for name in names if name in scope]


def claims(scope: Scope | None, surface: str, value: Any) -> bool:
    if scope is None:
        return True
    if surface not in scope:
        return False
    return all(isinstance(value, dict) and value.get(key) in allowed for key, allowed in scope[surface].items())


def restrict(strategy: Any, scope: Scope | None, surface: str) -> Any:
    """Generated inputs within the scope: each scoped key gets one of its claimed values."""
    from hypothesis import strategies as st

    if scope is None or not scope.get(surface):
        return strategy
    keys = scope[surface]
    claimed = st.fixed_dictionaries({key: st.sampled_from(allowed) for key, allowed in keys.items()})
    return st.tuples(strategy, claimed).map(lambda drawn: {**drawn[0], **drawn[1]})


# -- what the suite leaves out ---------------------------------------------------------------

JSON_DEPTH_LIMIT = 500
"""A JSON file nesting arrays and objects this many levels deep, or deeper, is out of scope.

harbor reads reward.json (and agent-challenge a job's result.json) with
``json.loads``, whose C scanner recurses once per level. Past a depth it
raises ``RecursionError``, and that depth is the interpreter's, not harbor's:
CPython 3.12's C recursion limit is 1500, 3.13's 10000, and up to 3.11 the
scanner shares Python's recursion limit of 1000 with the frames already on
the stack; how many levels are left also depends on how deep the call is. In
the oracle (harbor 0.13.1 on CPython 3.12.1) reward.parse, multi_step.reward
and job.result raise ``RecursionError`` from 1491 levels on (below, a
``ValidationError`` or a value), outcome.summary reads a result.json nested
1498 levels or more as malformed; on CPython 3.11 a bare ``json.loads`` gives
up at 995, on 3.13.0 at 9999. harbor validates the parsed rewards as a flat
``dict[str, float | int]``, so pydantic-core's own recursion guard is never
reached. The limit is half of Python's default recursion limit: well below
every one of these, so what the suite checks is harbor's behaviour on every
interpreter, whatever the caller's stack.
"""

JSON_FIELD_SUFFIX = "_json"  # the input fields that hold a JSON file's bytes: reward_json, result_json

# What a JSON parser nests on: brackets, and strings (whose brackets do not count), read as bytes: the
# brackets and the quote are ASCII, which no byte of a multi-byte UTF-8 character can be.
_NESTING = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.S)


def json_depth(data: bytes) -> int:
    """How many levels the arrays and objects of a JSON text nest: the most brackets open at once.

    Counted over the whole text, valid JSON or not (a parser recurses into
    each bracket it opens before it finds what is wrong after it), so it
    errs toward too deep, never toward too shallow.
    """
    depth = deepest = 0
    for token in _NESTING.finditer(data):
        bracket = token.group()
        if bracket in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif bracket in (b"]", b"}"):
            depth = max(depth - 1, 0)
    return deepest


def json_files(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], bytes]]:
    """The JSON files an input carries, with where they are: the bytes of every ``*_json`` field, at any depth,
    in the order they are written."""
    # A stack, not recursion through generators: a pass_at_k input holds hundreds of trials, each a dict or two,
    # and every drawn input is walked. An entry is a place, what is there, and whether it is a file.
    stack: list[tuple[tuple[str | int, ...], Any, bool]] = [(path, value, False)]
    while stack:
        where, item, is_file = stack.pop()
        if is_file:
            yield where, item
            continue
        if isinstance(item, dict):
            inside = [((*where, key), child, isinstance(child, bytes)) for key, child in item.items()
                      if isinstance(child, (dict, list)) or (isinstance(child, bytes) and isinstance(key, str)
                                                             and key.endswith(JSON_FIELD_SUFFIX))]
        elif isinstance(item, list):
            inside = [((*where, index), child, False) for index, child in enumerate(item)
                      if isinstance(child, (dict, list))]
        else:
            continue
        stack.extend(reversed(inside))


def out_of_scope(value: Any) -> str | None:
    """Why the suite leaves out this input (None: it is in scope): a JSON file nested past :data:`JSON_DEPTH_LIMIT`."""
    for path, data in json_files(value):
        depth = json_depth(data)
        if depth >= JSON_DEPTH_LIMIT:
            where = ".".join(["input", *map(str, path)])
            return (f"{where} nests JSON {depth} levels deep: out of scope from {JSON_DEPTH_LIMIT} levels on, "
                    f"where whether json.loads raises RecursionError depends on the interpreter, not on harbor")
    return None


def in_scope(value: Any) -> bool:
    return out_of_scope(value) is None
