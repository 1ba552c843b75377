"""Answers that ship with the suite: harbor's answers to every case and to the ``ci`` profile's generated inputs.

A runner's CI job runs on a fresh machine: without them its ``--profile ci``
run would create harbor's virtualenv (a CPython 3.12 first) to ask harbor
what harbor 0.13.1 always answers. ``conformance recordings write`` (``nox -s
recordings``) certifies the reference with the ``ci`` profile against the
live oracle, in an answer cache and an input store of its own, and keeps
what they then hold:

- ``oracles/recordings/harbor-VERSION.jsonl``: a :class:`RecordingHeader`
  line (the oracle's identity and handshake, the suite's and Hypothesis's
  versions), then one line per answer, ``{"key", "surface", "answer"}``, as
  the answer cache keys and stores them (:mod:`conformance.oracle.answers`);
- ``oracles/recordings/inputs/``: the run's stored inputs, laid out as the
  input store lays them out (:mod:`conformance.run.stored_inputs`), which
  reads them as its own.

The answers apply while the oracle they were recorded from is the oracle a
run would start: the same harbor release, lock and adapter code (each part
of the answer cache's identity). Only the interpreter's patch release is
taken on trust: the lock pins every package, and a run may not create the
virtualenv to learn it. A recording of another lock or adapter is stale: it
is not used, and ``conformance recordings check`` (in ``nox -s lint``) fails.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from conformance import shipped
from conformance.kit import wire
from conformance.oracle import answers, environments

FOLDER = "recordings"


class RecordingHeader(BaseModel):
    """The first line of a recording: what its answers are answers of."""

    model_config = ConfigDict(extra="forbid")
    harbor_version: str
    lock_hash: str
    python: str
    adapter: str
    protocol: int
    implementation: str  # the oracle's handshake, as JSON
    suite_version: str
    hypothesis: str  # the version the ci inputs were drawn with
    entries: int

    @property
    def identity(self) -> answers.Identity:
        return answers.Identity(self.harbor_version, self.lock_hash, self.python, self.adapter, self.protocol)


def folder() -> Path:
    return shipped.oracle_file(FOLDER)


def path(harbor_version: str) -> Path:
    return folder() / f"harbor-{harbor_version}.jsonl"


def inputs_folder() -> Path:
    """The shipped stored inputs, in the input store's layout."""
    return folder() / "inputs"


@dataclass(frozen=True)
class Recording:
    header: RecordingHeader
    answers: dict[bytes, str]  # by the answer cache's key

    def get(self, surface: str, input_wire: object) -> str | None:
        return self.answers.get(answers.key(self.header.identity.digest, surface, input_wire))


def read_header(file: Path) -> RecordingHeader | None:
    try:
        with file.open(encoding="utf-8") as lines:
            return RecordingHeader.model_validate_json(next(lines, "{}"))
    except (OSError, UnicodeDecodeError, ValidationError):
        return None


def stale(header: RecordingHeader) -> list[str]:
    """How a recording's oracle differs from the one a run would start now (nothing: it applies)."""
    found = []
    lock = environments.lock_path(header.harbor_version)
    lock_hash = environments.lock_digest(lock) if lock is not None else None
    if lock_hash != header.lock_hash:
        found.append(f"recorded with lock {header.harbor_version}/{header.lock_hash}, the suite's is {lock_hash}")
    if answers.adapter_digest() != header.adapter:
        found.append(f"recorded with adapter {header.adapter}, the oracle's code is now {answers.adapter_digest()}")
    if wire.WIRE_VERSION != header.protocol:
        found.append(f"recorded with protocol {header.protocol}, the suite speaks {wire.WIRE_VERSION}")
    return found


def applying(harbor_version: str) -> RecordingHeader | None:
    """The header of the shipped recording of ``harbor==VERSION`` when there is one and it applies: its first line
    alone, for a question that needs no answer."""
    file = path(harbor_version)
    header = read_header(file) if file.is_file() else None
    return None if header is None or stale(header) else header


@functools.cache
def load(harbor_version: str) -> Recording | None:
    """The shipped answers of ``harbor==VERSION`` when there are some and they apply (read once per process)."""
    header = applying(harbor_version)
    if header is None:
        return None
    file = path(harbor_version)
    found: dict[bytes, str] = {}
    try:
        with file.open(encoding="utf-8") as lines:
            next(lines)
            for line in lines:
                entry = json.loads(line)
                found[bytes.fromhex(entry["key"])] = entry["answer"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # damaged: the answer cache and harbor answer instead
    return Recording(header, found)


def write(file: Path, header: RecordingHeader, entries: Iterable[tuple[bytes, str, str]]) -> None:
    """A recording: the header, then each (key, surface, answer), in key order (a re-recording diffs cleanly)."""
    file.parent.mkdir(parents=True, exist_ok=True)
    rows = sorted(entries)
    text = header.model_copy(update={"entries": len(rows)}).model_dump_json() + "\n"
    text += "".join(json.dumps({"key": key.hex(), "surface": surface, "answer": answer}, separators=(",", ":"))
                    + "\n" for key, surface, answer in rows)
    file.write_text(text, encoding="utf-8")
