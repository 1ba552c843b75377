"""What every connection is: the protocol the runner drives, the settings it is made with, its errors.

Two transports implement :class:`Connection`: in process (a Python object
answering protocol dicts, :mod:`.in_process`) and a subprocess speaking JSON
Lines (:mod:`.process`). Both check the handshake the same way.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

from pydantic import ValidationError

from conformance.connection import replies
from conformance.connection.protocol import PROTOCOL_VERSION, STARTED_ADAPTER, Implementation, Started
from conformance.connection.replies import Reply
from conformance.connection.spec import Spec
from conformance.errors import UsageError
from conformance.kit import wire

DEFAULT_TIMEOUT = 30.0  # per request
START_TIMEOUT = 120.0  # for the handshake: a first start may compile or load a lot
STOP_TIMEOUT = 10.0  # from `stop` to the process's exit
HARBOR_MIN_TIMEOUT = 120.0  # a harbor job runs real trials: never less a request
# One reply line. A job.result output with its snapshots (one per result.json written: two a trial, and a few
# more) is up to a few hundred kilobytes and some 25,000 values on the wire for the largest job its generator
# draws (42 trials); the caps keep what reading a line costs (its bytes, its text, the objects JSON makes of it,
# a comparison of them) far below the harness's budget.
MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_LINE_VALUES = 100_000  # JSON values in one line (commas and brackets outside strings)


def silent(message: str) -> None:
    """The default log: say nothing."""


@dataclass(frozen=True)
class Settings:
    """How to connect: timeouts, protocol validation, and (harbor only) coverage measurement.

    ``timeout`` is per request; ``timeout_multiplier`` scales it and the start
    and stop timeouts (a slow runtime, a loaded machine). ``validate`` checks
    every message against the published JSON Schemas (--validate-protocol).
    ``coverage_data``: for ``harbor==X`` only, run harbor under coverage.py into that file. ``codec``: the JSON
    text of the lines written to and read from a process (the same lines either way; see conformance.kit.wire).
    """

    timeout: float = DEFAULT_TIMEOUT
    timeout_multiplier: float = 1.0
    validate: bool = False
    coverage_data: Path | None = None
    log: Callable[[str], object] = silent
    codec: wire.Codec = wire.DEFAULT

    @property
    def start_timeout(self) -> float:
        return START_TIMEOUT * self.timeout_multiplier

    @property
    def stop_timeout(self) -> float:
        return STOP_TIMEOUT * self.timeout_multiplier

    @property
    def request_timeout(self) -> float:
        return self.timeout * self.timeout_multiplier


class ConnectError(UsageError):
    """The spec names nothing that can be connected to."""


class StartFailure(ConnectError):
    """The program ran but gave no valid handshake; ``reply`` says how (timeout, crash, protocol-error)."""

    def __init__(self, message: str, reply: Reply) -> None:
        super().__init__(message)
        self.reply = reply


@dataclass(frozen=True)
class Capabilities:
    """What a connection can do beyond answering requests one at a time or in batches: declared by its kind.

    ``width``: how many inputs that each run a whole job it answers at once, one request each
    (:meth:`Connection.run_each`; a pool's processes, an in-process candidate's declared ``concurrency``).
    ``own_lane``: it talks to another process, so the runner may ask it from a thread of its own while it works
    on the other side (:mod:`conformance.run.lanes`); an in-process candidate, which may rely on running in the
    main thread, never is.
    """

    width: int = 1
    own_lane: bool = False


class Connection(Protocol):
    """An implementation the runner asks: the oracle, a candidate, or a candidate given up on."""

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def members(self) -> Sequence[Connection]:
        """The connections it is made of (a pool's processes); () for one that is not made of others."""

    @property
    def exit_code(self) -> int | None:
        """How its last process ended; None while it runs, or for a connection without a process of its own."""

    @property
    def restarts(self) -> int:
        """How often its process was started again after it was lost (a crash, a hang, a protocol error)."""

    @property
    def spec(self) -> Spec: ...

    @property
    def implementation(self) -> Implementation | None:
        """What its handshake said; None only for a candidate that never started."""

    @property
    def broken(self) -> str:
        """Why it was given up on ("" while it serves): every request is then answered ``broken``."""

    @property
    def batch_fallbacks(self) -> list[str]:
        """Why each batch that failed as a whole was asked again one request at a time."""

    @property
    def working(self) -> bool:
        """Whether answering may cost this machine's cores now; False only while every answer comes from ones
        kept (an oracle behind the answer cache that has not started harbor)."""

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply: ...

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        """Replies to several (seq, surface, input) requests at once; None where the caller must ask singly."""

    def run_each(self, items: list[tuple[int, str, Any]]) -> list[Reply]:
        """A ``run`` for each item, up to ``capabilities.width`` of them at once."""

    def close(self) -> Reply | None:
        """Stop the implementation; what went wrong doing so (a hang is a ``timeout``), or None."""

    def __enter__(self) -> Self: ...

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None: ...


class Closing:
    """``with connection:`` closes it; what went wrong on closing stays in ``stop_problem``."""

    stop_problem: Reply | None = None

    def close(self) -> Reply | None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop_problem = self.close()


class BaseConnection(Closing):
    """What a connection kind inherits: the capabilities of one that answers one request at a time in the
    caller's thread, made of nothing else, with no process of its own. A kind declares what it does beyond."""

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities()

    @property
    def members(self) -> Sequence[Connection]:
        return ()

    @property
    def exit_code(self) -> int | None:
        return None

    @property
    def restarts(self) -> int:
        return 0

    @property
    def working(self) -> bool:
        return True

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        raise NotImplementedError

    def run_each(self, items: list[tuple[int, str, Any]]) -> list[Reply]:
        return [self.run(*item) for item in items]


def check_started(started: Any, spec: Spec, validate: bool = False) -> Implementation:
    """The implementation a handshake declares; ConnectError saying what is wrong with it."""
    try:
        handshake: Started = STARTED_ADAPTER.validate_python(started)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'reply'}: {err['msg']}" for err in e.errors())
        raise ConnectError(f"{spec}: the start reply is not a valid handshake ({problems}): "
                           f"{replies.shown(started, 300)}") from None
    if validate and (problems_found := replies.schema_problems(started, "protocol-started.json")):
        raise ConnectError(f"{spec}: the start reply breaks protocol-started.json: {'; '.join(problems_found)}")
    if handshake.protocol != PROTOCOL_VERSION:
        raise ConnectError(f"{spec}: speaks protocol {replies.shown(handshake.protocol)}, this harness "
                           f"{PROTOCOL_VERSION}")
    return handshake.implementation


_IMPORT_PATH_LOCK = threading.RLock()  # a module imported may connect another in turn


@contextmanager
def _working_directory_importable() -> Iterator[None]:
    """The working directory at the front of ``sys.path`` while inside (as ``python -m`` has it), taken out again
    after, unless it was there before: connecting leaves the process's import path as it found it."""
    here = os.getcwd()
    with _IMPORT_PATH_LOCK:
        added = here not in sys.path
        if added:
            sys.path.insert(0, here)
        try:
            yield
        finally:
            if added:
                try:
                    sys.path.remove(here)
                except ValueError:  # taken out meanwhile by the module imported
                    pass


def import_target(spec: Spec | str, target: str) -> Any:
    """The object ``module:attr`` names, found as ``python -m`` would find it (modules beside the working
    directory too, while it is imported); ConnectError saying what is missing."""
    from conformance.core.loading import import_object

    try:
        with _working_directory_importable():
            return import_object(target)
    except ImportError as e:
        raise ConnectError(f"{spec}: cannot import {target.partition(':')[0]!r}: {e}") from None
    except AttributeError as e:
        raise ConnectError(f"{spec}: {e}") from None
