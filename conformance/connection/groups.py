"""The operating system's side of a candidate process: its process group and its working directory.

A candidate runs in a session, and so a process group, of its own: whatever
it starts is stopped with it, SIGTERM to the whole group first and SIGKILL to
what is left after a grace period. A process that leaves the group (with
``setsid``, as a daemon or a build server does, double-forked or not) is
found by what every descendant inherits: the candidate's environment holds
:data:`TOKEN_ENV`, naming its working directory, and on Linux every process
of this user whose environment holds it is stopped the same way after the
group (:func:`terminate_carrying`). What clears its environment, or runs as
another user, escapes; without ``/proc`` (macOS) only the group is stopped.

Its working directory is named after the harness's pid and holds a record
of the group (:data:`OWNER_FILE`). A harness killed outright (SIGKILL, a
machine lost) cleans up nothing; the next run finds the directories whose
harness is gone (:func:`sweep_stale`), stops the group each one records and
removes it. A directory whose harness is alive is never touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

WORKDIR_PREFIX = "conformance-candidate-"
OWNER_FILE = ".conformance-owner.json"
KILL_GRACE = 1.0  # seconds between SIGTERM and SIGKILL to a process group
TOKEN_ENV = "HARBOR_CONFORMANCE_CANDIDATE"  # in a candidate's environment: its working directory
_POLL = 0.02
_NAME = re.compile(re.escape(WORKDIR_PREFIX) + r"(\d+)-[^/]+")


@dataclass(frozen=True)
class _Stat:
    state: str
    pgid: int
    started: int  # clock ticks after boot: with the pid, it names one process for good


def _stat(pid: int) -> _Stat | None:
    """A process's state, group and start time from /proc; None when it is gone (or there is no /proc)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses; the fields after it may not.
    fields = text[text.rfind(")") + 2:].split()
    try:
        return _Stat(fields[0], int(fields[2]), int(fields[19]))
    except (IndexError, ValueError):
        return None


def started_at(pid: int) -> int | None:
    stat = _stat(pid)
    return stat.started if stat is not None else None


def _has_proc() -> bool:
    return Path("/proc/self/stat").exists()


def group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (a zombie does not: it waits for a parent to reap it)."""
    if _has_proc():
        with contextlib.suppress(OSError):
            for entry in os.scandir("/proc"):
                if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None \
                        and stat.pgid == pgid and stat.state not in ("Z", "X"):
                    return True
            return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def terminate_group(pgid: int, reap: Callable[[], object] = lambda: None, grace: float = KILL_GRACE) -> None:
    """Stop every process of group ``pgid``: SIGTERM, then SIGKILL to those still running after ``grace`` s.

    ``reap`` reaps the group's leader when it is the caller's child (a zombie
    child of ours would otherwise count as running).
    """
    if pgid <= 1 or pgid == os.getpgrp():
        return  # never the harness's own group, nor everything
    _signal_group(pgid, signal.SIGTERM)
    _signal_group(pgid, signal.SIGCONT)  # a stopped process acts on SIGTERM only once it runs again
    deadline = time.monotonic() + grace
    while True:
        reap()
        if not group_alive(pgid):
            return
        if time.monotonic() >= deadline:
            break
        time.sleep(_POLL)
    _signal_group(pgid, signal.SIGKILL)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:  # SIGKILL cannot be refused: wait for it to take effect
        reap()
        if not group_alive(pgid):
            return
        time.sleep(_POLL)


def carrying(token: str) -> list[tuple[int, int]]:
    """This user's running processes whose environment holds the candidate ``token`` ((pid, start time) each): its
    descendants, in its group or not, whatever became of their parents (none on a system without /proc)."""
    if not _has_proc():
        return []
    needle = f"\0{TOKEN_ENV}={token}\0".encode()
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as environ:  # another user's: not readable
                    held = b"\0" + environ.read()
            except OSError:
                continue
            if needle in held and (stat := _stat(int(entry.name))) is not None and stat.state not in ("Z", "X"):
                found.append((int(entry.name), stat.started))
    return found


def _still(processes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(pid, started) for pid, started in processes
            if (stat := _stat(pid)) is not None and stat.started == started and stat.state not in ("Z", "X")]


def _signal(processes: list[tuple[int, int]], signum: int) -> None:
    for pid, _ in _still(processes):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _reap(processes: list[tuple[int, int]]) -> None:
    """Reap those that are this process's children (an orphan a subreaper inherited): no zombie is left of them."""
    for pid, _ in processes:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def terminate_carrying(token: str, grace: float = KILL_GRACE) -> None:
    """Stop every process that carries the candidate ``token`` (see the module's docstring): SIGTERM, then SIGKILL to
    those still running after ``grace`` s. A process is named by its pid and start time, so a pid reused in the
    meantime is never signalled."""
    processes = carrying(token)
    if not processes:
        return
    _signal(processes, signal.SIGTERM)
    _signal(processes, signal.SIGCONT)
    for signum in (signal.SIGKILL, None):
        deadline = time.monotonic() + grace
        while _still(processes) and time.monotonic() < deadline:
            _reap(processes)
            time.sleep(_POLL)
        if signum is not None and _still(processes):
            _signal(processes, signum)
    _reap(processes)


