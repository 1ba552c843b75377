"""The mutant model and the catalogue: one bug each, written as an exact edit of one reference module.

A mutant names the module of the reference candidate it changes (a
surface folder's ``reference.py``, or a module of ``conformance/reference/``
they share), the text it finds there (exactly once: an edit that no longer applies is a
catalogue error, not a mutant that silently equals the reference) and what
replaces it. ``equivalent`` holds the argument why a mutant cannot change
any result, when that is so; such a mutant is run like the others, and one
that is killed after all shows the argument wrong.

The catalogue is each surface folder's ``mutants.py`` (its ``MUTANTS`` list).
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from conformance.core import surfaces
from conformance.core.loading import import_object
from conformance.errors import ConfigurationError

_SLUG = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


class CatalogueError(ConfigurationError):
    """A mutant that cannot be applied or is badly named; the message names it."""

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(f"the mutant catalogue: {message}", details)


@dataclass(frozen=True)
class Mutant:
    slug: str
    surface: str
    module: str  # the dotted name of a module of the reference candidate
    find: str
    replace: str
    bug: str  # the mistake, as a reimplementer would make it
    equivalent: str | None = None  # why no input can tell it from the reference, when that is so

    @property
    def id(self) -> str:
        return f"{self.surface}/{self.slug}"

    @property
    def path(self) -> Path:
        """The module's file, found without running it (only its parent packages are imported)."""
        try:
            spec = importlib.util.find_spec(self.module)
        except ImportError:
            spec = None
        if spec is None or spec.origin is None:
            raise CatalogueError(f"{self.id}: no reference module {self.module!r}")
        return Path(spec.origin)

    def source(self) -> str:
        """The mutated module's source; CatalogueError when the edit does not apply exactly once."""
        try:
            original = self.path.read_text(encoding="utf-8")
        except OSError as e:
            raise CatalogueError(f"{self.id}: no reference module {self.module!r}: {e}") from None
        found = original.count(self.find)
        if found != 1:
            where = "not found" if found == 0 else f"found {found} times"
            raise CatalogueError(f"{self.id}: the text to replace is {where} in {self.path.name}: {self.find!r}")
        return original.replace(self.find, self.replace)

    def check(self) -> None:
        if not _SLUG.fullmatch(self.slug):
            raise CatalogueError(f"{self.id}: a slug is lower-case words joined by '-'")
        if self.surface not in surfaces.SURFACES:
            raise CatalogueError(f"{self.id}: no surface {self.surface!r}")
        if self.find == self.replace:
            raise CatalogueError(f"{self.id}: the replacement is the text it replaces")
        source = self.source()
        try:
            compile(source, str(self.path), "exec")
        except SyntaxError as e:
            raise CatalogueError(f"{self.id}: the mutated {self.path.name} does not compile: {e}") from None


@cache
def catalogue() -> tuple[Mutant, ...]:
    """Every mutant, surface by surface; CatalogueError for the first that is broken or a repeated id."""
    found: dict[str, Mutant] = {}
    for surface in sorted(surfaces.SURFACES.values(), key=lambda s: s.name):
        listed: list[Mutant] = import_object(surface.mutants) if surface.mutants else []
        for mutant in listed:
            mutant.check()
            if mutant.id in found:
                raise CatalogueError(f"{mutant.id}: listed twice")
            found[mutant.id] = mutant
    return tuple(found.values())


def named(mutant_id: str) -> Mutant:
    for mutant in catalogue():
        if mutant.id == mutant_id:
            return mutant
    raise CatalogueError(f"no mutant {mutant_id!r}")
