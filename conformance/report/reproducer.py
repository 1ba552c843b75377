"""Reproducers: one case of a report as the lines its candidate was sent, and what a reply is judged against.

``conformance repro`` writes, for each case of a report that does not conform
(or each one asked for by id), two files into one folder:

    NAME.jsonl   the protocol lines the harness sent: ``start``, the ``run`` request
                 (a one-item ``batch`` to a candidate whose handshake declared ``batch``,
                 for an input its surface batches) and ``stop``, as the harness encodes them
    NAME.json    a :class:`Reproducer`: the case, the oracle's answer and the candidate's
                 recorded reply, the NaN policy, the candidate, and how to run it

``NAME`` is made from the case id, which is a candidate's text like anything
a report holds: only letters, digits, ``.``, ``_`` and ``-`` are kept, never
a leading dot, so no name is a path outside the folder. ``conformance
check-reply`` (:mod:`conformance.report.reply_check`) judges a reply against
the sidecar with no oracle at all. The published JSON Schema of a sidecar is
``conformance/schemas/reproducer.json``.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from conformance.connection.connectors import REFERENCE, ExecConnector, parse
from conformance.connection.protocol import PROTOCOL_VERSION, Batch, BatchItem, Run, Start, Stop
from conformance.core import surfaces
from conformance.core.compare import NanPolicy
from conformance.core.outcomes import Outcome, ProtocolError
from conformance.errors import UsageError
from conformance.kit import wire
from conformance.report.commands import command
from conformance.report.model import CaseLine, Header, Party, ResultLine, result_text
from conformance.report.reader import ReportFile

REPRODUCER_VERSION = 1
SEQ = 1  # the seq of the request (and of its one batch item): the reply must echo it
NAME_LIMIT = 100  # characters of a file name made from a case id, before its suffix
PLACEHOLDER = "./my-runner"  # stands for the candidate where its spec names no program
REFERENCE_PROGRAM = ["python3", "-m", "conformance.reference"]  # the built-in reference, served over stdin/stdout
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

Lookup = Callable[[str], Any]  # a case's input (decoded) by id, from the corpus; None when it has none


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Answer(_Model):
    """An answer as the report keeps it: its result (an output as a wire value, or an exception) and as Python
    would show it."""

    result: ResultLine | None = Field(description="`output` (a wire value) or `raised`; null: there was none.")
    text: str = Field(description="The result as Python would show it.")


class RecordedReply(Answer):
    """The candidate's reply in the run: its result, or (none) what became of the request."""

    outcome: Outcome = Field(description="The case's outcome in the report.")
    detail: str = Field(default="", description="What the report says of it: an error, a skip reason, a stderr tail.")
    protocol_error: ProtocolError | None = None


class HowToRun(_Model):
    program: list[str] | None = Field(description=(
        "The candidate as a program (its argv), from its spec; null when the spec names none (a candidate run in "
        f"process): `run` then says {PLACEHOLDER}."))
    note: str | None = Field(default=None, description="What to put in the program's place, when it is unknown.")
    run: str = Field(description="The shell command that pipes the requests into the candidate, its stdout to `reply`.")
    check: str = Field(description="The command that judges the reply against the oracle's answer.")


class Reproducer(_Model):
    """A sidecar: everything ``check-reply`` needs to judge a reply to the requests beside it."""

    reproducer_version: int = REPRODUCER_VERSION
    id: str = Field(description="The case id, as the report has it.")
    surface: str
    outcome: Outcome = Field(description="The case's outcome in the report.")
    origin: Literal["case", "generated"] = "case"
    requests: str = Field(description="The file of protocol lines beside this one.")
    reply: str = Field(description="Where `how.run` writes the candidate's stdout.")
    request: Literal["run", "batch"] = Field(description="How the input is sent: a run request, or a one-item batch.")
    seq: int = Field(description="The seq the reply (or the batch reply and its one item) must echo.")
    oracle: Answer
    candidate_reply: RecordedReply
    nan_policy: str = Field(description="The NaN policy the comparison used for this case.")
    suite_version: str
    candidate: Party = Field(description="The candidate's spec and its handshake in the run.")
    how: HowToRun


