"""Several processes of one implementation, for inputs that each run a whole job.

A harbor job runs in the oracle's process as one asyncio program over harbor's
own Job, Trial and Verifier code. It is CPU-bound Python (the sandbox and the
agent are scripted: nothing is awaited that takes time), and while it runs the
adapter changes what is the whole process's (the working directory a
uv-script metric's files are in, stdout redirected away from the protocol,
harbor's log handlers). Two jobs in one process would take turns on one core
and on that state; in two processes they run side by side. So a pool keeps
its first connection for everything (cheap inputs go there in batches, as
before) and starts more the first time several whole-job inputs are asked
for at once (:meth:`Pool.run_each`), each answering one of them at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from conformance.connection.base import BaseConnection, Capabilities, ConnectError, Connection
from conformance.connection.protocol import Implementation
from conformance.connection.replies import Reply
from conformance.connection.spec import Spec


class Pool(BaseConnection):
    """Up to ``width`` connections of one spec, the first one given, the others made by ``start`` on demand."""

    def __init__(self, first: Connection, start: Callable[[], Connection], width: int,
                 log: Callable[[str], object] = lambda message: None) -> None:
        self.first = first
        self.start = start
        self.width = max(1, width)
        self.log = log
        self._members: list[Connection] = [first]
        self.start_problem = ""  # why a member could not be started: the pool then stays as wide as it is

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(width=self.width, own_lane=self.first.capabilities.own_lane)

    @property
    def members(self) -> Sequence[Connection]:
        return tuple(self._members)

    @property
    def spec(self) -> Spec:
        return self.first.spec

    @property
    def working(self) -> bool:
        return any(member.working for member in self._members)

    @property
    def implementation(self) -> Implementation | None:
        return self.first.implementation

    @property
    def broken(self) -> str:
        return self.first.broken

    @property
    def batch_fallbacks(self) -> list[str]:
        return [why for member in self._members for why in member.batch_fallbacks]

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        return self.first.run(seq, surface, input_wire)

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        return self.first.run_batch(items)

    def _grow(self, wanted: int) -> list[Connection]:
        while len(self._members) < min(wanted, self.width) and not self.start_problem:
            self.log(f"starting another process of {self.spec} ({len(self._members) + 1} of {self.width})")
            try:
                self._members.append(self.start())
            except ConnectError as e:
                self.start_problem = str(e)
                self.log(f"{self.spec}: going on with {len(self._members)} process(es): {e}")
        return self._members[:wanted]

    def run_each(self, items: list[tuple[int, str, Any]]) -> list[Reply]:
        """A ``run`` for each item, each member answering every n-th of them, all members at once."""
        members = self._grow(len(items))
        replies: list[Reply | None] = [None] * len(items)
        failures: list[BaseException] = []

        def answer(k: int) -> None:
            try:
                for i in range(k, len(items), len(members)):
                    replies[i] = members[k].run(*items[i])
            except BaseException as error:  # noqa: B036 - raised again in the caller's thread
                failures.append(error)

        threads = [threading.Thread(target=answer, args=(k,), daemon=True) for k in range(1, len(members))]
        for thread in threads:
            thread.start()
        answer(0)
        for thread in threads:
            thread.join()
        if failures:
            raise failures[0]
        return [reply for reply in replies if reply is not None]

    def close(self) -> Reply | None:
        """Stop every member; what went wrong stopping the first (the others only ever answered whole jobs)."""
        others = self._members[1:]
        del self._members[1:]
        try:
            for member in others:
                member.close()
        finally:
            problem = self.first.close()
        return problem
