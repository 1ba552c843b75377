"""The oracle answer cache on disk: what a harbor release answered, kept for every later run that asks the same.

harbor 0.13.1 is pinned and its answers are deterministic, yet each run used
to ask it everything again. An answer is stored under a key made of

- the oracle's :class:`Identity`: the harbor release, the hash of the lock its
  virtualenv was built from, that virtualenv's Python, the protocol version,
  and a digest of the code the oracle runs besides harbor (the oracle folder's
  adapter and sandbox, each surface's oracle side, the candidate kit it serves through), so a new
  lock, interpreter or adapter never meets an answer another one gave;
- the surface;
- the input's canonical wire form (the JSON of ``wire.encode(value)`` with
  sorted keys and no spaces; wire dicts are lists of pairs, so key order,
  which harbor may see, stays part of it).

The store is one SQLite database in WAL mode with a busy timeout: readers
never wait, writers (pytest-xdist workers, shards, several ``certify``
processes, campaign workers) take turns, and a process killed mid-write
leaves the last committed state. It holds at most :data:`MAX_ENTRIES`
answers: past that, the oldest stored go first. Whatever goes wrong with it
(a folder that cannot be made, a file that is no database, a locked or
damaged one) turns the store off for the process, with one warning: a cache
is never the reason a run fails. The file is named by its layout version, so
a suite that stores differently starts a file of its own.

What is worth storing, and how a reply becomes an entry and back, is the
connection's business (:mod:`conformance.connection.cached`); this module
keeps opaque text by key.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from conformance import shipped
from conformance.core import surfaces
from conformance.kit import wire
from conformance.oracle import environments

FOLDER_ENV = "HARBOR_CONFORMANCE_ANSWER_CACHE"  # the cache's folder, when set
LAYOUT = 1  # the tables below; a new layout is a new file
FILE = f"answers-v{LAYOUT}.sqlite3"
MAX_ENTRIES = 250_000  # about 150 MB at the size of a ci run's answers (docs/scaling.md)
MAX_ANSWER_CHARS = 1024 * 1024  # an answer longer than this (as JSON) is not kept
BUSY_TIMEOUT_MS = 30_000  # how long a writer waits for another's transaction before giving up (a miss)


def folder() -> Path:
    """Where the answers live: ``$HARBOR_CONFORMANCE_ANSWER_CACHE``, else ``oracle-answers`` beside the oracle's
    virtualenvs in the user cache directory."""
    override = os.environ.get(FOLDER_ENV)
    return Path(override) if override else environments.suite_cache() / "oracle-answers"


def path() -> Path:
    return folder() / FILE


# -- the key ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    """Everything a harbor oracle's answer depends on besides the request."""

    harbor_version: str
    lock_hash: str
    python: str  # the virtualenv's interpreter, e.g. 3.12.1
    adapter: str  # digest of the oracle folder's and the candidate kit's Python files
    protocol: int = wire.WIRE_VERSION

    @property
    def text(self) -> str:
        return (f"harbor=={self.harbor_version} lock {self.lock_hash} python {self.python} "
                f"adapter {self.adapter} protocol {self.protocol}")

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:32]


@cache
def adapter_digest() -> str:
    """The code the oracle process runs besides harbor and its pinned dependencies: any edit to it is another
    oracle. Read once per process."""
    kit = Path(wire.__file__).resolve().parent
    named = [(f"{file.parent.name}/{file.name}", file)
             for file in [*sorted(shipped.folder(shipped.Shipped.ORACLES).glob("*.py")), *sorted(kit.glob("*.py"))]]
    named += [(f"{surface.name}/{file.name}", file) for surface in surfaces.SURFACES.values()
              for file in surface.oracle_files()]
    digest = hashlib.sha256()
    for name, file in named:
        digest.update(f"{name}\0".encode())
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()[:16]


def identity(harbor_version: str, log: Callable[[str], object] = lambda message: None) -> Identity:
    """The identity of the ``harbor==VERSION`` oracle (its virtualenv is created first if need be, as connecting
    to it would); OracleSetupError when it cannot be."""
    env = environments.ensure(harbor_version, log=log)
    return Identity(harbor_version, env.lock_hash, env.python_version, adapter_digest())


