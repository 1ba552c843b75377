"""A small kit for writing candidates in Python.

A candidate is a set of surface handlers. Each handler takes the decoded
input (plain Python values: dict, list, str, int, float, bool, bytes, None)
and returns the decoded output, or raises: an exception raised by a handler
is the scoring behaviour's exception (reported as ``raised`` with its class
name), :class:`SkipSurface` declines the request. The same object serves
in-process (``module:attr``) and over stdin/stdout (``exec:``) through
:meth:`Candidate.serve`. Standard library only, so it runs anywhere.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import itertools
import os
import shutil
import stat
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Any

from . import wire

Handler = Callable[[Any], Any]


def distinct_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as the suite reports it when a key repeats: the n-th repeat becomes ``"<key> (n)"``.

    Python's json keeps only the last of two equal keys; harbor's result.json
    can hold a key twice (two NaN rewards are two buckets, both written
    ``"nan"``). Use as ``json.loads(..., object_pairs_hook=distinct_keys)``.
    """
    out: dict[str, Any] = {}
    for key, value in pairs:
        name, n = key, 1
        while name in out:
            n += 1
            name = f"{key} ({n})"
        out[name] = value
    return out


# The folder of the request being answered in this thread (set by working_folder), None outside one.
_FOLDER: contextvars.ContextVar[Path | None] = contextvars.ContextVar("conformance_working_folder", default=None)


@contextlib.contextmanager
def working_folder(files: dict[str, bytes] | None, *, change_directory: bool = True) -> Iterator[Path]:
    """A fresh folder holding ``files`` (relative name -> bytes), the current directory meanwhile.

    Inputs that name files (a ``uv-script`` metric's ``script_path``) carry
    them along; relative names then resolve as they would in a job's folder.
    ``change_directory=False`` leaves the process's directory alone (it is
    every thread's), for handlers answering at once (``Candidate(concurrency=)``):
    they resolve names with :func:`in_folder` and run programs with ``cwd=``
    the folder instead.
    """
    checked = [(name, _relative(name), data) for name, data in (files or {}).items()]
    folder = _new_folder(checked)
    hold = _hold(folder)
    previous = os.getcwd() if change_directory else None
    token = None
    try:
        for _, relative, data in checked:
            target = folder.joinpath(*relative.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        token = _FOLDER.set(folder)
        if previous is not None:
            os.chdir(folder)
        yield folder
    finally:
        if previous is not None:
            os.chdir(previous)
        if token is not None:
            _FOLDER.reset(token)
        _remove(folder, hold)


@contextlib.contextmanager
def held_folder(prefix: str) -> Iterator[Path]:
    """A new, empty folder of this process's in :func:`scratch_folder` (``prefix`` and random letters), removed
    after; one that a killed process left behind is removed by a later process (see :func:`_sweep`)."""
    parent = _private_parent()
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent if parent is not None else scratch_folder()))
    hold = _hold(folder)
    try:
        yield folder
    finally:
        _remove(folder, hold)


# A folder a killed process left in the private parent is removed by the first process after it that makes one
# (once a process), when no process holds it and it is older than this: a folder is held from a moment after it
# is made, and a release of the suite that held none is given a request's time.
STALE_AFTER = 300.0


