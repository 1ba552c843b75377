"""Giving up on a candidate that keeps failing, without dropping a case.

Each crash, hang or protocol error costs a restart (and a hang its whole
timeout); a candidate that fails every request would make a run last hours.
After ``limit`` consecutive such replies the candidate is declared broken: it
is stopped, and every later request is answered ``broken`` at once, so each
remaining case is still recorded, with the reason.
"""

from __future__ import annotations

from typing import Any

from conformance.connection.connect import Connection, Reply

LOST = frozenset({"crash", "timeout", "protocol-error"})
DEFAULT_LIMIT = 5


class Breaker:
    """A candidate connection given up on after ``limit`` consecutive lost replies."""

    def __init__(self, connection: Connection | None, limit: int = DEFAULT_LIMIT, *, reason: str = "") -> None:
        self.connection = connection
        self.limit = limit
        self.streak = 0
        self.broken = reason  # why the candidate was given up on; "" while it serves
        self.stop_problem: Reply | None = None
        self._closed = connection is None

    @classmethod
    def never_started(cls, spec: str, reason: str) -> Breaker:
        breaker = cls(None, reason=f"the candidate did not start: {reason}")
        breaker._spec = spec
        return breaker

    @property
    def spec(self) -> str:
        return self.connection.spec if self.connection else self._spec

    @spec.setter
    def spec(self, value: str) -> None:
        if self.connection:
            self.connection.spec = value
        else:
            self._spec = value

    @property
    def implementation(self) -> dict[str, Any]:
        return self.connection.implementation if self.connection else {}

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        if self.broken:
            return Reply("broken", detail=f"not run: {self.broken}")
        return self._count(self.connection.run(seq, surface, input_wire))

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        if self.broken:
            return [Reply("broken", detail=f"not run: {self.broken}") for _ in items]
        return [reply if reply is None else self._count(reply) for reply in self.connection.run_batch(items)]

    @property
    def batch_fallbacks(self) -> list[str]:
        return getattr(self.connection, "batch_fallbacks", [])

    def _count(self, reply: Reply) -> Reply:
        self.streak = self.streak + 1 if reply.kind in LOST else 0
        if self.streak >= self.limit and not self.broken:
            last = (reply.error or reply.kind) + ": " + (reply.detail.strip().splitlines() or [""])[0][:200]
            self.broken = f"declared broken after {self.limit} consecutive crashes, timeouts or protocol errors " \
                          f"(the last: {last})"
            self.close()
        return reply

    def close(self) -> Reply | None:
        if not self._closed:
            self._closed = True
            self.stop_problem = self.connection.close()
        return self.stop_problem
