"""Judging a candidate's reply to a reproducer's requests with no oracle: ``conformance check-reply``.

The reply is the candidate's stdout: its handshake, then its reply (a
candidate that writes only the reply is read all the same). It is read as
the harness reads a reply (:mod:`conformance.connection.replies`: every way
it breaks the protocol by name, with its hint) and compared with the
oracle's answer the sidecar keeps (:mod:`conformance.report.reproducer`) by
the comparator itself, with the surface's unordered paths and the sidecar's
NaN policy. Nothing here starts an implementation: no oracle, no harbor, no
network.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from conformance.connection.base import MAX_LINE_BYTES, ConnectError, check_started
from conformance.connection.protocol import Implementation
from conformance.connection.replies import Reply, batch_answers, checked, interpret, parse_line, protocol_error
from conformance.connection.spec import Spec
from conformance.core import surfaces
from conformance.core.compare import POLICIES, Mismatch, Result, compare
from conformance.core.outcomes import ProtocolError, ReplyKind
from conformance.errors import HarnessError, UsageError
from conformance.kit import wire
from conformance.report.reproducer import Reproducer


class ReproducerError(UsageError):
    """A sidecar or a reply file that cannot be read: the message names the file, the line and the problem."""


@dataclass(frozen=True)
class Judged:
    """A reply, judged: what it was, and how its result differs from the oracle's (nothing: it conforms)."""

    reply: Reply
    expected: Result
    actual: Result | None  # None: the reply is no result (a protocol error, errored, skipped, none)
    mismatches: list[Mismatch] = field(default_factory=list)
    handshake: Implementation | None = None

    @property
    def conforms(self) -> bool:
        return self.actual is not None and not self.mismatches


def _line_of(text: str, key: str) -> int:
    """The line of the sidecar where its field ``key`` is (as ``repro`` writes it, two spaces in); else 1."""
    found = re.search(rf'^  "{re.escape(key)}":', text, re.MULTILINE)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is no JSON value")


def load(path: Path) -> Reproducer:
    """The sidecar at ``path``; ReproducerError naming the file, the line and the problem."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ReproducerError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ReproducerError(f"{path}:{line}: not UTF-8 text ({e.reason})") from None
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise ReproducerError(f"{path}:{e.lineno}: not JSON ({e.msg}, column {e.colno})") from None
    except (ValueError, RecursionError) as e:
        raise ReproducerError(f"{path}:1: not JSON ({str(e).splitlines()[0] if str(e) else 'nested too deep'})") \
            from None
    try:
        made = Reproducer.model_validate(value)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        key = str(first["loc"][0]) if first["loc"] else ""
        raise ReproducerError(f"{path}:{_line_of(text, key)}: not a reproducer ({where or 'the file'}: "
                              f"{first['msg']})") from None
    if made.oracle.result is not None:
        try:
            made.oracle.result.to_result()
        except wire.WireError as e:
            raise ReproducerError(f"{path}:{_line_of(text, 'oracle')}: oracle.result.output is not a wire value "
                                  f"({e})") from None
    return made


def _lines(handle: IO[bytes]) -> Iterator[tuple[int, bytes | None]]:
    """(line number, line) of the reply file; None for a line longer than a reply line may be."""
    number = 0
    while raw := handle.readline(MAX_LINE_BYTES + 1):
        number += 1
        yield number, (raw if len(raw) <= MAX_LINE_BYTES else None)


def _is_handshake(message: Any) -> bool:
    return isinstance(message, dict) and "seq" not in message and ("implementation" in message or
                                                                    "protocol" in message)


def _said(reply: Reply, where: str) -> Reply:
    """A protocol error with the place in the reply file it is about in front of its detail (a result's detail is
    its exception's message, which a surface may read: left as it is)."""
    if reply.kind is not ReplyKind.PROTOCOL_ERROR:
        return reply
    return Reply(reply.kind, reply.value, f"{where}: {reply.detail}", reply.error, reply.encoded)


def read_reply(path: Path, made: Reproducer) -> tuple[Reply, Implementation | None]:
    """The candidate's reply to the reproducer's request, as the harness reads it, and its handshake (None when it
    wrote none); ReproducerError for a file that cannot be read."""
    try:
        handle = path.open("rb")
    except OSError as e:
        raise ReproducerError(f"{path}: cannot read: {e.strerror or e}") from None
    handshake: Implementation | None = None
    with handle:
        for number, raw in _lines(handle):
            where = f"{path}:{number}"
            if raw is None:
                return protocol_error(ProtocolError.OVERSIZED_LINE,
                                      f"{where}: a line longer than {MAX_LINE_BYTES} bytes"), handshake
            message, problem = parse_line(raw)
            if problem is not None:
                return _said(problem, where), handshake
            if handshake is None and number == 1 and _is_handshake(message):
                try:
                    handshake = check_started(message, Spec(where, "file", str(path)))
                except ConnectError as e:
                    return protocol_error(ProtocolError.BAD_HANDSHAKE, str(e)), None
                continue
            return _said(_interpreted(message, made, handshake), where), handshake
    said = "a handshake and no reply" if handshake is not None else "nothing"
    return Reply(ReplyKind.TIMEOUT, detail=f"{path}: the candidate wrote {said} (a reply not flushed is never "
                                          "read)"), handshake


def _interpreted(message: Any, made: Reproducer, handshake: Implementation | None) -> Reply:
    if made.request == "batch":
        answers = batch_answers(message, made.seq, 1)
        if answers is None:
            return protocol_error(ProtocolError.INVALID_REPLY, "not a batch reply of one reply per item: "
                                  f'{{"seq": {made.seq}, "replies": [ONE RUN REPLY]}} answers the batch')
        message = answers[0]
    declared = handshake or made.candidate.implementation
    if declared is None:
        return interpret(message, made.seq)
    return checked(message, made.seq, made.surface, declared)


def judge(sidecar: Path, reply_file: Path) -> tuple[Reproducer, Judged]:
    """The reproducer at ``sidecar``, and the reply in ``reply_file`` judged against its oracle answer."""
    made = load(sidecar)
    if made.oracle.result is None:
        raise ReproducerError(f"{sidecar}: the report holds no oracle answer for {made.id} (its outcome: "
                              f"{made.outcome}): there is nothing to judge a reply against")
    try:
        surface = surfaces.get(made.surface)
        policy = POLICIES.get(made.nan_policy)
    except HarnessError as e:
        raise e.within(str(sidecar)) from None
    expected = made.oracle.result.to_result()
    reply, handshake = read_reply(reply_file, made)
    actual = reply.result(surface)
    mismatches = compare(expected, actual, policy, surface.unordered) if actual is not None else []
    return made, Judged(reply, expected, actual, mismatches, handshake)