def _hold(folder: Path) -> int | None:
    """An open descriptor of ``folder`` holding an exclusive lock on it, released with the descriptor when the
    process ends however it ends (killed too); None where there are no such locks (Windows) or it failed."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _remove(folder: Path, hold: int | None) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    if hold is not None:
        os.close(hold)


def _sweep(parent: Path, now: float | None = None) -> list[Path]:
    """Remove the folders in ``parent`` (this user's private one) that a process which ended without removing them
    (killed) left: older than STALE_AFTER and held by no process. Short-lived folders live in memory
    (:func:`scratch_folder`): left there, each would hold its share of memory until the machine restarts.
    Returns the folders removed."""
    removed: list[Path] = []
    now = time.time() if now is None else now
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        try:
            young = now - entry.stat(follow_symlinks=False).st_mtime < STALE_AFTER
            if young or not entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        folder = Path(entry.path)
        hold = _hold(folder)
        if hold is not None:  # nobody holds it: its process is gone
            _remove(folder, hold)
            removed.append(folder)
    return removed


def _relative(name: str) -> PurePosixPath:
    relative = PurePosixPath(name)
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        raise ValueError(f"file name {name!r} must be relative and stay inside the folder")
    return relative


def _new_folder(files: list[tuple[str, PurePosixPath, Any]]) -> Path:
    """A new, empty folder named by the files it will hold, and by how many folders of them exist at once.

    uv keeps a script's environment by the script's path: a script with
    inline dependencies at a path it has not seen costs a resolution against
    the index (a request to it) and another environment in uv's cache, on
    every run. The same files therefore get the same path from one request
    to the next (the second of two at once the next slot), inside a folder
    of this user's only; where that folder cannot be had, a random one.
    """
    digest = hashlib.sha256()
    for name, _, data in files:
        content = memoryview(data)  # what write_bytes takes, refused as it refuses it
        digest.update(name.encode("utf-8", "surrogatepass") + b"\0" + content.nbytes.to_bytes(8, "big"))
        digest.update(content)
    parent = _private_parent()
    if parent is None:
        return Path(tempfile.mkdtemp(prefix="conformance-files-", dir=scratch_folder()))
    for slot in itertools.count():
        folder = parent / f"{digest.hexdigest()[:20]}-{slot}"
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue  # in use (or left by a run that was killed)
        return folder
    raise AssertionError("unreachable")


def _private_parent() -> Path | None:
    """``conformance-files-UID`` in :func:`scratch_folder`, made if need be: a folder of this user's that no one else
    may write in (a name others can guess must not be theirs to make first); None where it is not such a folder."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    parent = Path(scratch_folder()) / f"conformance-files-{uid if uid is not None else 'user'}"
    try:
        parent.mkdir(mode=0o700, exist_ok=True)
        found = os.lstat(parent)
    except OSError:
        return None
    if not owned_privately(found, stat.S_IFDIR):
        return None
    _swept(parent)
    return parent


def owned_privately(found: os.stat_result, kind: int) -> bool:
    """Whether ``found`` (an ``lstat``/``fstat``) is of ``kind`` (``stat.S_IFDIR``, ``S_IFREG``...), this user's,
    and writable by no one else: a file or folder whose content no other user can have put there."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    return stat.S_IFMT(found.st_mode) == kind and not found.st_mode & 0o022 and (uid is None or found.st_uid == uid)


@functools.cache
def _swept(parent: Path) -> None:
    _sweep(parent)


# Linux's memory-backed folder, and what it must have free to take short-lived folders (a request's hold a few
# files and go when it ends).
MEMORY_FOLDER = "/dev/shm"
MEMORY_ROOM = 256 * 2**20
_MOUNTS = "/proc/self/mounts"


def scratch_folder() -> str:
    """Where short-lived folders go (a request's working folder, a job's trial folders): the temporary folder the
    user names (``TMPDIR``, ``TEMP`` or ``TMP``); else, on Linux, the memory-backed ``/dev/shm`` when it is a tmpfs
    this process may write in and run programs from, with room to spare; else the system's temporary folder.

    A harbor job makes and removes some forty folders for each trial; on a virtual machine's disk that was a third
    of a multi-step input's cost, and in memory next to nothing.
    """
    if any(os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")) or not _memory_backed(MEMORY_FOLDER):
        return tempfile.gettempdir()
    return MEMORY_FOLDER


@functools.cache
def _memory_backed(folder: str) -> bool:
    """Whether ``folder`` is a tmpfs mounted writable and not ``noexec`` (the last mount on it is the one seen),
    that this process may write in, with :data:`MEMORY_ROOM` free."""
    options = None
    try:
        with open(_MOUNTS, encoding="utf-8", errors="replace") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) >= 4 and fields[1] == folder:
                    options = fields[3].split(",") if fields[2] == "tmpfs" else None
        if options is None or "ro" in options or "noexec" in options or not os.access(folder, os.W_OK | os.X_OK):
            return False
        room = os.statvfs(folder)
    except OSError:  # no such table (not Linux), or the folder gone
        return False
    return room.f_bavail * room.f_frsize >= MEMORY_ROOM


def cores() -> int:
    """The cores this process may use: a container's share, not the machine's (what a ``concurrency`` is sized
    by)."""
    if hasattr(os, "sched_getaffinity"):  # not on macOS and Windows
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def current_folder() -> Path | None:
    """The folder of the :func:`working_folder` this thread is in; None outside one (the process's directory)."""
    return _FOLDER.get()


def in_folder(name: str | os.PathLike[str]) -> Path:
    """``name`` as a program run in the current working folder would find it (an absolute name as it is)."""
    folder = _FOLDER.get()
    return Path(name) if folder is None else folder / name


def reads_files(metric: Any, files: dict[str, bytes] | None) -> bool:
    """Whether computing ``metric`` may touch the working folder: a uv-script, or an input shipping files.

    A built-in metric reads no file; it is computed without a fresh folder,
    which costs more than the metric itself.
    """
    return bool(files) or not isinstance(metric, dict) or metric.get("type") == "uv-script"


class SkipSurface(Exception):
    """Raise from a handler to answer ``skipped`` with this reason."""


class Candidate:
    def __init__(
        self,
        name: str,
        version: str,
        *,
        language: str = "python",
        homepage: str | None = None,
        dependencies: dict[str, str] | None = None,
        concurrency: int = 1,
    ) -> None:
        self.name = name
        self.version = version
        self.language = language
        self.homepage = homepage
        self.dependencies = dict(dependencies or {})
        # In process, how many whole-job requests (a surface's inputs that are never batched) may be answered at
        # once, each in a thread of its own. Above 1 only for handlers that share no state of the process (its
        # directory: see working_folder's change_directory); over stdin/stdout requests come one at a time.
        self.concurrency = concurrency
        self.handlers: dict[str, Handler] = {}
        # The only inputs claimed, per surface: {surface: {input key: [allowed values]}} (see protocol.md).
        self.scope: dict[str, dict[str, list[Any]]] | None = None

    def surface(self, name: str) -> Callable[[Handler], Handler]:
        """Decorator: register the handler for one surface."""

        def register(handler: Handler) -> Handler:
            self.handlers[name] = handler
            return handler

        return register

    def derive(self, name: str, concurrency: int | None = None, **overrides: Handler) -> Candidate:
        """A copy under another name with some handlers replaced.

        It answers as concurrently as this one only with none replaced: a replacement may rely on the process's
        state (a ``working_folder`` that changes directory). ``concurrency`` says otherwise.
        """
        other = Candidate(
            name, self.version, language=self.language, homepage=self.homepage, dependencies=self.dependencies,
            concurrency=concurrency if concurrency is not None else 1 if overrides else self.concurrency,
        )
        other.handlers = {**self.handlers, **overrides}
        return other

    # -- the protocol -------------------------------------------------------

    def started(self, protocol: int) -> dict[str, Any]:
        implementation: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "surfaces": sorted(self.handlers),
            "dependencies": self.dependencies,
            "batch": True,
        }
        if self.homepage:
            implementation["homepage"] = self.homepage
        if self.scope is not None:
            implementation["scope"] = self.scope
        return {"protocol": protocol, "implementation": implementation}

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        seq = request.get("seq")
        surface = request.get("surface")
        handler = None if surface is None else self.handlers.get(surface)
        if handler is None:
            return {"seq": seq, "skipped": {"reason": f"surface {surface!r} not supported"}}
        try:
            value = wire.decode(request.get("input"))
        except wire.WireError as e:
            return {"seq": seq, "errored": {"message": f"undecodable input: {e}"}}
        try:
            output = handler(value)
        except SkipSurface as e:
            return {"seq": seq, "skipped": {"reason": str(e)}}
        except Exception as e:  # the scoring code's exception is an output
            return {"seq": seq, "raised": {"type": type(e).__name__, "message": str(e)}}
        try:
            return {"seq": seq, "output": wire.encode(output)}
        except wire.WireError as e:
            return {"seq": seq, "errored": {"message": str(e), "traceback": traceback.format_exc()}}

    def handle(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """Answer one request; ``None`` for ``stop``."""
        cmd = request.get("cmd")
        if cmd == "run":
            return self.run(request)
        if cmd == "batch":
            with wire.gc_paused:  # a batch's values, read and written, are many containers: see wire.gc_paused
                return {"seq": request.get("seq"), "replies": [self.run(item) for item in request.get("items", [])]}
        if cmd == "start":
            return self.started(request.get("protocol", 1))
        if cmd == "stop":
            return None
        return {"errored": {"message": f"unknown command {cmd!r}"}}

    def serve(self, stdin: IO[str] | None = None, stdout: IO[str] | None = None,
              codec: wire.Codec | None = None) -> None:
        """Speak the protocol over JSON Lines until ``stop`` or end of input.

        ``codec``: the JSON text of the lines (the same lines either way). Without one, a candidate program's
        entry point is where the environment is read: ``HARBOR_CONFORMANCE_JSON=stdlib`` keeps to the standard
        library, else the fast codec where msgspec is installed.
        """
        stdin = stdin or sys.stdin
        stdout = stdout or sys.stdout
        lines = codec if codec is not None else wire.codec_from_environment(os.environ)
        for line in stdin:
            if not line.strip():
                continue
            try:
                request = lines.loads(line)
            except wire.WireError as e:
                stdout.write(lines.dumps({"errored": {"message": str(e)}}) + "\n")
                stdout.flush()
                continue
            reply = self.handle(request)
            if reply is None:
                return
            stdout.write(lines.dumps(reply) + "\n")
            stdout.flush()
