"""Parsed case files kept on disk, so that a run parses only a case file it has not met as it is.

Parsing the shipped corpus (PyYAML's composer in Python, kept for the line
numbers and the limits it enforces, then pydantic) costs most of a second,
and every run paid it. What a case file parses to is decided by its path and
bytes, the files its ``!file`` tags read (the caller checks those again on
every use), the surfaces registered, and the code and libraries that parse
it. Under a key of all of these, the parse is kept as a pickle in
``parsed-cases-v1`` of the suite's cache folder.

It is never the reason a run fails or differs: a file that cannot be read,
written or unpickled is a miss. A pickle runs code when it is loaded, as the
bytecode Python keeps beside its sources does: one is read only from a
folder of this user's that no one else may write in, and only if it is this
user's own.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import os
import pickle
import stat
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import conformance
from conformance import __version__
from conformance.core import surfaces
from conformance.kit.candidate import owned_privately
from conformance.oracle import environments

LAYOUT = 1  # the files' layout; a new one is a new folder
# At most this many kept parses (the shipped corpus is 70 files, ~1 MB): each change to the suite's code keys a
# new set, so a process that keeps one first removes the oldest written past the limit.
MAX_ENTRIES = 1000
_pruned = False  # once a process


def folder() -> Path:
    return environments.suite_cache() / f"parsed-cases-v{LAYOUT}"


@functools.cache
def _code() -> str:
    """A digest of everything but the file that decides a parse: the suite's code (each surface's input model among
    it, or a plugin surface's own files), the surfaces registered, the parsing libraries and the interpreter."""
    digest = hashlib.sha256(f"{__version__}\0{sys.version}".encode())
    for library in ("pydantic", "pydantic-core", "PyYAML", "packaging"):
        digest.update(f"\0{library}={importlib.metadata.version(library)}".encode())
    package = Path(conformance.__file__).resolve().parent
    sources = sorted(package.rglob("*.py"))
    for name in sorted(surfaces.SURFACES):
        declared = surfaces.get(name)
        digest.update(f"\0{name}:{declared.package}".encode())
        # A plugin's surface: its folder's code, or its module's (the suite's own is digested above).
        found = getattr(sys.modules.get(declared.package), "__file__", None)
        module = Path(found).resolve() if found else None
        if module is not None and package not in module.parents:
            sources += sorted(module.parent.glob("*.py")) if module.name == "__init__.py" else [module]
    for source in sources:
        digest.update(b"\0" + str(source).encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()


def _entry(path: Path, text_digest: str) -> Path:
    # The path as spelled: a relative one names another file in another directory, whose !file reads (checked by
    # the caller) then differ.
    key = hashlib.sha256(f"{_code()}\0{os.fsencode(path)!r}\0{text_digest}".encode()).hexdigest()
    return folder() / f"{key[:40]}.pickle"


def recall(path: Path, text_digest: str) -> object | None:
    """What :func:`keep` kept for this file as it is; None when nothing usable is kept."""
    entry = _entry(path, text_digest)
    try:
        if not owned_privately(os.lstat(entry.parent), stat.S_IFDIR):
            return None
        with open(entry, "rb") as stream:
            if not owned_privately(os.fstat(stream.fileno()), stat.S_IFREG):
                return None
            found: object = pickle.load(stream)
    except Exception:  # missing, unreadable, truncated, or of classes that moved: parsed again
        return None
    return found


def keep(path: Path, text_digest: str, value: object) -> None:
    """Keep ``value`` as the parse of this file; written whole and renamed, so a reader sees it whole or not."""
    entry = _entry(path, text_digest)
    part: Path | None = None
    try:
        entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not owned_privately(os.lstat(entry.parent), stat.S_IFDIR):
            return
        _prune(entry.parent)
        with tempfile.NamedTemporaryFile(dir=entry.parent, suffix=".part", delete=False) as stream:
            part = Path(stream.name)
            pickle.dump(value, stream, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(part, entry)
    except Exception:  # a read-only or full disk, an unpicklable value: the next run parses again
        if part is not None:
            with contextlib.suppress(OSError):
                part.unlink(missing_ok=True)


def _prune(where: Path) -> None:
    """Remove the oldest kept parses past :data:`MAX_ENTRIES`, the first time a process keeps one."""
    global _pruned
    if _pruned:
        return
    _pruned = True
    dated = []
    for file in where.glob("*.pickle"):
        with contextlib.suppress(OSError):
            dated.append((file.stat().st_mtime, file))
    for _, file in sorted(dated)[:max(0, len(dated) + 1 - MAX_ENTRIES)]:
        with contextlib.suppress(OSError):
            file.unlink()


class Kept(NamedTuple):
    files: int
    bytes: int


def clear() -> Kept:
    """Remove every kept parse (and a write left half done): how many, and the bytes freed."""
    count = freed = 0
    where = folder()
    if where.is_dir():
        for file in [*where.glob("*.pickle"), *where.glob("*.part")]:
            try:
                freed += file.stat().st_size
                file.unlink()
            except OSError:
                continue
            count += 1
    return Kept(count, freed)


def info() -> Kept:
    """How many parses are kept, and their bytes."""
    where = folder()
    files = list(where.glob("*.pickle")) if where.is_dir() else []
    return Kept(len(files), sum(file.stat().st_size for file in files if file.is_file()))