def key(oracle: str, surface: str, input_wire: Any) -> bytes:
    """An answer's key: the oracle's identity digest, the surface, and the input's canonical wire form."""
    # ensure_ascii (the default): a lone surrogate in a string is escaped, so every input has bytes.
    canonical = json.dumps(input_wire, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{oracle}\0{surface}\0{canonical}".encode("ascii")).digest()


# -- the store -------------------------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS oracles (
    digest TEXT PRIMARY KEY,
    identity TEXT NOT NULL,      -- Identity.text: what the digest stands for
    implementation TEXT          -- its handshake's implementation, as JSON
);
CREATE TABLE IF NOT EXISTS answers (
    id INTEGER PRIMARY KEY,      -- grows with each answer stored: the oldest go first
    key BLOB NOT NULL UNIQUE,
    oracle TEXT NOT NULL,
    surface TEXT NOT NULL,
    answer TEXT NOT NULL
);
"""


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """A write transaction, taken at once (a writer waits its turn here, not midway), committed or rolled back."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled it back itself (an I/O error, a full disk)
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class AnswerStore:
    """One process's handle on the database, opened on first use; safe to share between threads."""

    def __init__(self, file: Path | None = None, *, limit: int = MAX_ENTRIES,
                 warn: Callable[[str], object] = lambda message: None) -> None:
        self.file = file if file is not None else path()
        self.limit = limit
        self.warn = warn
        self.broken = ""  # why the store is off for this process ("" while it works)
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._entries = 0  # at least this many entries (counted, then added to): pruned when over the limit

    def _open(self) -> sqlite3.Connection:
        if self._db is None:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.file, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                 check_same_thread=False)
            try:
                db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")  # WAL: durable at checkpoints, never corrupt
                db.executescript(_SCHEMA)
                self._entries = db.execute("SELECT count(*) FROM answers").fetchone()[0]
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def _guarded(self, action: Callable[[sqlite3.Connection], Any], default: Any) -> Any:
        """``action`` on the database; on any failure of it, ``default``, and the store off from then on."""
        if self.broken:
            return default
        with self._lock:
            try:
                return action(self._open())
            except (sqlite3.Error, OSError) as e:
                self.broken = f"{type(e).__name__}: {e}"
                self.warn(f"the oracle answer cache ({self.file}) is not used from here on: {self.broken} "
                          "(`conformance cache clear` starts it afresh)")
                return default

    def get(self, keys: list[bytes]) -> dict[bytes, str]:
        """The stored answers among ``keys`` (those found)."""
        if not keys:
            return {}

        def look(db: sqlite3.Connection) -> dict[bytes, str]:
            found: dict[bytes, str] = {}
            for start in range(0, len(keys), 500):  # under SQLite's limit of bound parameters
                part = keys[start:start + 500]
                rows = db.execute(f"SELECT key, answer FROM answers WHERE key IN ({','.join('?' * len(part))})",
                                  part)
                found.update((bytes(k), a) for k, a in rows if isinstance(a, str))
            return found

        result: dict[bytes, str] = self._guarded(look, {})
        return result

    def put(self, oracle: str, entries: Iterable[tuple[bytes, str, str]]) -> None:
        """Store (key, surface, answer) entries of one oracle, in one transaction; a key stored again is replaced
        (a damaged answer is overwritten by the fresh one)."""
        rows = [(k, oracle, surface, answer) for k, surface, answer in entries if len(answer) <= MAX_ANSWER_CHARS]
        if not rows:
            return

        def store(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.executemany("INSERT OR REPLACE INTO answers (key, oracle, surface, answer) VALUES (?, ?, ?, ?)",
                               rows)
            self._entries += len(rows)
            if self._entries > self.limit:
                self._prune(db)

        self._guarded(store, None)

    def _prune(self, db: sqlite3.Connection) -> None:
        """Down to nine tenths of the limit, the oldest first (so not at every answer once full)."""
        self._entries = db.execute("SELECT count(*) FROM answers").fetchone()[0]
        excess = self._entries - self.limit * 9 // 10
        if self._entries <= self.limit or excess <= 0:
            return
        with _transaction(db):
            db.execute("DELETE FROM answers WHERE id <= (SELECT id FROM answers ORDER BY id LIMIT 1 OFFSET ?)",
                       (excess - 1,))
        self._entries = db.execute("SELECT count(*) FROM answers").fetchone()[0]

    def implementation(self, oracle: str) -> str | None:
        """The handshake stored for an oracle, as JSON."""
        def look(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT implementation FROM oracles WHERE digest = ?", (oracle,)).fetchone()
            return row[0] if row is not None and isinstance(row[0], str) else None

        found: str | None = self._guarded(look, None)
        return found

    def entries(self, oracle: str) -> list[tuple[bytes, str, str]]:
        """Every (key, surface, answer) stored for one oracle (by its identity digest)."""
        def look(db: sqlite3.Connection) -> list[tuple[bytes, str, str]]:
            rows = db.execute("SELECT key, surface, answer FROM answers WHERE oracle = ?", (oracle,))
            return [(bytes(k), str(surface), a) for k, surface, a in rows if isinstance(a, str)]

        found: list[tuple[bytes, str, str]] = self._guarded(look, [])
        return found

    def put_oracle(self, oracle: Identity, implementation: str) -> None:
        def store(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR REPLACE INTO oracles (digest, identity, implementation) VALUES (?, ?, ?)",
                       (oracle.digest, oracle.text, implementation))

        self._guarded(store, None)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


# -- what ``conformance cache`` shows and does ------------------------------------------------------------------


@dataclass
class Info:
    folder: Path
    bytes: int  # the folder's files
    entries: int = 0
    by_oracle: dict[str, dict[str, int]] = field(default_factory=dict)  # identity text -> surface -> entries
    problem: str = ""  # why the database could not be read


def _files(where: Path) -> list[Path]:
    return sorted(p for p in where.glob("answers-v*.sqlite3*") if p.is_file()) if where.is_dir() else []


def info(where: Path | None = None) -> Info:
    """What the cache holds, read only."""
    where = where if where is not None else folder()
    found = Info(where, sum(p.stat().st_size for p in _files(where)))
    file = where / FILE
    if not file.is_file():
        return found
    try:
        db = sqlite3.connect(f"{file.as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            rows = db.execute("SELECT coalesce(o.identity, a.oracle), a.surface, count(*) FROM answers a "
                              "LEFT JOIN oracles o ON o.digest = a.oracle GROUP BY a.oracle, a.surface").fetchall()
        finally:
            db.close()
    except sqlite3.Error as e:
        found.problem = f"{type(e).__name__}: {e}"
        return found
    for oracle, surface, count in rows:
        found.by_oracle.setdefault(str(oracle), {})[str(surface)] = int(count)
        found.entries += int(count)
    return found


def clear(where: Path | None = None) -> int:
    """Remove every file of the cache (damaged ones too); the bytes freed. A process that has the database open
    keeps its handle on the removed file; the next one starts a new file."""
    freed = 0
    for file in _files(where if where is not None else folder()):
        size = file.stat().st_size
        file.unlink(missing_ok=True)
        freed += size
    return freed
