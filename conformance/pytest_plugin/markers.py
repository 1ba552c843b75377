"""Surfaces and tags as registered pytest markers, so ``-m "encoding and reward_parse"`` selects items.

A marker name is an identifier: a tag's or a surface's other characters
become ``_`` (``reward.parse`` is ``reward_parse``, ``reward.txt`` is
``reward_txt``). A name that pytest or another plugin already gives a
meaning to (``skip``, pytest-timeout's ``timeout``, a project's own marker)
is taken with ``conformance_`` in front, so a tag never skips an item or
sets its time limit.
"""

from __future__ import annotations

import re

import pytest

PREFIX = "conformance_"
ALL = "conformance"  # every item of the plugin
GENERATED = "generated"  # a surface's generated inputs


def _declared(line: str) -> str:
    """The marker an ini ``markers`` line declares: ``name(args): help`` -> ``name``."""
    return line.split(":")[0].split("(")[0].strip()


class Markers:
    """The names taken before the plugin registered its own, and each registered once."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.taken = {_declared(line) for line in config.getini("markers")}
        self.registered: set[str] = set()

    def name(self, text: str) -> str:
        name = re.sub(r"\W", "_", text, flags=re.ASCII)
        if name[:1].isdigit():
            name = "_" + name
        return PREFIX + name if name in self.taken else name

    def _register(self, text: str, description: str) -> str:
        """The marker for ``text``, declared in the ini ``markers`` (so --strict-markers accepts it)."""
        name = self.name(text)
        if name not in self.registered:
            self.registered.add(name)
            self.config.addinivalue_line("markers", f"{name}: {description}")
        return name

    def every_item(self) -> str:
        return self._register(ALL, "every item of harbor-conformance: cases and generated inputs")

    def generated(self) -> str:
        return self._register(GENERATED, "a surface's generated inputs (harbor-conformance)")

    def surface(self, surface: str) -> str:
        return self._register(surface, f"the {surface} surface's cases and generated inputs (harbor-conformance)")

    def tag(self, tag: str) -> str:
        """Tags are declared as their case files are collected: case files can be anywhere."""
        return self._register(tag, f"cases tagged {tag!r} (harbor-conformance)")
