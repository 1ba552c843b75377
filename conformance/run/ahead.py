"""Inputs drawn ahead: a generator round's Hypothesis run in a thread of its own, its inputs asked in batches.

A round asks each input as Hypothesis draws it, one at a time: the draw, the
two round trips and Hypothesis's own work per example follow one another.
Yet for a candidate that conforms, what Hypothesis draws depends only on the
seed, the settings and each example's result (it passed, and set no
``target`` score): the inputs do not wait on the answers. So a round first
runs its test in a thread of its own, taking every example as passing, and
hands each input over as it is drawn (:class:`Ahead`); the round asks them
in batches, as cases are asked, while the next ones are drawn. On the first
input that does not pass as taken (a divergence, a broken candidate, a
score), the thread stops and the round runs live
Hypothesis from the start with the same test: it draws the same inputs up
to that one, their answers are taken from what was asked (:class:`Asked`),
and it shrinks from there as it always did.

The example database sees what the live run would have done: reads go
through, writes wait (:class:`DeferredDatabase`) and are made only when the
round ran ahead to its end; a round handed over discards them and the live
run writes its own.

The threads that draw are kept between rounds (:class:`_Drawer`): on a
thread's first example Hypothesis registers the thread's own random
generator, and registering runs a full garbage collection, about 30 ms in a
ci run's heap; a new thread each round paid it each round, a tenth of a
250-input ``evsys.metric`` round.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from hypothesis.database import ExampleDatabase

from conformance.report.model import CaseLine

# Inputs drawn and not yet asked: enough to fill a batch while the one before is answered, few enough that a
# candidate found wrong early leaves little drawn in vain (and large inputs few in memory).
QUEUE_SIZE = 128
_POLL = 0.05  # seconds between looks at the stop flag while the queue is full


class StopDrawing(KeyboardInterrupt):
    """Raised in the drawing thread's test when the round no longer wants its inputs. An interrupt: Hypothesis
    lets one through at once, where any other exception would be shrunk as a failure."""


_END = object()
THREAD_NAME = "conformance-draw-ahead"
IDLE_KEPT = 2  # drawing threads kept waiting for a round: rounds at once in one process are rarely more


class _Drawer:
    """A daemon thread that runs one round's drawing after another, kept idle in between (up to IDLE_KEPT)."""

    _idle: list[_Drawer] = []
    _lock = threading.Lock()
    _busy = 0

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], None], threading.Event] | None] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name=THREAD_NAME, daemon=True).start()

    @classmethod
    def run(cls, job: Callable[[], None], done: threading.Event) -> None:
        """``job`` in an idle drawing thread, or a new one; ``done`` is set once it ended and its thread is idle
        again (so a round that follows at once draws in the same thread)."""
        with cls._lock:
            drawer = cls._idle.pop() if cls._idle else None
            cls._busy += 1
        (drawer or cls())._jobs.put((job, done))

    @classmethod
    def forget(cls) -> None:
        """In a child process forked from this one: its threads were not forked, so none is idle or busy."""
        cls._idle, cls._lock, cls._busy = [], threading.Lock(), 0

    def _serve(self) -> None:
        cls = type(self)
        while (work := self._jobs.get()) is not None:
            job, done = work
            try:
                job()
            finally:
                with cls._lock:
                    cls._busy -= 1
                    kept = len(cls._idle) < IDLE_KEPT
                    if kept:
                        cls._idle.append(self)
                done.set()
            if not kept:
                return


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_Drawer.forget)


def drawing_now() -> int:
    """How many rounds are being drawn ahead in this process now (none once every round returned)."""
    with _Drawer._lock:
        return _Drawer._busy


class Ahead:
    """A Hypothesis run in a drawing thread, its test's values handed over in the order drawn.

    ``run``: the test, run once in the thread from :meth:`start`; its body calls :meth:`put` with each value.
    Iterating gives the values until the run ends; :attr:`error` then holds what it raised, if anything (a live
    run raises it again). :meth:`close` stops the run at its next value and waits for it to end.
    """

    def __init__(self, run: Callable[[], None]) -> None:
        self._run = run
        self._queue: queue.Queue[Any] = queue.Queue(QUEUE_SIZE)
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._done = threading.Event()

    def start(self) -> None:
        _Drawer.run(self._draw, self._done)

    def put(self, value: Any) -> None:
        while not self._stop.is_set():
            try:
                self._queue.put(value, timeout=_POLL)
                return
            except queue.Full:
                continue
        raise StopDrawing

    def __iter__(self) -> Iterator[Any]:
        while True:
            value = self._queue.get()
            if value is _END:
                return
            yield value

    def close(self) -> None:
        self._stop.set()
        while not self._done.is_set():
            try:  # a put waiting for room sees the flag within a poll; the end marker needs room too
                self._queue.get(timeout=_POLL)
            except queue.Empty:
                pass

    def _draw(self) -> None:
        try:
            self._run()
        except StopDrawing:
            pass
        except BaseException as error:  # noqa: B036 - handed to the round, whose live run meets it again
            self.error = error
        finally:
            while True:
                try:
                    self._queue.put(_END, timeout=_POLL)
                    break
                except queue.Full:
                    if self._stop.is_set():
                        break


class Asked:
    """Records of inputs asked ahead, for the live run that draws the same inputs again: each is given once, in
    the order asked, to the first live draw of the same input (by ``key``)."""

    def __init__(self, key: Callable[[Any], str], asked: Iterable[tuple[Any, CaseLine]]) -> None:
        self._key = key
        self._records: dict[str, list[CaseLine]] = {}
        for value, record in asked:
            self._records.setdefault(key(value), []).append(record)

    def take(self, value: Any) -> CaseLine | None:
        if not self._records:
            return None
        key = self._key(value)
        records = self._records.get(key)
        if not records:
            return None
        record = records.pop(0)
        if not records:
            del self._records[key]
        return record


class DeferredDatabase(ExampleDatabase):
    """``inner`` as a run drawn ahead should see it: what it holds is read, what the run writes waits for
    :meth:`apply` (the run stood, as a live run would have written it) or is dropped (the live run that
    follows writes its own). Once applied or dropped, writes go straight through."""

    def __init__(self, inner: ExampleDatabase) -> None:
        super().__init__()
        self.inner = inner
        self._writes: list[tuple[str, tuple[bytes, ...]]] | None = []
        self._lock = threading.Lock()

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self.inner.fetch(key)

    def save(self, key: bytes, value: bytes) -> None:
        self._write("save", key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self._write("delete", key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self._write("move", src, dest, value)

    def _write(self, name: str, *arguments: bytes) -> None:
        with self._lock:
            if self._writes is not None:
                self._writes.append((name, arguments))
                return
        getattr(self.inner, name)(*arguments)

    def apply(self) -> None:
        with self._lock:
            writes, self._writes = self._writes or [], None
        for name, arguments in writes:
            getattr(self.inner, name)(*arguments)

    def drop(self) -> None:
        with self._lock:
            self._writes = None
