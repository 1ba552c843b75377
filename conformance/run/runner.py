"""Running cases: one input to the oracle and to the candidate, one outcome.

Each input's outcome (:class:`~conformance.core.outcomes.Outcome`) goes into a report line
(:class:`~conformance.report.model.CaseLine`), with every mismatch.

Both pytest and ``conformance certify`` go through :func:`run_case`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from conformance.connection.base import ConnectError, Connection
from conformance.connection.connectors import connect
from conformance.connection.protocol import Implementation
from conformance.connection.replies import Reply
from conformance.core import surfaces
from conformance.core.compare import NanPolicy, Result, compare
from conformance.core.outcomes import Outcome, outcome_of
from conformance.corpus.cases import LoadedCase
from conformance.kit import wire
from conformance.report.model import CaseLine, result_line

RECORDED = "recorded"  # the oracle spec that means: the corpus's recorded results, no live oracle



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
        return self.connection.spec.text if self.connection else RECORDED

    @property
    def implementation(self) -> Implementation:
        if self.connection is not None and self.connection.implementation is not None:
            return self.connection.implementation
        return Implementation(name=RECORDED, version="corpus", language="yaml", surfaces=sorted(surfaces.SURFACES))

    def for_surface(self, surface: surfaces.Surface) -> Connection | None:
        """The live connection answering ``surface``; None when results come from recordings."""
        if self.connection is None or surface.oracle is None:
            return self.connection
        if surface.oracle not in self._own:
            self._own[surface.oracle] = connect(surface.oracle)
        return self._own[surface.oracle]

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
) -> CaseLine:
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
) -> CaseLine:
    """One input to the oracle (or its recording) and to the candidate, compared."""
    return _run_chunk([Input(case_id, surface_name, value, recorded)], candidate, oracle, policy)[0]


def run_inputs(
    items: Iterable[Input], candidate: Connection, oracle: Oracle, policy: NanPolicy | None = None,
) -> Iterator[CaseLine]:
    """Each input's record, in order.

    To a candidate that declares ``batch``, consecutive inputs of a surface
    that batches go in one message each way (and their records come out
    together); to any other, one at a time, each record as soon as it is made.
    """
    batching = candidate.implementation is not None and candidate.implementation.batch
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
) -> Iterator[CaseLine]:
    inputs = (Input(i.case.id, i.case.surface, i.case.input, i.case.expect.result() if i.case.expect else None)
              for i in items)
    yield from run_inputs(inputs, candidate, oracle, policy)


def ask(connection: Connection, surface: str, inputs: list[Any]) -> list[Reply]:
    """The connection's replies to ``inputs`` (wire values): in one batch where it can, else one by one."""
    items = [(next(_SEQ), surface, value) for value in inputs]
    if not items:
        return []
    answers = connection.run_batch(items) if len(items) > 1 else [None]
    return [answer if answer is not None else connection.run(*item)
            for item, answer in zip(items, answers, strict=True)]


def _run_chunk(chunk: list[Input], candidate: Connection, oracle: Oracle, policy: NanPolicy | None) -> list[CaseLine]:
    """Inputs of one surface: the oracle's results, then the candidate's for those that have one, compared."""
    if not chunk:
        return []
    surface = surfaces.get(chunk[0].surface)
    policy = policy or surface.policy
    started = time.perf_counter()
    records = [CaseLine(id=item.id, surface=item.surface, outcome=Outcome.PASS) for item in chunk]
    if candidate.broken:  # recorded, not run: the oracle's answer would compare with nothing
        for record in records:
            record.outcome, record.detail = Outcome.BROKEN, f"not run: {candidate.broken}"
        return records
    encoded = [wire.encode(item.value) for item in chunk]

    expected: list[Result | None] = [item.recorded for item in chunk]
    try:
        live = oracle.for_surface(surface)
    except ConnectError as e:  # a surface's own oracle that cannot start is these inputs' error, not the run's end
        live, expected = None, [None] * len(chunk)
        for record in records:
            record.outcome, record.detail = Outcome.ERROR, f"oracle of {surface.name} ({surface.oracle}): {e}"
    else:
        if live is None:
            for record, result in zip(records, expected, strict=True):
                if result is None:
                    record.outcome, record.detail = Outcome.SKIP, "no recorded oracle result and no live oracle"
        else:
            for i, reply in enumerate(ask(live, surface.name, encoded)):
                result = reply.result(surface)
                if result is None:
                    records[i].outcome, records[i].detail = Outcome.ERROR, f"oracle {reply.kind}: {reply.detail}"
                elif (recorded := chunk[i].recorded) is None:
                    records[i].recording = "missing"
                else:
                    records[i].recording_mismatches = compare(recorded, result, policy, surface.unordered)
                    records[i].recording = "stale" if records[i].recording_mismatches else "agrees"
                expected[i] = result

    todo = [i for i, result in enumerate(expected) if result is not None and records[i].outcome is Outcome.PASS]
    for i, reply in zip(todo, ask(candidate, surface.name, [encoded[i] for i in todo]), strict=True):
        record = records[i]
        known = expected[i]
        assert known is not None  # only inputs with an oracle result are asked
        record.oracle = result_line(known)
        actual = reply.result(surface)
        if actual is None:
            record.outcome = outcome_of(reply.kind)
            record.detail, record.protocol_error = reply.detail, reply.error
        else:
            record.candidate = result_line(actual)
            record.mismatches = compare(known, actual, policy, surface.unordered)
            record.outcome = Outcome.FAIL if record.mismatches else Outcome.PASS
    each = (time.perf_counter() - started) / len(chunk)
    for record, value in zip(records, encoded, strict=True):
        record.seconds = each
        if record.outcome is not Outcome.PASS:
            record.input = value  # whoever reads the report sees what went in, without the corpus at hand
    return records
