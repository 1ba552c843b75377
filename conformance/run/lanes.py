"""Asking two implementations at once: a thread of its own for each connection to a process.

The oracle and the candidate are separate programs: while one works on an
input, the other can work on the same input, and the harness can get the
next input ready or record the last one. A connection to a process (``exec:``,
``harbor==VERSION``: one whose capabilities say ``own_lane``) is asked from a *lane*: one thread per connection, which
takes its requests in the order they were given, one at a time, as the
protocol wants. The thread only writes a request and waits on the pipe (no
lock held meanwhile), so it costs the harness nothing while the other side
works. Any other connection (an in-process Python candidate, which may rely
on running in the main thread) is asked from the caller's thread, as before.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from conformance.connection.base import Connection

T = TypeVar("T")


class Lane:
    """One thread that runs what it is given, in order, until it is stopped."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None] = (
            queue.SimpleQueue())
        # Daemon: a harness interrupted while a request is under way exits without waiting on the pipe.
        self.thread = threading.Thread(target=_work, args=(self._jobs,), name=name, daemon=True)
        self.thread.start()

    def submit(self, work: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        self._jobs.put((future, work, args))
        return future

    def stop(self) -> None:
        """It ends once what it was given is done."""
        self._jobs.put(None)


def _work(jobs: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None]) -> None:
    while (job := jobs.get()) is not None:
        future, work, args = job
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(work(*args))
            except BaseException as error:  # noqa: B036 - whatever it was, the caller's future raises it
                future.set_exception(error)


class Lanes:
    """The lanes of one run, one per connection to a process, made on first use; closing the run's lanes ends
    their threads (joined, unless the run was interrupted: then they end with their request)."""

    def __init__(self) -> None:
        self._lanes: dict[int, tuple[Connection, Lane]] = {}  # by id(): a connection need not be hashable

    def submit(self, connection: Connection, work: Callable[..., T], *args: Any) -> Future[T]:
        """``work(*args)`` on the connection's lane; done at once, in the caller's thread, for one without."""
        if connection.capabilities.own_lane:
            _, found = self._lanes.get(id(connection)) or (None, None)
            if found is None:
                found = Lane(f"conformance-lane-{connection.spec.text[:40]}")
                self._lanes[id(connection)] = (connection, found)
            return found.submit(work, *args)
        future: Future[T] = Future()
        try:
            future.set_result(work(*args))
        except Exception as error:
            future.set_exception(error)
        return future

    def close(self, wait: bool = True) -> None:
        for _, found in self._lanes.values():
            found.stop()
        if wait:
            for _, found in self._lanes.values():
                found.thread.join()
        self._lanes.clear()
