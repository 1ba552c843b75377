"""``json.dumps``'s text of documents that share most of their containers with fixed templates.

A strategy that starts each draw from a template and copies only what it
changes (the containers on the path to each change) leaves most of the
document the template's own. Writing such a document out with an indent
runs Python's pure-Python encoder over all of it (CPython's C encoder has no
indent), which costs more than the rest of a draw. ``SharedText`` writes the
same text, keeping the text of each shared container once written: only
what a draw changed is written again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

_CONSTANTS = {None: "null", True: "true", False: "false"}


def _float(value: float) -> str:
    # As json.dumps with allow_nan (its default) spells floats.
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return _CONSTANTS[key]
    if isinstance(key, float):
        return _float(key)
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


class SharedText:
    """``json.dumps(value, indent=indent, ensure_ascii=False)``, remembering the text of the containers reachable
    from ``roots``. Those must never change once given (a document built from them copies what it edits)."""

    def __init__(self, roots: Iterable[Any]) -> None:
        self._roots = list(roots)  # kept alive: their ids key the texts
        self._shared: set[int] = set()
        self._texts: dict[tuple[int, int | None, int], str] = {}
        stack = list(self._roots)
        while stack:
            value = stack.pop()
            if isinstance(value, (dict, list)):
                if id(value) in self._shared:
                    continue
                self._shared.add(id(value))
            if isinstance(value, dict):
                stack.extend(value.values())
            elif isinstance(value, (list, tuple)):
                stack.extend(value)

    def dumps(self, value: Any, indent: int | None) -> str:
        return self._text(value, indent, 0)

    def _text(self, value: Any, indent: int | None, level: int) -> str:
        if isinstance(value, str):
            return json.encoder.encode_basestring(value)
        if value is None or value is True or value is False:
            return _CONSTANTS[value]
        if isinstance(value, int):
            return int.__repr__(value)
        if isinstance(value, float):
            return _float(value)
        if not isinstance(value, (dict, list, tuple)):
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
        key = (id(value), indent, level)
        text = self._texts.get(key)
        if text is None:
            text = self._container(value, indent, level)
            if id(value) in self._shared:
                self._texts[key] = text
        return text

    def _container(self, value: dict[Any, Any] | list[Any] | tuple[Any, ...], indent: int | None, level: int) -> str:
        if not value:
            return "{}" if isinstance(value, dict) else "[]"
        if indent is None:
            separator, before, after = ", ", "", ""
        else:
            before = "\n" + " " * (indent * (level + 1))
            separator, after = "," + before, "\n" + " " * (indent * level)
        if isinstance(value, dict):
            items = separator.join(json.encoder.encode_basestring(_key(key))
                                   + ": " + self._text(item, indent, level + 1) for key, item in value.items())
            return "{" + before + items + after + "}"
        return "[" + before + separator.join(self._text(item, indent, level + 1) for item in value) + after + "]"
