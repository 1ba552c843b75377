"""What a candidate says back: one reply per request, or a named protocol error.

Every way a reply can be wrong has a name, so a report says what went wrong
in words a candidate author can search for:

    malformed-json     a line that is not JSON (or uses NaN/Infinity tokens)
    split-reply        a line holding the start of a JSON object: a reply broken over lines
    not-protocol       a line that is not a message at all: a log line, a blank line, a bare value
    oversized-line     a line longer than the harness accepts
    wrong-seq          a reply whose seq is not the request's
    unsolicited-reply  a reply nobody asked for: a second reply to a request, or a line
                       written while no request was outstanding
    invalid-reply      a JSON object of the wrong shape, or an output that is not a wire value
    undeclared-surface an answer for a surface the handshake's ``surfaces`` does not list
                       (the answer for such a surface is ``skipped``)
    schema-violation   (with --validate-protocol) a message the published JSON Schema refuses
    bad-handshake      (on a restart) the reply to ``start`` is not a valid handshake
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from conformance.connection.protocol import Implementation
from conformance.core.compare import Result
from conformance.core.outcomes import ProtocolError, ReplyKind
from conformance.core.surfaces import Surface
from conformance.kit import wire

PROTOCOL_ERRORS = tuple(ProtocolError)


# What a candidate author can do about each; `conformance smoke` prints them.
HINTS: dict[str, str] = {
    "malformed-json": "write each message with a JSON library; NaN and Infinity are not JSON (floats travel as "
                      "{\"float\": \"<16 hex digits>\"})",
    "split-reply": "write each message on one line: no pretty-printing (no indent), one newline at its end",
    "not-protocol": "stdout carries protocol messages only: send logs, banners and progress to stderr",
    "oversized-line": "a reply line is limited in size; is the output what the surface asks for?",
    "wrong-seq": "echo the request's seq in its reply, as the same JSON integer",
    "unsolicited-reply": "write exactly one reply per request, and nothing while no request is waiting",
    "invalid-reply": "a reply is {\"seq\": N} plus exactly one of output, raised, skipped, errored; output is a "
                     "wire value (ints as {\"int\": \"12\"}, floats as {\"float\": \"<bits>\"}): see docs/protocol.md",
    "undeclared-surface": "answer `skipped` for a surface you do not serve, or list it in the handshake's surfaces",
    "schema-violation": "check the message against conformance/schemas/ (the detail names the field)",
    "bad-handshake": "reply to start with {\"protocol\": 1, \"implementation\": {\"name\", \"version\", "
                     "\"language\", \"surfaces\"}}",
    "timeout": "flush stdout after every reply; a reply left in a buffer never arrives",
    "crash": "the process exited: its stderr tail is above",
}


@dataclass
class Reply:
    """One answer to one run request, as the runner sees it."""

    kind: ReplyKind
    value: Any = None  # decoded output, or the raised exception's class name
    detail: str = ""
    error: ProtocolError | None = None  # with protocol-error: which rule it broke
    encoded: Any = field(default=None, compare=False, repr=False)  # with output: its wire form, as received

    def __post_init__(self) -> None:
        self.kind = ReplyKind(self.kind)
        if self.error is not None:
            self.error = ProtocolError(self.error)

    def result(self, surface: Surface) -> Result | None:
        """The reply as a result to compare; None when it is not one (errored, skipped, lost)."""
        if self.kind is ReplyKind.OUTPUT:
            return Result.of_value(self.value, self.encoded)
        if self.kind is ReplyKind.RAISED:
            return Result.of_raised(self.value, surface.read_message(self.detail), self.detail)
        return None

    def first_line(self, limit: int = 200) -> str:
        """The detail's first line: what a one-line account of the reply shows."""
        lines = self.detail.strip().splitlines()
        return lines[0][:limit] if lines else ""


def protocol_error(error: ProtocolError, detail: str) -> Reply:
    return Reply(ReplyKind.PROTOCOL_ERROR, detail=detail, error=ProtocolError(error))


def parse_line(raw: bytes) -> tuple[Any, Reply | None]:
    """A stdout line as a message, or the protocol error it is."""
    text = raw.decode("utf-8", "replace").rstrip("\r\n")
    shown = f"{text[:200]!r}" + (f" ... ({len(text)} characters)" if len(text) > 200 else "")
    if not text.strip():
        return None, protocol_error(ProtocolError.NOT_PROTOCOL, "a blank line on stdout")
    try:
        message = wire.loads(raw)
    except wire.WireError as e:
        if not text.lstrip().startswith(("{", "[")):
            return None, protocol_error(ProtocolError.NOT_PROTOCOL,
                                        f"a line on stdout that is not a protocol message: {shown}")
        if _cut_short(text):
            return None, protocol_error(
                ProtocolError.SPLIT_REPLY,
                f"a line holding only the start of a JSON message (one message per line): {shown}")
        return None, protocol_error(ProtocolError.MALFORMED_JSON, f"{e}: {shown}")
    if not isinstance(message, dict):
        return None, protocol_error(ProtocolError.NOT_PROTOCOL, f"a JSON line that is not an object: {shown}")
    return message, None


