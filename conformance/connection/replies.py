"""What a candidate says back: one reply per request, or a named protocol error.

Every way a reply can be wrong has a name, so a report says what went wrong
in words a candidate author can search for:

    malformed-json     a line that is not JSON (or uses NaN/Infinity tokens)
    split-reply        a line holding the start of a JSON object: a reply broken over lines
    not-protocol       a line that is not a message at all: a log line, a blank line, a bare value
    oversized-line     a line longer than the harness accepts
    too-deep           a line nesting arrays and objects more than 128 levels deep (an in-process output too)
    number-too-large   a JSON number token longer than 4300 characters
    wrong-seq          a reply whose seq is not the request's
    unsolicited-reply  a reply nobody asked for: a second reply to a request, or a line
                       written while no request was outstanding
    invalid-reply      a JSON object of the wrong shape (a field of the wrong type included), or an output
                       that is not a wire value
    undeclared-surface an answer for a surface the handshake's ``surfaces`` does not list
                       (the answer for such a surface is ``skipped``)
    schema-violation   (with --validate-protocol) a message the published JSON Schema refuses, or one holding
                       a string that is not Unicode text (a lone surrogate)
    bad-handshake      (on a restart) the reply to ``start`` is not a valid handshake

Reading a reply is total: whatever a line holds (any bytes, any JSON, any
depth, any number), :func:`parse_line` and :func:`checked` return a message
or a Reply and raise nothing.
"""

from __future__ import annotations

import json
import re
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
    "too-deep": f"a message nests arrays and objects at most {wire.MAX_DEPTH} levels deep; is the output what "
                "the surface asks for?",
    "number-too-large": f"a JSON number is at most {wire.MAX_NUMBER_CHARS} characters long: seq and protocol are "
                        "small integers, and values travel as tags ({\"int\": \"<digits>\"})",
    "wrong-seq": "echo the request's seq in its reply, as the same JSON integer",
    "unsolicited-reply": "write exactly one reply per request, and nothing while no request is waiting",
    "invalid-reply": "a reply is {\"seq\": N} plus exactly one of output, raised, skipped, errored (their fields "
                     "strings: raised.type, errored.message, ...); output is a wire value (ints as {\"int\": "
                     "\"12\"}, floats as {\"float\": \"<bits>\"}): see docs/protocol.md",
    "undeclared-surface": "answer `skipped` for a surface you do not serve, or list it in the handshake's surfaces",
    "schema-violation": "check the message against conformance/schemas/ (the detail names the field); strings are "
                        "Unicode text: no lone surrogate escapes such as \\ud800",
    "bad-handshake": "reply to start with {\"protocol\": 1, \"implementation\": {\"name\", \"version\", "
                     "\"language\", \"surfaces\"}}, every string Unicode text",
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


def parse_line(raw: bytes, codec: wire.Codec = wire.DEFAULT) -> tuple[Any, Reply | None]:
    """A stdout line as a message, or the protocol error it is; read by ``codec``."""
    text = raw.decode("utf-8", "replace").rstrip("\r\n")
    quoted = f"{text[:200]!r}" + (f" ... ({len(text)} characters)" if len(text) > 200 else "")
    if not text.strip():
        return None, protocol_error(ProtocolError.NOT_PROTOCOL, "a blank line on stdout")
    try:
        message = codec.loads(raw)
    except wire.WireError as e:
        if not text.lstrip().startswith(("{", "[")):
            return None, protocol_error(ProtocolError.NOT_PROTOCOL,
                                        f"a line on stdout that is not a protocol message: {quoted}")
        if isinstance(e, wire.TooDeep):
            return None, protocol_error(ProtocolError.TOO_DEEP, f"{e}: {quoted}")
        if isinstance(e, wire.NumberTooLarge):
            return None, protocol_error(ProtocolError.NUMBER_TOO_LARGE, f"{e}: {quoted}")
        if e.at_end:
            return None, protocol_error(
                ProtocolError.SPLIT_REPLY,
                f"a line holding only the start of a JSON message (one message per line): {quoted}")
        return None, protocol_error(ProtocolError.MALFORMED_JSON, f"{e}: {quoted}")
    if not isinstance(message, dict):
        return None, protocol_error(ProtocolError.NOT_PROTOCOL, f"a JSON line that is not an object: {quoted}")
    return message, None


