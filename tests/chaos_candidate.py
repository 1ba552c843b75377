"""A candidate that misbehaves on purpose, request by request.

    python chaos_candidate.py PLAN.json

PLAN.json: {"runs": [BEHAVIOUR, ...], "starts": [BEHAVIOUR, ...], "stop": BEHAVIOUR,
            "surfaces": [...] (optional: what the handshake declares; default all),
            "batch": true (optional: it declares batches), "batches": [BEHAVIOUR, ...]}

The n-th ``run`` request this candidate receives (counted across restarts,
in PLAN.json's folder, file ``state.json``) gets the n-th run behaviour, or
"ok" when the list is used up; likewise the n-th ``start``. A correct answer
("ok") is the reference implementation's. ``log.jsonl`` there gets one line
per request received: what the harness asked, so a test can tell which cases
reached the candidate.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from conformance.reference import candidate as reference

PLAN_PATH = Path(sys.argv[1])
PLAN = json.loads(PLAN_PATH.read_text())
STATE = PLAN_PATH.with_name("state.json")
LOG = PLAN_PATH.with_name("log.jsonl")


def write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def send(message: dict) -> None:
    write(json.dumps(message) + "\n")


def next_behaviour(kind: str) -> str:
    """The behaviour for this request; the count is saved before acting (the process may be killed)."""
    state = json.loads(STATE.read_text()) if STATE.exists() else {}
    index = state.get(kind, 0)
    state[kind] = index + 1
    STATE.write_text(json.dumps(state))
    plan = PLAN.get(kind, [])
    return plan[index] if index < len(plan) else "ok"


def hang() -> None:
    while True:
        time.sleep(60)


def start(message: dict) -> None:
    behaviour = next_behaviour("starts")
    if behaviour == "hang":
        hang()
    if behaviour == "crash":
        sys.stderr.write("chaos: crash on start\n")
        sys.exit(4)
    if behaviour == "garbage":
        write("chaos candidate v0 starting up\n")
        return
    if behaviour == "bad-handshake":  # no name, language or surfaces
        send({"protocol": 1, "implementation": {"version": "0"}})
        return
    started = reference.handle(message)
    if not PLAN.get("batch"):  # batches only when the plan asks for them
        started["implementation"].pop("batch", None)
    if "surfaces" in PLAN:
        started["implementation"]["surfaces"] = PLAN["surfaces"]
    send(started)


def run(message: dict) -> None:
    behaviour = next_behaviour("runs")
    seq = message["seq"]
    reply = reference.handle(message)
    line = json.dumps(reply)
    if behaviour == "ok":
        send(reply)
    elif behaviour == "hang":
        hang()
    elif behaviour == "crash":
        sys.stderr.write(f"chaos: crash on seq {seq}\n")
        sys.exit(3)
    elif behaviour == "wrong-seq":
        send({**reply, "seq": seq + 1000})
    elif behaviour == "malformed-json":
        write('{"seq": ' + str(seq) + ',, "output": null}\n')
    elif behaviour == "not-protocol":
        write(f"computing seq {seq}...\n")
    elif behaviour == "split-reply":  # pretty-printed: one message over several lines
        write(json.dumps(reply, indent=2) + "\n")
    elif behaviour == "split-writes":  # one line in three writes, with pauses: a valid reply
        third = len(line) // 3
        for chunk in (line[:third], line[third:2 * third], line[2 * third:] + "\n"):
            write(chunk)
            time.sleep(0.05)
    elif behaviour == "huge":
        write('{"seq": ' + str(seq) + ', "output": "' + "x" * (65 * 1024 * 1024) + '"}\n')
    elif behaviour == "slow":
        time.sleep(0.5)
        send(reply)
    elif behaviour == "double":
        write(line + "\n" + line + "\n")
    elif behaviour == "bare-number":
        send({"seq": seq, "output": 1.5})
    elif behaviour == "float-seq":  # accepted as seq 1 == 1.0 by a lenient reader; the schema wants an integer
        write(line.replace(f'"seq": {seq}', f'"seq": {seq}.0', 1) + "\n")
    elif behaviour == "exit-quietly":
        sys.exit(0)
    else:
        raise SystemExit(f"chaos: unknown behaviour {behaviour!r}")


def batch(message: dict) -> None:
    behaviour = next_behaviour("batches")
    reply = reference.handle(message)
    if behaviour == "ok":
        send(reply)
    elif behaviour == "hang":
        hang()
    elif behaviour == "crash":
        sys.exit(5)
    elif behaviour == "short":  # one reply fewer than the items
        send({**reply, "replies": reply["replies"][:-1]})
    elif behaviour == "garbage":
        write("batch? what batch?\n")
    elif behaviour == "first-wrong-seq":  # a whole batch reply, one of whose replies is wrong
        reply["replies"][0]["seq"] += 1000
        send(reply)
    else:
        raise SystemExit(f"chaos: unknown batch behaviour {behaviour!r}")


def main() -> None:
    for raw in sys.stdin:
        message = json.loads(raw)
        with LOG.open("a") as log:
            log.write(json.dumps({"cmd": message["cmd"], "surface": message.get("surface"),
                                  "input": message.get("input"), "cwd": os.getcwd()}) + "\n")
        if message["cmd"] == "start":
            start(message)
        elif message["cmd"] == "run":
            run(message)
        elif message["cmd"] == "batch":
            batch(message)
        elif message["cmd"] == "stop":
            if PLAN.get("stop") == "hang":
                hang()
            return


if __name__ == "__main__":
    main()