# -- working directories -----------------------------------------------------


@cache
def _host() -> str:
    return socket.gethostname()


def new_workdir() -> Path:
    """A fresh working directory for a candidate, named after this harness's pid; stale ones are swept first."""
    sweep_stale()
    path = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-"))
    record_owner(path)
    return path


def record_owner(workdir: Path, pgid: int | None = None, *, harness: int | None = None) -> None:
    """Write who owns ``workdir``: this harness (or ``harness``), and the process group it runs there, if any."""
    harness = os.getpid() if harness is None else harness
    record = {"harness": harness, "harness_started": started_at(harness), "host": _host(), "pgid": pgid,
              "leader_started": started_at(pgid) if pgid is not None else None}
    temporary = workdir / f"{OWNER_FILE}.{os.getpid()}"
    try:
        temporary.write_text(json.dumps(record), encoding="utf-8")
        os.replace(temporary, workdir / OWNER_FILE)
    except OSError:
        pass  # the directory is gone or unwritable: there is nothing to clean up after, or no way to say so


def _owner(workdir: Path) -> dict[str, object]:
    try:
        record = json.loads((workdir / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _int(value: object) -> int | None:
    return value if type(value) is int else None


def _harness_alive(pid: int, started: int | None) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, and not ours to judge
    stat = _stat(pid)
    if stat is None:
        return True  # no /proc to tell more: the pid is in use, so the harness may be alive
    if stat.state in ("Z", "X"):
        return False
    return started is None or stat.started == started  # another start time: the pid was reused


def sweep_stale(directory: Path | None = None) -> list[Path]:
    """Remove the working directories of harnesses that are gone, stopping the process groups they record.

    Only this user's directories named ``conformance-candidate-<pid>-*`` are
    looked at; one whose harness runs (on this host) is left alone. Returns
    the directories removed.
    """
    import shutil

    root = Path(directory) if directory is not None else Path(tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        match = _NAME.fullmatch(entry.name)
        if match is None:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
        except OSError:
            continue
        path = Path(entry.path)
        owner = _owner(path)
        if owner.get("host", _host()) != _host():
            continue  # another machine's (a shared /tmp): its pids mean nothing here
        pid = int(match.group(1))
        if _int(owner.get("harness")) not in (None, pid):
            continue  # a record that does not match the name: not ours to judge
        if _harness_alive(pid, _int(owner.get("harness_started"))):
            continue
        if (pgid := _int(owner.get("pgid"))) is not None:
            _stop_stale_group(pgid, _int(owner.get("leader_started")))
        terminate_carrying(str(path))  # what left the group: the token is the folder's path, which no one reuses
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _stop_stale_group(pgid: int, leader_started: int | None) -> None:
    """Stop a group a dead harness left running, unless its id now names another process's group."""
    if pgid <= 1 or pgid == os.getpgrp():
        return
    leader = _stat(pgid)
    if leader is not None and leader_started is not None and leader.started != leader_started:
        return  # the pid was reused: whatever runs under it now is not the candidate
    terminate_group(pgid)