def shown(value: Any, limit: int = 200) -> str:
    """``value``'s repr for a message, at most ``limit`` characters; never raises on a value a reply can hold."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int past the digit limit; a value nested past repr's reach
        return f"<a {type(value).__name__} too large to show>"
    return text if len(text) <= limit else text[:limit] + "..."


# The fields of each kind of answer besides output: which must be strings, which may be (or be null).
_TEXT_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "raised": (("type",), ("message",)),
    "skipped": (("reason",), ()),
    "errored": (("message",), ("traceback",)),
}


def _field_problem(kind: str, body: Any) -> str | None:
    """What is wrong with the object of an answer ``kind`` (raised, skipped, errored); None if nothing.

    Other keys inside it are let through (--validate-protocol refuses them).
    """
    required, optional = _TEXT_FIELDS[kind]
    if not isinstance(body, dict):
        return f"{kind} must be an object, got {type(body).__name__}"
    for name in required:
        if not isinstance(body.get(name), str):
            got = "nothing" if name not in body else type(body[name]).__name__
            return f"{kind}.{name} must be a string, got {got}"
    for name in optional:
        if body.get(name) is not None and not isinstance(body[name], str):
            return f"{kind}.{name} must be a string (or null, or absent), got {type(body[name]).__name__}"
    return None


def interpret(reply: Any, seq: int, answered: frozenset[int] | set[int] = frozenset()) -> Reply:
    """Turn a reply message into a Reply; anything malformed is a named protocol error.

    ``answered``: the seqs of requests already answered on this connection.
    """
    if not isinstance(reply, dict):
        return protocol_error(ProtocolError.NOT_PROTOCOL, f"reply is not a JSON object: {shown(reply)}")
    got = reply.get("seq")
    if isinstance(got, bool) or got != seq:  # true == 1 in Python; a boolean is still no seq
        if type(got) is int and got in answered:
            return protocol_error(ProtocolError.UNSOLICITED_REPLY,
                                  f"a second reply to request seq {got}, read as the reply to seq {seq}")
        return protocol_error(ProtocolError.WRONG_SEQ, f"reply seq {shown(got)} for request seq {seq}")
    keys = set(reply) - {"seq"}
    if keys == {"output"}:
        try:
            return Reply(ReplyKind.OUTPUT, wire.decode(reply["output"]), encoded=reply["output"])
        except wire.TooDeep as e:
            return protocol_error(ProtocolError.TOO_DEEP, f"output: {e}")
        except wire.WireError as e:
            return protocol_error(ProtocolError.INVALID_REPLY, f"undecodable output: {e}")
    if len(keys) == 1 and (kind := next(iter(keys))) in _TEXT_FIELDS:
        body = reply[kind]
        if (problem := _field_problem(kind, body)) is not None:
            return protocol_error(ProtocolError.INVALID_REPLY, problem)
        if kind == "raised":
            return Reply(ReplyKind.RAISED, body["type"], body.get("message") or "")
        if kind == "skipped":
            return Reply(ReplyKind.SKIPPED, detail=body["reason"])
        traceback = "\n" + body["traceback"] if body.get("traceback") else ""
        return Reply(ReplyKind.ERRORED, detail=body["message"] + traceback)
    named = ", ".join(sorted(shown(key, 60) for key in keys)) or "nothing"
    return protocol_error(ProtocolError.INVALID_REPLY,
                          f"reply has neither output, raised, skipped nor errored, but: {named}")


def batch_answers(reply: Any, seq: int, count: int) -> list[Any] | None:
    """The item replies of a reply to the batch ``seq`` of ``count`` items; None when it is no such batch reply
    (then the batch went wrong as a whole)."""
    whole = isinstance(reply, dict) and set(reply) == {"seq", "replies"} and type(reply["seq"]) is int \
        and reply["seq"] == seq
    answers = reply["replies"] if whole else None
    return answers if isinstance(answers, list) and len(answers) == count else None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _not_unicode(message: Any) -> str | None:
    """Where ``message`` holds a string that is not Unicode text (a lone surrogate, which JSON can escape
    but UTF-8 cannot encode); None if nowhere. A schema cannot say it: it is checked here."""
    todo: list[tuple[str, Any, int]] = [("", message, 0)]
    while todo:
        where, value, depth = todo.pop()
        if isinstance(value, str):
            if (found := _SURROGATE.search(value)) is not None:
                return (f"{where or '(message)'}: {shown(value, 60)} holds a lone surrogate, "
                        f"U+{ord(found.group()):04X}, which is not Unicode text (a character outside the BMP is "
                        f"written as a pair of \\u escapes, or as raw UTF-8)")
        elif depth <= wire.MAX_DEPTH and isinstance(value, (dict, list)):
            items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
            for key, item in reversed(items):
                label = shown(key) if isinstance(key, str) and _SURROGATE.search(key) else str(key)
                inner = f"{where}/{label}" if where else label
                todo.append((inner, item, depth + 1))
                if isinstance(key, str):
                    todo.append((f"{inner} (the key)", key, depth + 1))
    return None


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
        found = dict.fromkeys(f"{'/'.join(map(str, err['loc'])) or '(message)'}: {err['msg']} "
                              f"(got {shown(err['input'], 60)})" for err in errors)
        return list(found)[:5]
    if (problem := _not_unicode(message)) is not None:
        return [problem]
    from jsonschema.exceptions import best_match

    try:
        error = best_match(_validator(schema).iter_errors(message))
    except RecursionError:  # the validator recurses a few frames a level: a deep stack may leave too few
        return [f"(message): nested too deep for the {schema} validator to check"]
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
