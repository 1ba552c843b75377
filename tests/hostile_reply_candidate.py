"""A candidate whose replies are hostile byte sequences, once each.

    python hostile_reply_candidate.py RUN_ATTACK [START_ATTACK]

It answers like the reference implementation, except: the first ``run``
request it receives, and any later one with the same input (the harness asks
an input it diverges on once more), gets the line RUN_ATTACK names (``ok``:
none), and the first ``start`` the handshake START_ATTACK names (default
``ok``). "First" counts across restarts: a marker file in the working
directory (the same folder for every restart of one connection), or in
$HOSTILE_STATE when set (across connections too), says an attack was made,
and on which input.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from conformance.reference import candidate as reference

DEEP = 5_000  # past the JSON reader's recursion, within the transport's 100,000 values a line


def run_attack(name: str, seq: int) -> str:
    """The line written instead of the reply to request ``seq``."""
    lines = {
        # lone surrogates, written as JSON escapes (the only way they can be written: raw they are not UTF-8)
        "surrogate-output": f'{{"seq": {seq}, "output": "\\ud800"}}',
        # a lone surrogate, and the six characters of its escape as text: two different strings
        "reward-surrogate": f'{{"seq": {seq}, "output": {{"dict": [["reward", "\\ud800"]]}}}}',
        "reward-escape-text": f'{{"seq": {seq}, "output": {{"dict": [["reward", "\\\\ud800"]]}}}}',
        "surrogate-key": f'{{"seq": {seq}, "output": {{"dict": [["\\udfff", null], ["\\\\udfff", null]]}}}}',
        "surrogate-raised": f'{{"seq": {seq}, "raised": {{"type": "Value\\ud800Error", "message": "bad \\udc80"}}}}',
        "surrogate-skipped": f'{{"seq": {seq}, "skipped": {{"reason": "not \\ud83d served"}}}}',
        "surrogate-errored": f'{{"seq": {seq}, "errored": {{"message": "oops \\ud800", '
                             f'"traceback": "at line 1\\n  \\udbff"}}}}',
        # nesting (the reply object is a level): at the limit of 128, one past it, past wire decoding's recursion,
        # past the JSON reader's, past the transport's count of values
        "deep-128": f'{{"seq": {seq}, "output": {"[" * 127}{"]" * 127}}}',
        "deep-129": f'{{"seq": {seq}, "output": {"[" * 128}{"]" * 128}}}',
        "deep-900": f'{{"seq": {seq}, "output": {"[" * 900}{"]" * 900}}}',
        "deep-dicts": f'{{"seq": {seq}, "output": ' + '{"dict": [["k", ' * 80 + "null" + "]]}" * 80 + "}",
        "deep-5000": f'{{"seq": {seq}, "output": {"[" * DEEP}{"]" * DEEP}}}',
        "deep-100000": f'{{"seq": {seq}, "output": {"[" * 100_000}{"]" * 100_000}}}',
        "deep-unclosed": f'{{"seq": {seq}, "output": {"[" * DEEP}',
        "deep-elsewhere": f'{{"seq": {seq}, "output": null, "junk": {"[" * 500}{"]" * 500}}}',
        # numbers
        "huge-seq": f'{{"seq": {"9" * 100_000}, "output": null}}',
        "huge-float": f'{{"seq": {seq}, "output": null, "x": 1.{"5" * 10_000}}}',
        # field types
        "traceback-not-string": f'{{"seq": {seq}, "errored": {{"message": "oops", "traceback": 12}}}}',
        "message-not-string": f'{{"seq": {seq}, "raised": {{"type": "ValueError", "message": ["x"]}}}}',
        "seq-is-bool": '{"seq": true, "output": null}',  # (true == 1 in Python: the first request of a run)
    }
    return lines[name]


def start_attack(name: str, started: dict) -> str:
    if name == "surrogate-name":
        text = json.dumps(started)
        return text.replace('"reference"', '"ref\\ud800erence"', 1).replace(
            started["implementation"]["version"], started["implementation"]["version"] + "\\udfff", 1)
    if name == "deep":
        return '{"protocol": 1, "implementation": ' + "[" * DEEP + "]" * DEEP + "}"
    if name == "deep-scope":
        started["implementation"]["scope"] = {"reward.parse": {"x": [None]}}
        return json.dumps(started).replace("null", "[" * 900 + "]" * 900)
    if name == "path-name":  # a name and version that would be a path, a terminal's escape sequence, and long
        started["implementation"]["name"] = "../../\x1b[2J/etc/passwd\\..\\" + "n" * 5000
        started["implementation"]["version"] = "../1.0\n"
        return json.dumps(started)
    if name == "huge-protocol":
        return json.dumps(started).replace('"protocol": 1', '"protocol": 1' + "0" * 100_000, 1)
    raise SystemExit(f"unknown start attack {name!r}")


def main() -> None:
    run_name = sys.argv[1]
    start_name = sys.argv[2] if len(sys.argv) > 2 else "ok"
    for raw in sys.stdin:
        message = json.loads(raw)
        if message["cmd"] == "stop":
            return
        reply = reference.handle(message)
        if message["cmd"] == "start":
            reply["implementation"].pop("batch", None)  # one request at a time: each attack meets one case
        line = json.dumps(reply)
        kind = message["cmd"]
        name = {"start": start_name, "run": run_name}.get(kind, "ok")
        marker = Path(os.environ.get("HOSTILE_STATE", ".")) / f"attacked-{kind}"
        attacked_input = json.dumps(message.get("input"), sort_keys=True)
        if name != "ok" and (not marker.exists() or (kind == "run" and marker.read_text() == attacked_input)):
            marker.write_text(attacked_input if kind == "run" else "")
            line = start_attack(name, reply) if kind == "start" else run_attack(name, message["seq"])
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