def schema() -> dict[str, Any]:
    """The JSON Schema of a reproducer's sidecar."""
    out = Reproducer.model_json_schema()
    out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    out["title"] = f"harbor-conformance reproducer {REPRODUCER_VERSION}"
    out["description"] = ("The sidecar `conformance repro` writes beside a case's protocol lines; `conformance "
                          "check-reply` judges a candidate's reply by it.")
    return out


def file_name(case_id: str) -> str:
    """A file-system-safe name made from a case id: no separator, no leading dot or dash, bounded."""
    name = _UNSAFE.sub("_", case_id).strip("._-")[:NAME_LIMIT].rstrip("._-")
    return name or "case"


class Names:
    """Unique names within one folder, as a case-insensitive file system tells them apart; each one reserves the
    names of its three files."""

    SUFFIXES = (".jsonl", ".json", ".reply.jsonl")

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def __call__(self, case_id: str) -> str:
        base, n = file_name(case_id), 1
        name = base
        while any((name + suffix).lower() in self.taken for suffix in self.SUFFIXES):
            n += 1
            name = f"{base}-{n}"
        self.taken.update((name + suffix).lower() for suffix in self.SUFFIXES)
        return name


def nan_policy(header: Header, surface: str) -> str:
    """The NaN policy a case of ``surface`` was compared by: the run's one (``--nan-policy``), else the surface's
    own, as the header lists them (``surface=policy, ...``)."""
    named = header.policy_named(surface)
    if named is not None:
        return named
    known = surfaces.SURFACES.get(surface) if surface in surfaces.SURFACES else None
    return (known.policy if known is not None else NanPolicy.ANY).name


def _program(spec_text: str) -> tuple[list[str] | None, str | None]:
    """The candidate as a program, from its spec; or None and what to put in its place."""
    try:
        spec = parse(spec_text)
        if spec.kind == ExecConnector.kind:
            return shlex.split(spec.target), None
    except (UsageError, ValueError):  # a spec this machine does not know, a command shlex cannot split
        return None, f"the spec {spec_text!r} names no program here: put your candidate's command for {PLACEHOLDER}"
    if spec == REFERENCE:
        return list(REFERENCE_PROGRAM), None
    return None, (f"the candidate {spec_text!r} ran in process: put a program serving it over stdin and stdout "
                  f"(a kit Candidate's serve()) for {PLACEHOLDER}")


def _batched(header: Header, line: CaseLine, value: Any) -> bool:
    """Whether the harness sent this input in a ``batch``: the candidate declared it and the surface batches it."""
    declared = header.candidate.implementation
    if declared is None or not declared.batch or line.surface not in surfaces.SURFACES:
        return False
    return surfaces.get(line.surface).batchable(value)


def requests(surface: str, encoded: Any, batch: bool) -> list[bytes]:
    """The lines the candidate is sent, as the harness encodes them: start, the request, stop."""
    request: Run | Batch
    if batch:
        request = Batch(cmd="batch", seq=SEQ, items=[BatchItem(seq=SEQ, surface=surface, input=encoded)])
    else:
        request = Run(cmd="run", seq=SEQ, surface=surface, input=encoded)
    messages = [Start(cmd="start", protocol=PROTOCOL_VERSION), request, Stop(cmd="stop")]
    return [wire.dump_line(message.model_dump()) for message in messages]


@dataclass(frozen=True)
class Written:
    """One reproducer written: its files, and what the sidecar says."""

    requests: Path
    sidecar: Path
    reproducer: Reproducer


def _recorded_reply(line: CaseLine) -> RecordedReply:
    text = result_text(line.candidate) if line.candidate is not None else f"(no result: {line.outcome})"
    return RecordedReply(result=line.candidate, text=text, outcome=line.outcome, detail=line.detail,
                         protocol_error=line.protocol_error)


