"""The protocol: published schemas, messages of real implementations, spec resolution."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import jsonschema
import pytest

from conformance.connection import connectors as connect_module
from conformance.connection import harbor as harbor_connection
from conformance.connection.base import ConnectError
from conformance.connection.connectors import connect
from conformance.connection.replies import Reply, interpret
from conformance.core import registry as registry_module
from conformance.core.registry import Registry
from conformance.kit import wire
from conformance.reference import candidate as reference
from conformance.schema_export import all_schemas

SCHEMAS = Path(__file__).resolve().parent.parent / "conformance" / "schemas"


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text())


def _validator(name: str) -> jsonschema.Draft202012Validator:
    """One validator for many messages (``jsonschema.validate`` checks the schema itself on every call)."""
    schema = _schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_published_schemas_are_up_to_date():
    for name, schema in all_schemas().items():
        assert json.loads((SCHEMAS / name).read_text()) == schema, f"run `conformance schemas`: {name}"


def test_every_schema_is_a_valid_json_schema():
    for name in all_schemas():
        jsonschema.Draft202012Validator.check_schema(_schema(name))


def _messages_of(target, corpus):
    started = target.handle({"cmd": "start", "protocol": 1})
    replies = [target.handle({"cmd": "run", "seq": i, "surface": c.case.surface, "input": wire.encode(c.case.input)})
               for i, c in enumerate(corpus)]
    return started, replies


@pytest.mark.slow
def test_reference_messages_match_the_schemas(corpus):
    started, replies = _messages_of(reference, corpus)
    jsonschema.validate(started, _schema("protocol-started.json"))
    reply_schema = _validator("protocol-run-reply.json")
    for reply in replies:
        reply_schema.validate(reply)
    request_schema = _validator("protocol-request.json")
    for c in corpus:
        request_schema.validate({"cmd": "run", "seq": 1, "surface": c.case.surface,
                                 "input": wire.encode(c.case.input)})


@pytest.mark.slow
@pytest.mark.usefixtures("harbor_env")
def test_oracle_messages_match_the_schemas(corpus):
    argv = harbor_connection.harbor_argv("0.13.1")
    lines = [wire.dumps({"cmd": "start", "protocol": 1})]
    lines += [wire.dumps({"cmd": "run", "seq": i, "surface": c.case.surface, "input": wire.encode(c.case.input)})
              for i, c in enumerate(corpus)]
    lines.append(wire.dumps({"cmd": "stop"}))
    proc = subprocess.run(argv, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(replies) == len(corpus) + 1
    jsonschema.validate(replies[0], _schema("protocol-started.json"))
    assert replies[0]["implementation"]["version"] == "0.13.1"
    reply_schema = _validator("protocol-run-reply.json")
    for i, reply in enumerate(replies[1:]):
        reply_schema.validate(reply)
        assert reply["seq"] == i


@pytest.mark.parametrize(("reply", "kind"), [
    ({"seq": 7, "output": {"float": "3ff0000000000000"}}, "output"),
    ({"seq": 7, "raised": {"type": "ValueError", "message": "x"}}, "raised"),
    ({"seq": 7, "skipped": {"reason": "no"}}, "skipped"),
    ({"seq": 7, "errored": {"message": "bad"}}, "errored"),
    ({"seq": 8, "output": None}, "protocol-error"),
    ({"output": None}, "protocol-error"),
    ({"seq": 7, "output": 1.5}, "protocol-error"),
    ({"seq": 7, "output": None, "raised": {"type": "X"}}, "protocol-error"),
    ([1, 2], "protocol-error"),
])
def test_reply_interpretation(reply, kind):
    assert interpret(reply, 7).kind == kind


def test_unknown_spec_is_a_clear_error():
    with pytest.raises(ConnectError, match="unknown candidate"):
        connect("nonexistent-candidate")
    with pytest.raises(ConnectError, match="cannot import"):
        connect("no_such_module_anywhere:thing")
    with pytest.raises(ConnectError, match="not a candidate"):
        connect("conformance.kit.wire:encode")


def test_entry_point_candidates_are_found(monkeypatch):
    fresh = Registry("candidate", connect_module.CANDIDATES.group)  # entry points not read yet
    entry = metadata.EntryPoint("my-runner", "conformance.reference:candidate", fresh.group)
    monkeypatch.setattr(connect_module, "CANDIDATES", fresh)
    monkeypatch.setattr(registry_module.metadata, "entry_points", lambda group: [entry] if group == fresh.group else [])
    conn = connect("my-runner")
    assert conn.implementation is not None and conn.implementation.name == "reference"
    reply = conn.run(1, "reward.parse", wire.encode({"reward_txt": b"1"}))
    assert reply == Reply("output", {"reward": 1.0})


CRASHY = """
import sys, json
for line in sys.stdin:
    msg = json.loads(line)
    if msg["cmd"] == "start":
        print(json.dumps({"protocol": 1, "implementation": {"name": "crashy", "version": "0", "language": "python",
                                                              "surfaces": ["reward.parse"]}}), flush=True)
    elif msg["cmd"] == "run":
        if msg["seq"] % 2:
            sys.stderr.write("boom on odd seq\\n"); sys.exit(3)
        print(json.dumps({"seq": msg["seq"], "output": None}), flush=True)
"""


def test_a_crashing_candidate_is_restarted_and_the_run_goes_on(tmp_path):
    script = tmp_path / "crashy.py"
    script.write_text(CRASHY)
    conn = connect(f"exec:{sys.executable} {script}")
    try:
        first = conn.run(1, "reward.parse", None)
        second = conn.run(2, "reward.parse", None)
        third = conn.run(3, "reward.parse", None)
    finally:
        conn.close()
    assert first.kind == "crash" and "boom on odd seq" in first.detail and "status 3" in first.detail
    assert second == Reply("output", None)
    assert third.kind == "crash"


BAD_HANDSHAKE = """
import sys, json
for line in sys.stdin:
    print(json.dumps({"protocol": 1, "implementation": {"version": "0"}}), flush=True)
"""


def test_an_invalid_handshake_is_refused_with_what_is_missing(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text(BAD_HANDSHAKE)
    with pytest.raises(ConnectError, match=r"implementation\.name"):
        connect(f"exec:{sys.executable} {script}")


def test_exec_paths_relative_to_the_caller_work(tmp_path, monkeypatch):
    (tmp_path / "runner.py").write_text("from conformance.reference import candidate\ncandidate.serve()\n")
    monkeypatch.chdir(tmp_path)
    conn = connect(f"exec:{sys.executable} runner.py")
    try:
        assert conn.run(1, "reward.parse", wire.encode({"reward_txt": b"0"})) == Reply("output", {"reward": 0.0})
    finally:
        conn.close()
