"""The candidate protocol, version 1: messages as pydantic models.

JSON Lines over stdin/stdout; the in-process transport carries the very same
dicts. The harness sends ``start`` once, then ``run`` requests (each with a
``seq`` the reply echoes), then ``stop``. ``docs/protocol.md`` is the prose
description; ``conformance/schemas/`` holds the JSON Schemas generated from
these models (``conformance schemas --check`` keeps them in step).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from conformance.kit.wire import WIRE_VERSION

PROTOCOL_VERSION = 1

# A wire value (see conformance.kit.wire); structurally checked by wire.decode.
WIRE_VALUE_SCHEMA: dict[str, Any] = {
    "description": "A lossless value: null, boolean, string, array of values, or one-key tag object.",
    "anyOf": [
        {"type": ["null", "boolean", "string"]},
        {"type": "array", "items": {"$ref": "#/$defs/WireValue"}},
        {"type": "object", "properties": {"int": {"type": "string", "pattern": "^-?[0-9]+$"}},
         "required": ["int"], "additionalProperties": False},
        {"type": "object", "properties": {"float": {"type": "string", "pattern": "^[0-9a-f]{16}$"}},
         "required": ["float"], "additionalProperties": False},
        {"type": "object", "properties": {"bytes": {"type": "string", "contentEncoding": "base64"}},
         "required": ["bytes"], "additionalProperties": False},
        {"type": "object",
         "properties": {"dict": {"type": "array", "items": {
             "type": "array", "minItems": 2, "maxItems": 2, "items": {"$ref": "#/$defs/WireValue"}}}},
         "required": ["dict"], "additionalProperties": False},
    ],
}


def _wire_value_field(description: str) -> Any:
    return Field(description=description)


def _point_at_wire_value(schema: Any) -> None:
    """Make every ``input``/``output`` property a reference to the WireValue definition."""
    if isinstance(schema, dict):
        for name in ("input", "output"):
            prop = schema.get("properties", {}).get(name)
            if prop is not None:
                schema["properties"][name] = {"$ref": "#/$defs/WireValue", "description": prop.get("description", "")}
        for value in schema.values():
            _point_at_wire_value(value)
    elif isinstance(schema, list):
        for value in schema:
            _point_at_wire_value(value)


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- harness -> candidate ----------------------------------------------------


class Start(_Message):
    cmd: Literal["start"]
    protocol: int = Field(description="The protocol version the harness speaks.")


class Run(_Message):
    cmd: Literal["run"]
    seq: int = Field(description="Sequence number; the reply must echo it.")
    surface: str = Field(description="Name of the scoring surface, as case files and reports name it.")
    input: Any = _wire_value_field("The surface's input as a wire value.")


class Stop(_Message):
    cmd: Literal["stop"]


class BatchItem(_Message):
    seq: int = Field(description="Sequence number of this item; its reply echoes it.")
    surface: str
    input: Any = _wire_value_field("The surface's input as a wire value.")


class Batch(_Message):
    """Several run requests in one message, only to a candidate whose handshake says ``batch: true``."""

    cmd: Literal["batch"]
    seq: int = Field(description="Sequence number of the batch; the reply echoes it.")
    items: list[BatchItem]


Request = Annotated[Start | Run | Batch | Stop, Field(discriminator="cmd")]


# -- candidate -> harness ----------------------------------------------------


class Implementation(_Message):
    name: str
    version: str
    language: str
    surfaces: list[str] = Field(description="The surfaces this candidate answers.")
    homepage: str | None = None
    dependencies: dict[str, str] = Field(
        default_factory=dict, description="Versions of what the implementation runs on."
    )
    batch: bool = Field(
        default=False,
        description="Optional: it answers `batch` messages (several run requests in one line). Without it, the "
                    "harness sends one run request at a time.",
    )
    scope: dict[str, dict[str, list[Any]]] | None = Field(
        default=None,
        description="Optional: the only inputs it claims, per surface: top-level input keys and the values they may "
                    "take (a plugin of one metric claims {\"SURFACE\": {\"metric\": [its name]}}). It is "
                    "certified on those surfaces and inputs alone.",
    )


class Started(_Message):
    protocol: int
    implementation: Implementation


class Raised(_Message):
    type: str = Field(description="Class name of the exception the scoring code raised.")
    message: str = ""


class Skipped(_Message):
    reason: str


class Errored(_Message):
    message: str
    traceback: str | None = None


class OutputReply(_Message):
    seq: int
    output: Any = _wire_value_field("The surface's output as a wire value.")


class RaisedReply(_Message):
    seq: int
    raised: Raised


class SkippedReply(_Message):
    seq: int
    skipped: Skipped


class ErroredReply(_Message):
    seq: int
    errored: Errored


RunReply = Union[OutputReply, RaisedReply, SkippedReply, ErroredReply]


class BatchReply(_Message):
    seq: int = Field(description="The batch's seq.")
    replies: list[RunReply] = Field(description="One run reply per item, in the items' order.")

REQUEST_ADAPTER: TypeAdapter[Start | Run | Batch | Stop] = TypeAdapter(Request)
STARTED_ADAPTER: TypeAdapter[Started] = TypeAdapter(Started)
RUN_REPLY_ADAPTER: TypeAdapter[OutputReply | RaisedReply | SkippedReply | ErroredReply] = TypeAdapter(RunReply)
BATCH_REPLY_ADAPTER: TypeAdapter[BatchReply] = TypeAdapter(BatchReply)


def schemas() -> dict[str, dict[str, Any]]:
    """JSON Schemas of every message, keyed by file name."""
    out = {}
    adapters: dict[str, TypeAdapter[Any]] = {
        "request": REQUEST_ADAPTER,
        "started": STARTED_ADAPTER,
        "run-reply": RUN_REPLY_ADAPTER,
        "batch-reply": BATCH_REPLY_ADAPTER,
    }
    for name, adapter in adapters.items():
        schema = adapter.json_schema()
        _point_at_wire_value(schema)
        schema.setdefault("$defs", {})["WireValue"] = WIRE_VALUE_SCHEMA
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["title"] = f"harbor-conformance protocol {PROTOCOL_VERSION}: {name}"
        out[f"protocol-{name}.json"] = schema
    return out


assert WIRE_VERSION == PROTOCOL_VERSION  # the wire format is part of the protocol version