def reproducer(header: Header, line: CaseLine, folder: Path, name: str, batch: bool) -> Reproducer:
    """The sidecar of ``line``, whose files are ``folder/name.*``."""
    sent, reply, sidecar = (folder / f"{name}{suffix}" for suffix in (".jsonl", ".reply.jsonl", ".json"))
    program, note = _program(header.candidate.spec)
    run = f"{shlex.join(program) if program else PLACEHOLDER} < {shlex.quote(str(sent))} > {shlex.quote(str(reply))}"
    return Reproducer(
        id=line.id, surface=line.surface, outcome=line.outcome, origin=line.origin, requests=sent.name,
        reply=reply.name, request="batch" if batch else "run", seq=SEQ,
        oracle=Answer(result=line.oracle, text=result_text(line.oracle)), candidate_reply=_recorded_reply(line),
        nan_policy=nan_policy(header, line.surface), suite_version=header.suite_version, candidate=header.candidate,
        how=HowToRun(program=program, note=note, run=run, check=command("check-reply", str(sidecar), str(reply))))


def selected(report: Path, ids: Sequence[str]) -> tuple[Header, list[CaseLine]]:
    """The report's header, and its lines that do not conform (or those of ``ids``, in their order); a UsageError
    naming each id the report does not hold."""
    header: Header | None = None
    wanted = dict.fromkeys(ids)
    found: dict[str, CaseLine] = {}
    failing: list[CaseLine] = []
    for line in ReportFile(report).lines():
        if isinstance(line, Header):
            header = line
        elif isinstance(line, CaseLine):
            if wanted and line.id in wanted:
                found.setdefault(line.id, line)
            elif not wanted and not line.conforms:
                failing.append(line)
    if header is None:
        raise UsageError(f"{report}: an empty report (no header line)")
    missing = [case_id for case_id in wanted if case_id not in found]
    if missing:
        raise UsageError(f"{report}: no case {', '.join(map(repr, missing))} in the report",
                         [f"{report}: the report holds no case {case_id!r}" for case_id in missing])
    return header, [found[case_id] for case_id in wanted] if wanted else failing


def _write(path: Path, data: bytes) -> None:
    """``data`` into a new file at ``path``: one there before is removed first, so a link planted there is
    replaced, not followed."""
    try:
        path.unlink(missing_ok=True)
        with path.open("xb") as handle:
            handle.write(data)
    except OSError as e:
        raise UsageError(f"{path}: cannot write: {e.strerror or e}") from None


def write(report: Path, folder: Path, ids: Sequence[str] = (), lookup: Lookup | None = None) -> list[Written]:
    """Each selected case's reproducer written into ``folder`` (made if need be).

    A line keeps its input when it did not conform; one that conformed (asked for by id) is looked up in the
    corpus (``lookup``).
    """
    header, lines = selected(report, ids)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{folder}: cannot make the folder: {e.strerror or e}") from None
    inside, names, written = folder.resolve(), Names(), []
    for line in lines:
        encoded = line.input if line.input is not None else _looked_up(line.id, lookup)
        if encoded is None:
            raise UsageError(f"{report}: case {line.id!r}: neither the report nor the corpus holds its input")
        batch = _batched(header, line, wire.decode(encoded))
        name = names(line.id)
        sent, sidecar = folder / f"{name}.jsonl", folder / f"{name}.json"
        assert all(path.resolve().parent == inside for path in (sent, sidecar)), name  # a name is never a path
        made = reproducer(header, line, folder, name, batch)
        _write(sent, b"".join(requests(line.surface, encoded, batch)))
        _write(sidecar, (json.dumps(made.model_dump(mode="json"), indent=2) + "\n").encode())
        written.append(Written(sent, sidecar, made))
    return written


def _looked_up(case_id: str, lookup: Lookup | None) -> Any:
    value = lookup(case_id) if lookup is not None else None
    return wire.encode(value) if value is not None else None


def commands(written: Iterable[Written]) -> list[str]:
    """How to run each reproducer: the pipe into the candidate, then the check of its reply."""
    return [text for item in written for text in (item.reproducer.how.run, item.reproducer.how.check)]
