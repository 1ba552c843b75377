"""Registries of the suite's extension points: surfaces, candidates, comparison policies.

Each is a name-keyed registry filled by a decorator, plus an entry-point
group through which another package adds to it without touching this one:

    [project.entry-points."harbor_conformance.surfaces"]
    my_surface = "my_pkg.surfaces"           # importing it runs its @surface(...) decorators

An entry point may name a module (imported for its decorators) or an object
(registered under the entry point's name, unless the import registered it).
Entry points are read on the first lookup or listing; a broken one is an
error that names it, never a silent gap. A registry's ``builtin`` members
(a module named by a string, so a lower layer never imports a higher one,
whose import registers them; or a function that registers them) are added
just before them, on that first lookup too: a broken member is then an
error of the command that looked, never of an import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from importlib import metadata
from types import ModuleType
from typing import Generic, TypeVar

from conformance.errors import UsageError

T = TypeVar("T")


class RegistryError(UsageError, LookupError):
    """An unknown name, a name registered twice, or an entry point that does not load."""


class Registry(Generic[T]):
    def __init__(self, kind: str, group: str, *, builtin: str | Callable[[], None] | None = None) -> None:
        self.kind = kind
        self.group = group
        self.builtin = builtin
        self._items: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        self._loaded = False
        self._broken: RegistryError | None = None

    def register(self, name: str, *, origin: str = "") -> Callable[[T], T]:
        """Decorator (or call ``register(name)(obj)``): file ``obj`` under ``name``."""

        def add(obj: T) -> T:
            if name in self._items:
                if self._items[name] is obj:  # the same object again: a module imported twice
                    return obj
                where = f" (by {self._origins[name]})" if self._origins.get(name) else ""
                raise RegistryError(f"{self.kind} {name!r} is registered twice{where}")
            self._items[name] = obj
            self._origins[name] = origin
            return obj

        return add

    def _load_entry_points(self) -> None:
        if self._broken is not None:
            raise self._broken  # every lookup says it again: a member that did not load is never a silent gap
        if self._loaded:
            return
        self._loaded = True
        try:
            self._load_members()
        except RegistryError as e:
            self._broken = e
            raise

    def _load_members(self) -> None:
        if isinstance(self.builtin, str):
            importlib.import_module(self.builtin)  # its members register themselves as it is imported
        elif self.builtin is not None:
            self.builtin()
        for entry in metadata.entry_points(group=self.group):
            try:
                loaded = entry.load()
            except Exception as e:
                raise RegistryError(f"entry point {entry.name!r} ({entry.value}) in group {self.group!r} "
                                    f"does not load: {type(e).__name__}: {e}") from e
            if not isinstance(loaded, ModuleType) and entry.name not in self._items:
                self.register(entry.name, origin=f"entry point {entry.value}")(loaded)

    def get(self, name: str) -> T:
        if name not in self._items:
            self._load_entry_points()
        try:
            return self._items[name]
        except KeyError:
            raise RegistryError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names()) or '(none)'}") from None

    def __contains__(self, name: object) -> bool:
        self._load_entry_points()
        return name in self._items

    def names(self) -> list[str]:
        self._load_entry_points()
        return list(self._items)

    def values(self) -> list[T]:
        self._load_entry_points()
        return list(self._items.values())

    def items(self) -> Iterator[tuple[str, T]]:
        self._load_entry_points()
        return iter(list(self._items.items()))

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
