"""Giving up on a candidate that keeps failing, without dropping a case.

Each crash, hang or protocol error costs a restart (and a hang its whole
timeout); a candidate that fails every request would make a run last hours.
After ``limit`` consecutive such replies the candidate is declared broken: it
is stopped, and every later request is answered ``broken`` at once, so each
remaining case is still recorded, with the reason.
"""

from __future__ import annotations

from typing import Any

from conformance.connection.base import BaseConnection, Capabilities, Connection
from conformance.connection.protocol import Implementation
from conformance.connection.replies import Reply
from conformance.connection.spec import Spec
from conformance.core.outcomes import LOST, ReplyKind

DEFAULT_LIMIT = 5


class Breaker(BaseConnection):
    """A candidate connection given up on after ``limit`` consecutive lost replies; itself a Connection."""

    def __init__(self, connection: Connection | None, limit: int = DEFAULT_LIMIT, *, spec: Spec | None = None,
                 reason: str = "") -> None:
        if spec is None:
            if connection is None:
                raise ValueError("a breaker without a connection needs the spec it stands for")
            spec = connection.spec
        self.connection = connection
        self.limit = limit
        self.streak = 0
        self.broken = reason  # why the candidate was given up on; "" while it serves
        self._spec = spec
        self._closed = connection is None

    @classmethod
    def never_started(cls, spec: Spec, reason: str) -> Breaker:
        return cls(None, spec=spec, reason=f"the candidate did not start: {reason}")

    @property
    def spec(self) -> Spec:
        return self._spec

    @property
    def capabilities(self) -> Capabilities:
        """Its connection's: a lane, if it has one, and its width (whole jobs asked at once, counted in order)."""
        if self.connection is None:
            return Capabilities()
        return self.connection.capabilities

    @property
    def exit_code(self) -> int | None:
        return self.connection.exit_code if self.connection is not None else None

    @property
    def working(self) -> bool:
        return self.connection is not None and not self.broken and self.connection.working

    @property
    def restarts(self) -> int:
        return self.connection.restarts if self.connection is not None else 0

    @property
    def implementation(self) -> Implementation | None:
        return self.connection.implementation if self.connection is not None else None

    @property
    def batch_fallbacks(self) -> list[str]:
        return self.connection.batch_fallbacks if self.connection is not None else []

    def _not_run(self) -> Reply:
        return Reply(ReplyKind.BROKEN, detail=f"not run: {self.broken}")

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        if self.broken or self.connection is None:
            return self._not_run()
        return self._count(self.connection.run(seq, surface, input_wire))

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        if self.broken or self.connection is None:
            return [self._not_run() for _ in items]
        return [reply if reply is None else self._count(reply) for reply in self.connection.run_batch(items)]

    def run_each(self, items: list[tuple[int, str, Any]]) -> list[Reply]:
        if self.broken or self.connection is None:
            return [self._not_run() for _ in items]
        # Counted in the items' order, as a batch's replies: requests under way together all ran, whatever the
        # streak comes to on the way; the next request is the first one not run.
        return [self._count(reply) for reply in self.connection.run_each(items)]

    def _count(self, reply: Reply) -> Reply:
        self.streak = self.streak + 1 if reply.kind in LOST else 0
        if self.streak >= self.limit and not self.broken:
            last = f"{reply.error or reply.kind}: {reply.first_line()}"
            self.broken = f"declared broken after {self.limit} consecutive crashes, timeouts or protocol errors " \
                          f"(the last: {last})"
            self.close()
        return reply

    def close(self) -> Reply | None:
        if not self._closed:
            self._closed = True
            assert self.connection is not None  # a breaker without one starts closed
            self.stop_problem = self.connection.close()
        return self.stop_problem
