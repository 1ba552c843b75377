"""Reading the corpus's files: regular files only, up to a size, and never from outside the corpus.

A case file and a file a case names with ``!file`` are data from wherever
the corpus came from, so they are read with care: the file's type is
checked with ``os.stat`` before it is opened (a FIFO would block the reader
forever, a device could be endless), its size before it is read (a case
file is parsed into many times its size in memory), and a case file
reached through a symbolic link that leads out of the corpus is not read
at all, as ``!file`` already refused. A link from one place in the corpus
to another stays allowed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from conformance.errors import ConfigurationError

MIB = 1024 * 1024
CASE_FILE_LIMIT = 2 * MIB  # a case file; the largest the suite ships is 17 KiB
FILE_LIMIT = 16 * MIB  # a file a case names with !file

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder"))


class FileProblem(ConfigurationError):
    """A file the corpus cannot read; the message says why, without the file's name."""


def _size(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit % MIB == 0 else f"{limit} bytes"


def _regular(mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise FileProblem(f"{kind}, not a regular file: not read")


def inside(path: Path, corpus: Path) -> bool:
    """Whether ``path``, every symbolic link on the way followed, is inside ``corpus``."""
    return path.resolve().is_relative_to(corpus.resolve())


def read_limited(path: Path, limit: int, what: str = "the file") -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them; FileProblem otherwise."""
    try:
        mode, size = (info := os.stat(path)).st_mode, info.st_size
    except OSError as e:
        raise FileProblem(f"cannot read: {e.strerror or e}") from None
    _regular(mode)  # before it is opened: opening a FIFO waits for a writer
    if size > limit:
        raise FileProblem(f"{size} bytes: {what} may hold at most {_size(limit)}")
    try:
        # O_NONBLOCK: should the path have become a FIFO since, opening it does not wait; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise FileProblem(f"cannot read: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as handle:
        _regular(os.fstat(fd).st_mode)
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileProblem(f"more than {_size(limit)}: {what} may hold at most {_size(limit)}")
    return data


def read_case_file(path: Path) -> bytes:
    """A case file's bytes. The corpus is the folder above its surface folder (``cases/<surface>/<file>``): a
    case file, or a surface folder, that is a symbolic link leading out of it is refused, unread."""
    corpus = path.parent.parent
    if not inside(path, corpus):
        raise FileProblem(f"leads out of the corpus (through a symbolic link, to {path.resolve()}): not read")
    return read_limited(path, CASE_FILE_LIMIT, "a case file")
