"""Running cases: one input to the oracle and to the candidate, one outcome.

Outcomes:
    pass            the candidate's result conforms to the oracle's
    fail            it does not (the record lists every mismatch)
    error           the candidate answered ``errored`` (or the oracle could not answer)
    crash           the candidate process died (it is restarted for the next case)
    timeout         no reply in time (the process is killed and restarted)
    protocol-error  the reply was not a valid protocol message (``protocol_error`` names which rule it broke)
    broken          not run: the candidate had been declared broken (it never started, or kept failing)
    skip            the candidate declined the surface; counts against conformance
    xfail           a divergence listed, as it is, in the candidate's expectation file
    xpass           a case listed there that conforms: the entry is out of date (fails the run)

Both pytest and ``conformance certify`` go through :func:`run_case`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from conformance.connection.connect import ConnectError, Connection, Reply
from conformance.core import surfaces
from conformance.core.compare import Mismatch, NanPolicy, Result, compare
from conformance.corpus.cases import LoadedCase
from conformance.kit import wire

CONFORMING = frozenset({"pass", "xfail"})
OUTCOMES = ("pass", "fail", "error", "crash", "timeout", "protocol-error", "broken", "skip", "xfail", "xpass")
# The outcomes of a divergence: what an expectation file can list.
DIVERGING = frozenset({"fail", "error", "crash", "timeout", "protocol-error", "broken", "skip"})


@dataclass
class CaseRecord:
    id: str
    surface: str
    outcome: str
    oracle: dict[str, Any] | None = None  # {"output": wire} | {"raised": name}
    candidate: dict[str, Any] | None = None
    mismatches: list[Mismatch] = field(default_factory=list)
    detail: str = ""
    protocol_error: str | None = None  # with protocol-error: its name (conformance.connection.replies.PROTOCOL_ERRORS)
    recording: str | None = None  # "agrees" | "stale" | "missing" when a live oracle ran
    recording_mismatches: list[Mismatch] = field(default_factory=list)
    seconds: float = 0.0
    origin: str = "case"  # "case" (from the corpus) | "generated" (a shrunk generator finding)
    input: Any = None  # kept for generated findings, so the report can be promoted to a case
    expected_divergence: dict[str, Any] | None = None  # with xfail: the expectation entry it matched

    @property
    def conforms(self) -> bool:
        return self.outcome in CONFORMING

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": "case", "id": self.id, "surface": self.surface, "outcome": self.outcome}
        if self.origin != "case":
            data["origin"] = self.origin
            data["input"] = wire.encode(self.input)
        for name in ("oracle", "candidate", "protocol_error", "recording", "expected_divergence"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.mismatches:
            data["mismatches"] = [m.to_json() for m in self.mismatches]
        if self.recording_mismatches:
            data["recording_mismatches"] = [m.to_json() for m in self.recording_mismatches]
        if self.detail:
            data["detail"] = self.detail
        data["seconds"] = round(self.seconds, 6)
        return data


def result_json(result: Result) -> dict[str, Any]:
    if result.raised is not None:
        return {"raised": result.raised} | ({"reason_code": result.reason_code} if result.reason_code else {})
    return {"output": result.wire_form()}


def as_result(reply: Reply, surface: surfaces.Surface) -> Result | None:
    """The reply as a result to compare; None when it is not one (errored, skipped, lost)."""
    if reply.kind == "output":
        return Result.of_value(reply.value, reply.encoded)
    if reply.kind == "raised":
        return Result.of_raised(reply.value, surface.read_message(reply.detail))
    return None


class Oracle:
    """The oracle's side: a live connection, or the corpus's recordings.

    A surface that names its own oracle (``Surface.oracle``, e.g. one another
    package adds) is answered by that implementation, connected on first use.
    """

    def __init__(self, connection: Connection | None) -> None:
        self.connection = connection
        self._own: dict[str, Connection] = {}

    @property
    def spec(self) -> str:
        return self.connection.spec if self.connection else "recorded"

    @property
    def implementation(self) -> dict[str, Any]:
        if self.connection:
            return self.connection.implementation
        return {"name": "recorded", "version": "corpus", "language": "yaml", "surfaces": sorted(surfaces.SURFACES)}

    def for_surface(self, surface: surfaces.Surface) -> Connection | None:
        """The live connection answering ``surface``; None when results come from recordings."""
        if self.connection is None or surface.oracle is None:
            return self.connection
        if surface.oracle not in self._own:
            from conformance.connection.connect import connect

            self._own[surface.oracle] = connect(surface.oracle)
        return self._own[surface.oracle]

    def close(self) -> None:
        for connection in [*self._own.values(), *([self.connection] if self.connection else [])]:
            connection.close()
        self._own.clear()


# Sequence numbers only need to be unique per connection; one counter serves all.
_SEQ = itertools.count(1)


def run_case(
    item: LoadedCase,
    candidate: Connection,
    oracle: Oracle,
    policy: NanPolicy | None = None,
) -> CaseRecord:
    return next(run_cases([item], candidate, oracle, policy))


@dataclass
class Input:
    """One input to run: its id (a case id), surface, value, and recorded oracle result if any."""

    id: str
    surface: str
    value: Any
    recorded: Result | None = None


def run_input(
    case_id: str,
    surface_name: str,
    value: Any,
    candidate: Connection,
    oracle: Oracle,
    policy: NanPolicy | None = None,
    *,
    recorded: Result | None = None,
) -> CaseRecord:
    """One input to the oracle (or its recording) and to the candidate, compared."""
    return _run_chunk([Input(case_id, surface_name, value, recorded)], candidate, oracle, policy)[0]


def run_inputs(
    items: Iterable[Input], candidate: Connection, oracle: Oracle, policy: NanPolicy | None = None,
) -> Iterator[CaseRecord]:
    """Each input's record, in order.

    To a candidate that declares ``batch``, consecutive inputs of a surface
    that batches go in one message each way (and their records come out
    together); to any other, one at a time, each record as soon as it is made.
    """
    batching = bool(candidate.implementation.get("batch"))
    chunk: list[Input] = []
    for item in items:
        surface = surfaces.get(item.surface)
        if not batching:
            yield from _run_chunk([item], candidate, oracle, policy)
            continue
        if chunk and (item.surface != chunk[0].surface or len(chunk) >= surface.batch_size):
            yield from _run_chunk(chunk, candidate, oracle, policy)
            chunk = []
        if not surface.batchable(item.value):
            yield from _run_chunk(chunk, candidate, oracle, policy)
            chunk = []
            yield from _run_chunk([item], candidate, oracle, policy)
            continue
        chunk.append(item)
    yield from _run_chunk(chunk, candidate, oracle, policy)


def run_cases(
    items: Iterable[LoadedCase],
    candidate: Connection,
    oracle: Oracle,
    policy: NanPolicy | None = None,
) -> Iterator[CaseRecord]:
    inputs = (Input(i.case.id, i.case.surface, i.case.input, i.case.expect.result() if i.case.expect else None)
              for i in items)
    yield from run_inputs(inputs, candidate, oracle, policy)


def _ask(connection: Connection, surface: str, inputs: list[Any]) -> list[Reply]:
    """The connection's replies to ``inputs`` (wire values): in one batch where it can, else one by one."""
    items = [(next(_SEQ), surface, value) for value in inputs]
    if not items:
        return []
    answers = connection.run_batch(items) if len(items) > 1 else [None]
    return [answer if answer is not None else connection.run(*item) for item, answer in zip(items, answers, strict=True)]