def _cut_short(text: str) -> bool:
    """Whether ``text`` is a JSON document cut off before its end (JSON would go on)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return e.pos >= len(text.rstrip())
    return False


def interpret(reply: Any, seq: int, answered: frozenset[int] | set[int] = frozenset()) -> Reply:
    """Turn a reply message into a Reply; anything malformed is a named protocol error.

    ``answered``: the seqs of requests already answered on this connection.
    """
    if not isinstance(reply, dict):
        return protocol_error(ProtocolError.NOT_PROTOCOL, f"reply is not a JSON object: {reply!r:.200}")
    got = reply.get("seq")
    if got != seq:
        if isinstance(got, int) and got in answered:
            return protocol_error(ProtocolError.UNSOLICITED_REPLY,
                                  f"a second reply to request seq {got}, read as the reply to "
                                                       f"seq {seq}")
        return protocol_error(ProtocolError.WRONG_SEQ, f"reply seq {got!r} for request seq {seq}")
    keys = set(reply) - {"seq"}
    if keys == {"output"}:
        try:
            return Reply(ReplyKind.OUTPUT, wire.decode(reply["output"]), encoded=reply["output"])
        except wire.WireError as e:
            return protocol_error(ProtocolError.INVALID_REPLY, f"undecodable output: {e}")
    if keys == {"raised"} and isinstance(reply["raised"], dict) and isinstance(reply["raised"].get("type"), str):
        return Reply(ReplyKind.RAISED, reply["raised"]["type"], str(reply["raised"].get("message", "")))
    if keys == {"skipped"} and isinstance(reply["skipped"], dict) and isinstance(reply["skipped"].get("reason"), str):
        return Reply(ReplyKind.SKIPPED, detail=reply["skipped"]["reason"])
    if keys == {"errored"} and isinstance(reply["errored"], dict) and isinstance(reply["errored"].get("message"), str):
        err = reply["errored"]
        traceback = "\n" + err["traceback"] if err.get("traceback") else ""
        return Reply(ReplyKind.ERRORED, detail=str(err.get("message", "")) + traceback)
    return protocol_error(ProtocolError.INVALID_REPLY,
                          f"reply has neither output, raised, skipped nor errored: {sorted(keys)}")


@cache
def _validator(name: str) -> Any:
    import jsonschema

    schema = json.loads((resources.files("conformance") / "schemas" / name).read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def schema_problems(message: Any, schema: str) -> list[str]:
    """Where ``message`` breaks the published schema ``schema`` (e.g. protocol-run-reply.json); [] if nowhere.

    The messages' own models are asked first, strictly, for errors a reader
    can act on (and because JSON Schema counts 3.0 as an integer, where the
    protocol's integers are JSON integer tokens); then the schema file itself.
    """
    from pydantic import TypeAdapter, ValidationError

    from conformance.connection.protocol import RUN_REPLY_ADAPTER, STARTED_ADAPTER

    adapters: dict[str, TypeAdapter[Any]] = {"protocol-run-reply.json": RUN_REPLY_ADAPTER,
                                             "protocol-started.json": STARTED_ADAPTER}
    adapter = adapters[schema]
    try:
        adapter.validate_python(message, strict=True)
    except ValidationError as e:
        errors = e.errors()
        if adapter is RUN_REPLY_ADAPTER and isinstance(message, dict):
            # each reply shape reports its own errors: keep those of the shape the reply's key names
            own = [err for err in errors if err["loc"] and str(err["loc"][0]).lower().removesuffix("reply")
                   in message]
            errors = [{**err, "loc": err["loc"][1:]} for err in own] or errors
        shown = dict.fromkeys(f"{'/'.join(map(str, err['loc'])) or '(message)'}: {err['msg']} "
                              f"(got {err['input']!r:.60})" for err in errors)
        return list(shown)[:5]
    from jsonschema.exceptions import best_match

    error = best_match(_validator(schema).iter_errors(message))
    return [] if error is None else [f"{'/'.join(map(str, error.absolute_path)) or '(message)'}: {error.message[:300]}"]


def checked(message: Any, seq: int, surface: str, implementation: Implementation, *,
            answered: frozenset[int] | set[int] = frozenset(), validate: bool = False) -> Reply:
    """``interpret``, then the surface the answer is for; with ``validate``, the published schema too."""
    reply = interpret(message, seq, answered)
    if reply.kind is ReplyKind.PROTOCOL_ERROR:
        return reply
    if validate:
        problems = schema_problems(message, "protocol-run-reply.json")
        if problems:
            return protocol_error(ProtocolError.SCHEMA_VIOLATION, "protocol-run-reply.json: " + "; ".join(problems))
    declared = implementation.surfaces
    if surface not in declared and reply.kind is not ReplyKind.SKIPPED:
        return protocol_error(ProtocolError.UNDECLARED_SURFACE,
                              f"an answer for {surface}, which the handshake's `surfaces` "
                                                    f"{declared} does not list (answer `skipped`, or list it)")
    return reply
