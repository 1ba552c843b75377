"""The in-process transport: a Python object answering protocol dicts directly (no serialisation)."""

from __future__ import annotations

from typing import Any

from conformance.connection import replies
from conformance.connection.base import BaseConnection, check_started
from conformance.connection.protocol import PROTOCOL_VERSION, Implementation
from conformance.connection.replies import Reply
from conformance.connection.spec import Spec
from conformance.core.outcomes import ReplyKind


class InProcess(BaseConnection):
    """A Python object with ``handle(request) -> reply``; an exception it raises is a ``crash`` of that request.

    Asked in the caller's thread (it may rely on running in the main one): the base's capabilities.
    """

    def __init__(self, spec: Spec, target: Any, *, validate: bool = False) -> None:
        self.spec = spec
        self.target = target
        self.validate = validate
        self.broken = ""
        self.batch_fallbacks: list[str] = []
        self.implementation: Implementation = check_started(
            target.handle({"cmd": "start", "protocol": PROTOCOL_VERSION}), spec, validate)

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        try:
            reply = self.target.handle({"cmd": "run", "seq": seq, "surface": surface, "input": input_wire})
        except Exception as e:  # an in-process crash is still only this case's outcome
            return Reply(ReplyKind.CRASH, detail=f"{type(e).__name__}: {e}")
        return replies.checked(reply, seq, surface, self.implementation, validate=self.validate)

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        return [self.run(*item) for item in items]  # in process, a batch saves nothing

    def close(self) -> Reply | None:
        try:
            self.target.handle({"cmd": "stop"})
        except Exception as e:
            return Reply(ReplyKind.CRASH, detail=f"on stop: {type(e).__name__}: {e}")
        return None
