"""Stored inputs: what a generator run with a fixed seed drew, replayed by the next run with the same key.

A surface's generated inputs are decided by its strategy's code, the run's
profile, seed and budget, the values the candidate claims for the surface
(which narrow the strategy), and Hypothesis's version. For a candidate that
conforms, Hypothesis's choices depend on nothing else: every input passes,
so no shrinking and no new round starts. A run that drew its inputs so,
with no finding, stores them in order under an :class:`InputKey` of all of
these; the next run with the same key sends that sequence to candidate and
oracle, batched like cases, without drawing. A replayed input the candidate
does not conform on hands the surface over to live Hypothesis, which draws
the same inputs again and goes on to shrink, as a run without the store
would.

Only a seed that will come again is worth storing: a profile's fixed seed,
or one given with ``--seed``. The store is a folder of JSON Lines files, one
per key (a line of the key, then one wire-encoded input per line), written
whole to a temporary file and renamed: a reader sees a whole sequence or
none. Like the answer cache, it is never the reason a run fails: a file
that cannot be read or written is a miss, with one warning per process.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import json
import os
import tempfile
import warnings
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from conformance import __version__
from conformance.core import surfaces
from conformance.kit import wire
from conformance.oracle import environments, recordings

FOLDER_ENV = "HARBOR_CONFORMANCE_INPUT_CACHE"  # the store's folder, when set
LAYOUT = 1  # the files' layout; a new one is a new folder
# The code every strategy draws with besides its own surface's folder: shared strategies, the scope filter, the
# wire codec an input is stored in.
SHARED = ("strategies", "core/scope.py", "kit/wire.py")


def folder() -> Path:
    """Where stored inputs live: ``$HARBOR_CONFORMANCE_INPUT_CACHE``, else ``generated-inputs`` in the suite's
    cache folder."""
    override = os.environ.get(FOLDER_ENV)
    return Path(override) if override else environments.suite_cache() / f"generated-inputs-v{LAYOUT}"


@dataclass(frozen=True)
class InputKey:
    """Everything that decides the inputs a conforming candidate's generator run draws for one surface."""

    surface: str
    strategy: str  # :func:`strategy_fingerprint`
    profile: str
    seed: int
    budget: int
    hypothesis: str
    claimed: str  # a digest of the values the candidate claims for the surface ("" when it claims none)

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:24]

    def file(self, where: Path) -> Path:
        return where / self.surface / f"{self.digest()}.jsonl"


# The parts of a surface folder no strategy draws with: the reference, its mutants, what the oracle runs.
NOT_DRAWN = frozenset({"reference.py", "mutants.py", "coverage.py", "features.py", "connector.py", "harbor.py"})


@functools.cache
def _drawn_with() -> tuple[tuple[Path, bytes], ...]:
    """The files every strategy may draw with, and their bytes, read once per process: the Python files of every
    surface folder but those in :data:`NOT_DRAWN` (a strategy may draw another surface's inputs), the shared code
    in :data:`SHARED`, and the corpus's scripts, which a strategy draws uv-script metrics from."""
    from conformance.corpus.cases import default_root

    package = Path(__file__).resolve().parent.parent
    files = [f for f in sorted(package.glob("surfaces/*/*.py")) if f.name not in NOT_DRAWN]
    for part in SHARED:
        found = package / part
        files += sorted(found.rglob("*.py")) if found.is_dir() else [found]
    files += sorted(f for f in default_root().glob("*/scripts/*") if f.is_file())
    return tuple((file, file.read_bytes()) for file in files)


@functools.cache
def strategy_fingerprint(surface_name: str) -> str:
    """A digest of what a surface's inputs are drawn from (:func:`_drawn_with`, and a surface of another package's
    own files), and of the suite's version."""
    shared = _drawn_with()
    known = {file for file, _ in shared}
    declared = surfaces.get(surface_name)
    own = declared.folder
    if own is None:  # a surface declared in a plain module: that module
        own_files = [Path(str(importlib.import_module(declared.package).__file__))]
    else:
        own_files = [f for f in sorted(own.glob("*.py")) if f.name not in NOT_DRAWN]
    digest = hashlib.sha256(__version__.encode())
    for file, data in [*shared, *((f, f.read_bytes()) for f in own_files if f not in known)]:
        digest.update(file.name.encode() + b"\0" + data)
    return digest.hexdigest()[:24]


