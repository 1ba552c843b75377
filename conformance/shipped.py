"""The files the suite ships beside its code: the case corpus and the oracle folder.

The repository keeps ``cases/`` and ``oracles/`` at its top level; the wheel
carries them inside the package, under ``conformance/shipped/`` (mapped at
build time, see pyproject.toml), so an installed suite needs no checkout and
adds no generically named top-level package. Everything that reads them goes
through here, so a checkout, an editable install and a wheel find the same
files.
"""

from __future__ import annotations

from enum import StrEnum
from importlib import resources
from pathlib import Path

from conformance.errors import UsageError


class Shipped(StrEnum):
    CASES = "cases"
    ORACLES = "oracles"


def folder(which: Shipped) -> Path:
    """The shipped folder: inside the installed package, else the checkout's top level."""
    packed = Path(str(resources.files("conformance") / "shipped" / which.value))
    if packed.is_dir():
        return packed
    beside = Path(__file__).resolve().parent.parent / which.value
    if beside.is_dir():
        return beside
    raise UsageError(f"this installation of harbor-conformance has no {which.value} folder (looked in {packed} "
                     f"and {beside}): reinstall the package")


def oracle_file(*parts: str) -> Path:
    """A file of the oracle folder (an adapter, a lock, an expectation file)."""
    return folder(Shipped.ORACLES).joinpath(*parts)
