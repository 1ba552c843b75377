"""The in-process transport: a Python object answering protocol dicts directly (no serialisation)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from conformance.connection import replies
from conformance.connection.base import BaseConnection, Capabilities, check_started
from conformance.connection.protocol import PROTOCOL_VERSION, Implementation
from conformance.connection.replies import Reply
from conformance.connection.spec import Spec
from conformance.core.outcomes import ReplyKind


class InProcess(BaseConnection):
    """A Python object with ``handle(request) -> reply``; an exception it raises is a ``crash`` of that request.

    Asked in the caller's thread (it may rely on running in the main one), unless it declares a ``concurrency``
    above 1 (``kit.candidate.Candidate``): requests that each run a whole job are then answered that many at once,
    from threads started on the first such run and kept until :meth:`close` (:meth:`run_each`).
    """

    def __init__(self, spec: Spec, target: Any, *, validate: bool = False) -> None:
        self.spec = spec
        self.target = target
        self.validate = validate
        self.broken = ""
        self.batch_fallbacks: list[str] = []
        self._threads: ThreadPoolExecutor | None = None
        self.implementation: Implementation = check_started(
            target.handle({"cmd": "start", "protocol": PROTOCOL_VERSION}), spec, validate)
        concurrency = getattr(target, "concurrency", 1)
        # Anything but a whole number from 1 up is taken as 1: the candidate is then asked as one that never said.
        self.width = concurrency if isinstance(concurrency, int) and not isinstance(concurrency, bool) and \
            concurrency > 1 else 1

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(width=self.width)

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        try:
            reply = self.target.handle({"cmd": "run", "seq": seq, "surface": surface, "input": input_wire})
        except Exception as e:  # an in-process crash is still only this case's outcome
            return Reply(ReplyKind.CRASH, detail=f"{type(e).__name__}: {e}")
        return replies.checked(reply, seq, surface, self.implementation, validate=self.validate)

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        return [self.run(*item) for item in items]  # in process, a batch saves nothing

    def run_each(self, items: list[tuple[int, str, Any]]) -> list[Reply]:
        if self.width < 2 or len(items) < 2:
            return [self.run(*item) for item in items]
        if self._threads is None:
            self._threads = ThreadPoolExecutor(self.width, thread_name_prefix="conformance-in-process")
        return list(self._threads.map(lambda item: self.run(*item), items))

    def close(self) -> Reply | None:
        if self._threads is not None:  # a run after close starts them again, as the first did
            self._threads.shutdown()
            self._threads = None
        try:
            self.target.handle({"cmd": "stop"})
        except Exception as e:
            return Reply(ReplyKind.CRASH, detail=f"on stop: {type(e).__name__}: {e}")
        return None