@functools.cache
def hypothesis_version() -> str:
    """Hypothesis's version, from its installed metadata: a run that sends stored inputs never imports it."""
    try:
        return importlib.metadata.version("hypothesis")
    except importlib.metadata.PackageNotFoundError:  # on the path without its metadata
        from hypothesis import __version__

        return __version__


def key(surface_name: str, *, profile: str, seed: int, budget: int, claimed: Any) -> InputKey:
    claimed_digest = "" if not claimed else hashlib.sha256(
        json.dumps(wire.encode(claimed), sort_keys=True).encode()).hexdigest()[:24]
    return InputKey(surface_name, strategy_fingerprint(surface_name), profile, seed, budget, hypothesis_version(),
                    claimed_digest)


class InputStore:
    """The stored sequences under ``where`` (:func:`folder` by default), read and written by key; a key with none
    there is looked up in ``shipped`` (the suite's recordings, :mod:`conformance.oracle.recordings`), never
    written to."""

    def __init__(self, where: Path | None = None, shipped: Path | None = None) -> None:
        self.where = where if where is not None else folder()
        self.shipped = shipped if shipped is not None else recordings.inputs_folder()
        self.from_shipped = 0  # sequences sent from the recordings
        self._off = False

    def _warn(self, doing: str, error: Exception) -> None:
        if not self._off:
            warnings.warn(f"stored inputs in {self.where} turned off: cannot {doing}: {error}", stacklevel=3)
        self._off = True

    def get(self, found: InputKey) -> list[Any] | None:
        """The inputs stored under ``found``, decoded, in the order they were drawn; None when there are none."""
        own = None if self._off else read_sequence(found.file(self.where), found)
        if own is not None:
            return own
        shipped = read_sequence(found.file(self.shipped), found)
        self.from_shipped += shipped is not None
        return shipped

    def put(self, found: InputKey, values: Iterable[Any]) -> None:
        """Store ``values`` (in the order drawn) under ``found``, replacing what was there."""
        if self._off:
            return
        target = found.file(self.where)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=target.parent, suffix=".part",
                                             delete=False) as out:
                out.write(json.dumps(asdict(found), sort_keys=True) + "\n")
                for value in values:
                    out.write(json.dumps(wire.encode(value), separators=(",", ":")) + "\n")
            os.replace(out.name, target)
        except (OSError, ValueError, TypeError) as e:
            self._warn(f"write {target}", e)


def read_sequence(path: Path, expected: InputKey) -> list[Any] | None:
    """The inputs of a stored file whose first line is ``expected``; None for a missing, foreign or damaged one."""
    try:
        with path.open(encoding="utf-8") as lines:
            if json.loads(next(lines, "null")) != asdict(expected):
                return None
            return [wire.decode(json.loads(line)) for line in lines]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError):
        return None  # damaged: the next run that draws writes it anew


@dataclass
class Info:
    folder: Path
    bytes: int = 0
    sequences: int = 0
    by_surface: dict[str, int] = field(default_factory=dict)  # sequences stored per surface


def info(where: Path | None = None) -> Info:
    where = where if where is not None else folder()
    found = Info(where)
    if not where.is_dir():
        return found
    for file in where.glob("*/*.jsonl"):
        found.bytes += file.stat().st_size
        found.sequences += 1
        found.by_surface[file.parent.name] = found.by_surface.get(file.parent.name, 0) + 1
    return found


def clear(where: Path | None = None) -> int:
    """Remove every stored sequence (and a write left half done); the bytes freed."""
    where = where if where is not None else folder()
    freed = 0
    if where.is_dir():
        for file in [*where.glob("*/*.jsonl"), *where.glob("*/*.part")]:
            freed += file.stat().st_size
            file.unlink(missing_ok=True)
    return freed