def _run_chunk(chunk: list[Input], candidate: Connection, oracle: Oracle, policy: NanPolicy | None) -> list[CaseRecord]:
    """Inputs of one surface: the oracle's results, then the candidate's for those that have one, compared."""
    if not chunk:
        return []
    surface = surfaces.get(chunk[0].surface)
    policy = policy or surface.policy
    started = time.perf_counter()
    records = [CaseRecord(item.id, item.surface, "pass") for item in chunk]
    if getattr(candidate, "broken", ""):  # recorded, not run: the oracle's answer would compare with nothing
        for record in records:
            record.outcome, record.detail = "broken", f"not run: {candidate.broken}"
        return records
    encoded = [wire.encode(item.value) for item in chunk]

    expected: list[Result | None] = [item.recorded for item in chunk]
    try:
        live = oracle.for_surface(surface)
    except ConnectError as e:  # a surface's own oracle that cannot start is these inputs' error, not the run's end
        live, expected = None, [None] * len(chunk)
        for record in records:
            record.outcome, record.detail = "error", f"oracle of {surface.name} ({surface.oracle}): {e}"
    else:
        if live is None:
            for record, result in zip(records, expected, strict=True):
                if result is None:
                    record.outcome, record.detail = "skip", "no recorded oracle result and no live oracle"
        else:
            for i, reply in enumerate(_ask(live, surface.name, encoded)):
                result = as_result(reply, surface)
                if result is None:
                    records[i].outcome, records[i].detail = "error", f"oracle {reply.kind}: {reply.detail}"
                elif chunk[i].recorded is None:
                    records[i].recording = "missing"
                else:
                    records[i].recording_mismatches = compare(chunk[i].recorded, result, policy, surface.unordered)
                    records[i].recording = "stale" if records[i].recording_mismatches else "agrees"
                expected[i] = result

    todo = [i for i, result in enumerate(expected) if result is not None and records[i].outcome == "pass"]
    for i, reply in zip(todo, _ask(candidate, surface.name, [encoded[i] for i in todo]), strict=True):
        record = records[i]
        record.oracle = result_json(expected[i])
        actual = as_result(reply, surface)
        if actual is None:
            record.outcome = {"errored": "error", "skipped": "skip"}.get(reply.kind, reply.kind)
            record.detail, record.protocol_error = reply.detail, reply.error
        else:
            record.candidate = result_json(actual)
            record.mismatches = compare(expected[i], actual, policy, surface.unordered)
            record.outcome = "fail" if record.mismatches else "pass"
    each = (time.perf_counter() - started) / len(chunk)
    for record in records:
        record.seconds = each
    return records
