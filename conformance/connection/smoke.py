"""Does a candidate speak the protocol at all? A check before any scoring (``conformance smoke``).

It starts the candidate, reads its handshake, sends one request per surface
it declares (the first case of that surface, compared with nothing), one for
a surface it does not serve (the answer must be ``skipped``), and ``stop``.
Every message is checked against the published schemas. Each step passes or
fails with what went wrong and what to do about it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.connection.base import DEFAULT_TIMEOUT, StartFailure
from conformance.connection.connectors import connect
from conformance.connection.replies import HINTS, Reply
from conformance.connection.spec import Spec
from conformance.core import surfaces
from conformance.core.outcomes import ReplyKind
from conformance.kit import wire

UNSERVED = "smoke.no-such-surface"  # a surface no candidate serves
# Replies that answer a request as the protocol allows, whatever they say.
ANSWERS = frozenset({ReplyKind.OUTPUT, ReplyKind.RAISED, ReplyKind.SKIPPED, ReplyKind.ERRORED})


@dataclass
class Check:
    step: str
    ok: bool
    message: str
    hint: str = ""


def _hint(reply: Reply) -> str:
    return HINTS.get(str(reply.error or reply.kind), "")


def _answered(reply: Reply) -> str:
    if reply.kind is ReplyKind.OUTPUT:
        return f"output {reply.value!r:.80}"
    if reply.kind is ReplyKind.RAISED:
        return f"raised {reply.value}"
    return f"{reply.kind}: {reply.detail.strip().splitlines()[0][:120] if reply.detail.strip() else ''}"


def smoke(spec: Spec, inputs: dict[str, Any], *, timeout: float = DEFAULT_TIMEOUT,
          timeout_multiplier: float = 1.0) -> list[Check]:
    """The steps, in order; it stops at a handshake that fails. ConnectError: the spec names nothing runnable.

    ``inputs``: one input per surface to send (the corpus's first case of each).
    """
    checks: list[Check] = []
    try:
        connection = connect(spec, timeout=timeout, timeout_multiplier=timeout_multiplier, validate=True)
    except StartFailure as e:
        detail = e.reply.detail.strip()
        return [Check("handshake", False, f"{e.reply.error or e.reply.kind}: {detail}", _hint(e.reply))]
    impl = connection.implementation
    assert impl is not None  # a connection that started has its handshake
    declared = list(impl.surfaces)
    checks.append(Check("handshake", True, f"{impl.name} {impl.version} ({impl.language}), "
                                           f"protocol 1, surfaces: {', '.join(declared) or 'none'}"))
    unknown = [name for name in declared if name not in surfaces.SURFACES]
    if unknown:
        checks.append(Check("surfaces", False, f"declares surfaces this suite does not have: {', '.join(unknown)}",
                            f"known surfaces: {', '.join(sorted(surfaces.SURFACES))}"))
    if not [name for name in declared if name in surfaces.SURFACES]:
        checks.append(Check("surfaces", False, "declares no surface of this suite: nothing could be certified",
                            "list the surfaces you answer in implementation.surfaces"))
    seq = 0
    try:
        for name in declared:
            if name not in surfaces.SURFACES:
                continue
            if name not in inputs:
                checks.append(Check(f"run {name}", False, "no case of this surface in the corpus to send"))
                continue
            seq += 1
            reply = connection.run(seq, name, wire.encode(inputs[name]))
            ok = reply.kind in ANSWERS
            said = _answered(reply) if ok else f"{reply.error or reply.kind}: {reply.detail.strip()[:600]}"
            checks.append(Check(f"run {name}", ok, said, "" if ok else _hint(reply)))
        seq += 1
        reply = connection.run(seq, UNSERVED, None)
        skipped = reply.kind is ReplyKind.SKIPPED
        said = (_answered(reply) if reply.kind is not ReplyKind.PROTOCOL_ERROR
                else f"{reply.error}: {reply.detail.strip()[:600]}")
        checks.append(Check(f"run {UNSERVED}", skipped, said, "" if skipped else
                            "answer a surface you do not serve with {\"seq\": N, \"skipped\": {\"reason\": \"...\"}}"))
    finally:
        stopped = connection.close()
    checks.append(Check("stop", stopped is None, "exited after stop" if stopped is None else stopped.detail,
                        "" if stopped is None else "exit when you read {\"cmd\": \"stop\"} or when stdin closes"))
    return checks
