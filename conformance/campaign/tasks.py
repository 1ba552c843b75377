"""What a worker runs: one generator task, on an oracle and a candidate the worker keeps from task to task.

Starting harbor costs more than a slice of examples, so a worker opens its
oracle and its candidate on its first task and keeps them for the next; each
thread of a worker has a pair of its own, since a connection serves one
caller at a time. The pairs belong to the campaign's worker plugin. When the
campaign ends it unregisters the plugin (a worker that closes does the same):
the teardown stops the task under way at its next input and closes every
pair, so no oracle or candidate process outlives the campaign.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from distributed import WorkerPlugin, get_worker

from conformance.campaign.plan import Connections, Task
from conformance.connection.breaker import Breaker
from conformance.connection.cached import answered_from_cache
from conformance.connection.connectors import connect
from conformance.report.model import CaseLine, GeneratedLine
from conformance.run import generate as generation
from conformance.run.certification import connect_oracle
from conformance.run.engine import Engine, Stream
from conformance.run.events import Event, InputGenerated
from conformance.run.runner import Oracle

if TYPE_CHECKING:
    from distributed import Worker
    from hypothesis.database import ExampleDatabase


class Stopped(KeyboardInterrupt):
    """The campaign ended while a task ran. An interrupt, because generate() lets one through at once, where it
    would shrink any other exception as a failure."""


class TaskStopped(Exception):
    """A task cut short by the end of its campaign, as the task says it: Dask expects an Exception."""


@dataclass
class Pair:
    oracle: Oracle
    candidate: Breaker  # given up on after consecutive crashes; the next task gets a fresh one

    @classmethod
    def open(cls, connections: Connections) -> Pair:
        oracle = connect_oracle(connections.oracle, cache=connections.oracle_cache)
        try:
            return cls(oracle, Breaker(connect(connections.candidate, timeout=connections.timeout)))
        except BaseException:
            oracle.close()
            raise

    def close(self) -> None:
        try:
            self.candidate.close()
        finally:
            self.oracle.close()


@dataclass
class TaskResult:
    task: Task
    findings: list[CaseLine]  # shrunk
    line: GeneratedLine
    worker: str  # the address of the worker that ran it
    seconds: float
    cached_answers: int = 0  # oracle answers taken from the answer cache


class CampaignPlugin(WorkerPlugin):
    """A campaign's state on one worker: the example database, and each thread's oracle and candidate."""

    def __init__(self, connections: Connections) -> None:
        self.connections = connections  # all that is pickled: the rest is made on the worker

    def setup(self, worker: Worker) -> None:
        self.database: ExampleDatabase | None = None
        if self.connections.example_database is not None:
            from conformance.run.examples import open_database

            self.database = open_database(self.connections.example_database)
        self._local = threading.local()
        self._lock = threading.Condition()
        self._pairs: list[Pair] = []
        self._running = 0
        self._stopping = False
        atexit.register(self._close_pairs)  # a worker process that exits without closing its plugins

    async def teardown(self, worker: Worker) -> None:
        await asyncio.to_thread(self.stop)  # waiting for a task to stop must not block the worker's event loop

    @contextmanager
    def running(self) -> Iterator[Pair]:
        """This thread's pair, for the length of one task."""
        with self._lock:
            if self._stopping:
                raise Stopped
            self._running += 1
        try:
            yield self._pair()
        finally:
            with self._lock:
                self._running -= 1
                self._lock.notify_all()

    def _pair(self) -> Pair:
        current: Pair | None = getattr(self._local, "pair", None)
        if current is not None and current.candidate.broken:
            self._forget(current)
            current.close()
            current = None
        if current is None:
            current = Pair.open(self.connections)
            with self._lock:
                stopping = self._stopping
                if not stopping:
                    self._pairs.append(current)
            if stopping:  # opened while the campaign ended: the teardown has not seen it
                current.close()
                raise Stopped
            self._local.pair = current
        return current

    def _forget(self, pair: Pair) -> None:
        with self._lock:
            if pair in self._pairs:
                self._pairs.remove(pair)
        self._local.pair = None

    def handle(self, event: Event) -> None:
        """A task's events, as the engine emits them on this worker: after each input, the campaign's end stops
        the task there."""
        if isinstance(event, InputGenerated) and self._stopping:
            raise Stopped

    def stop(self) -> None:
        """No task starts from now on; once those under way have stopped (each at its next input, within the
        connections' own timeouts), every pair is closed."""
        with self._lock:
            self._stopping = True
            self._lock.wait_for(lambda: self._running == 0)
        self._close_pairs()
        atexit.unregister(self._close_pairs)

    def _close_pairs(self) -> None:
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            pair.close()


def run_task(task: Task, plugin_name: str) -> TaskResult:
    """One task, on the worker that runs it: the surface's generator with the task's seed and examples."""
    worker = get_worker()
    plugin = worker.plugins[plugin_name]
    assert isinstance(plugin, CampaignPlugin)
    started = time.monotonic()
    try:
        with plugin.running() as pair:
            before = answered_from_cache(pair.oracle.connection)
            engine = Engine(pair.candidate, pair.oracle, Stream([plugin]), database=plugin.database)
            findings, line = engine.generate(task.surface, profile=generation.PROFILES[task.profile], seed=task.seed,
                                             budget=task.max_examples)
            cached = answered_from_cache(pair.oracle.connection) - before
    except Stopped:
        raise TaskStopped(f"{task}: the campaign ended") from None
    return TaskResult(task, findings, line, worker.address, time.monotonic() - started, cached)
