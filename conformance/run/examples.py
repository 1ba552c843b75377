"""Hypothesis example databases: where generated findings are kept so that the next run replays them first.

A database is named by a spec: a directory (Hypothesis's own directory
format, safe to share between processes and to merge), or ``redis://HOST:PORT``
for one shared by several machines (Hypothesis's Redis database, which needs
the ``redis`` package). Every run against a database replays what it holds
for the surface before it draws anything new; an input that no longer
diverges is dropped from it.

Each surface's examples are kept under a key of its own: the generator's
property function is the same for every surface, so Hypothesis's own key (a
digest of that function) would mix them.

Hypothesis replays its saved examples but keeps one failure per exception
type, and a generator raises one type per kind of divergence: several
findings of one kind (told apart by their shapes) would come back as one.
So each finding's input is also kept as itself, in its wire form, under the
surface's ``findings`` key, and replayed input by input before anything is
drawn (:func:`stored_findings`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from conformance.errors import UsageError
from conformance.kit import wire

REDIS = "redis://"


def open_database(spec: str | Path) -> ExampleDatabase:
    """The database a spec names; UsageError for one that cannot be opened."""
    text = str(spec)
    if text.startswith(REDIS):
        return _redis(text)
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise UsageError(f"example database {text}: not a directory")
    try:  # made now, not at the first finding: a run that found nothing still leaves the folder its report names
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"example database {text}: {e.strerror or e}") from None
    return DirectoryBasedExampleDatabase(str(path))


def _redis(url: str) -> ExampleDatabase:
    try:
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase
    except ImportError as e:
        raise UsageError(f"example database {url}: needs the redis package ({e})") from None
    return RedisExampleDatabase(redis.Redis.from_url(url))


class SurfaceDatabase(ExampleDatabase):
    """``inner`` seen by one surface's generator, under keys of its own.

    ``keep``: nothing is deleted, moved or replayed (a later round of a run, which takes the findings of
    earlier rounds as passing and would otherwise delete them as fixed).
    """

    def __init__(self, inner: ExampleDatabase, surface: str, *, keep: bool = False) -> None:
        super().__init__()
        self.inner, self.prefix, self.keep = inner, surface.encode() + b":", keep

    def save(self, key: bytes, value: bytes) -> None:
        self.inner.save(self.prefix + key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return () if self.keep else self.inner.fetch(self.prefix + key)

    def delete(self, key: bytes, value: bytes) -> None:
        if not self.keep:
            self.inner.delete(self.prefix + key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        if not self.keep:
            self.inner.move(self.prefix + src, self.prefix + dest, value)

    def __repr__(self) -> str:
        return f"SurfaceDatabase({self.inner!r}, {self.prefix!r}, keep={self.keep})"


def _findings_key(surface: str) -> bytes:
    return surface.encode() + b":findings"


def _stored(value: Any) -> bytes:
    return json.dumps(wire.encode(value), separators=(",", ":"), sort_keys=True).encode()


def save_finding(database: ExampleDatabase, surface: str, value: Any) -> None:
    """Keep a finding's input, to be replayed by every later run against the database."""
    database.save(_findings_key(surface), _stored(value))


def forget_finding(database: ExampleDatabase, surface: str, value: Any) -> None:
    """An input the candidate now conforms on: dropped, as Hypothesis drops a saved example that no longer fails."""
    database.delete(_findings_key(surface), _stored(value))


def stored_findings(database: ExampleDatabase, surface: str) -> list[Any]:
    """The inputs of the surface's findings the database holds, in a fixed order (whoever saved them, however
    many machines share it); an entry that is not a wire value (written by something else) is passed over."""
    values = []
    for raw in sorted(database.fetch(_findings_key(surface))):
        try:
            values.append(wire.decode(json.loads(raw)))
        except (ValueError, TypeError, RecursionError):  # WireError is a ValueError
            continue
    return values
