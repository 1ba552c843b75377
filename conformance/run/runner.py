"""Running cases: one input to the oracle and to the candidate, one outcome.

Each input's outcome (:class:`~conformance.core.outcomes.Outcome`) goes into a report line
(:class:`~conformance.report.model.CaseLine`), with every mismatch.

Both pytest and ``conformance certify`` go through :func:`run_case`.

The oracle and the candidate are asked at once: the oracle from a thread of
its own (:mod:`conformance.run.lanes`) while the candidate answers the same
inputs. A candidate process also gets a thread of its own, and then the
runner works one batch ahead: it encodes the next batch while the candidate
answers this one, and compares and records this one while the candidate
answers the next. Inputs that each run a whole job go to several oracle
processes at once where the oracle is a pool of them
(:class:`~conformance.connection.pool.Pool`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, wait
from dataclasses import dataclass
from typing import Any, TypeVar

from conformance.connection.base import ConnectError, Connection, Settings
from conformance.connection.connectors import connect_with, parse
from conformance.connection.protocol import Implementation
from conformance.connection.replies import Reply
from conformance.core import surfaces
from conformance.core.compare import NanPolicy, Result, compare
from conformance.core.outcomes import Outcome, ReplyKind, outcome_of
from conformance.corpus.cases import LoadedCase
from conformance.kit import wire
from conformance.kit.candidate import cores
from conformance.report.model import CaseLine, result_line
from conformance.run import lanes

T = TypeVar("T")
WAIT_STEP = 0.1  # seconds: how long the runner waits on a lane before it looks at signals again
RECORDED = "recorded"  # the oracle spec that means: the corpus's recorded results, no live oracle



class Oracle:
    """The oracle's side: a live connection, or the corpus's recordings.

    A surface that names its own oracle (``Surface.oracle``, e.g. one another
    package adds) is answered by that implementation, connected on first use
    with ``settings``.
    """

    def __init__(self, connection: Connection | None, settings: Settings | None = None) -> None:
        self.connection = connection
        self.settings = settings if settings is not None else Settings()
        self._own: dict[str, Connection] = {}

    @property
    def spec(self) -> str:
        return self.connection.spec.text if self.connection else RECORDED

    @property
    def implementation(self) -> Implementation:
        if self.connection is not None and self.connection.implementation is not None:
            return self.connection.implementation
        return Implementation(name=RECORDED, version="corpus", language="yaml", surfaces=sorted(surfaces.SURFACES))

    def width(self, surface: surfaces.Surface) -> int:
        """How many inputs of ``surface`` the oracle takes at once, one request each (a pool's processes)."""
        try:
            live = self.for_surface(surface)
        except ConnectError:
            return 1
        return live.capabilities.width if live is not None else 1

    def for_surface(self, surface: surfaces.Surface) -> Connection | None:
        """The live connection answering ``surface``; None when results come from recordings."""
        if self.connection is None or surface.oracle is None:
            return self.connection
        if surface.oracle not in self._own:
            # the declaration names it; parsed here, on first use, as a declaration's names are loaded
            self._own[surface.oracle] = connect_with(parse(surface.oracle), self.settings)
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
    items: Iterable[Input], candidate: Connection, oracle: Oracle, policy: NanPolicy | None = None, *,
    arriving: bool = False,
) -> Generator[CaseLine, None, None]:
    """Each input's record, in order.

    To a candidate that declares ``batch``, consecutive inputs of a surface
    that batches go in one message each way (and their records come out
    together); to any other, one at a time. Consecutive inputs that each run
    a whole job go together to an oracle that takes several at once. Where
    the candidate or the oracle is a process (asked on a lane of its own),
    the records of a chunk come out once the next chunk is under way.

    ``arriving``: the items are made while they are asked (a generator round
    drawn ahead). Batches then start at FIRST_ARRIVING_BATCH inputs and
    double up to the surface's size: a whole first batch would wait for all
    its inputs to be drawn, and a round of one batch would draw everything
    before asking anything.
    """
    on_lane = candidate.capabilities.own_lane  # its replies come on its lane: the runner can work meanwhile
    pending: _Chunk | None = None  # asked for, its records not yet made
    own = lanes.Lanes()
    interrupted = False
    try:
        for inputs in _chunks(items, candidate, oracle, arriving):
            chunk = _Chunk(inputs, policy)
            if pending is not None:
                pending.candidate_answered()  # a breaker trips where the candidate's replies put it, not by timing
            chunk.ask(candidate, oracle, own, on_lane=on_lane)
            done, pending = pending, chunk
            if done is not None:
                yield from done.records_made()
            # Where neither side works on a lane of its own, the next chunk would gain nothing from being asked
            # before this one's records are made; where the oracle does, it answers the next while they are.
            if not (on_lane or chunk.oracle_on_lane):
                pending = None
                yield from chunk.records_made()
        if pending is not None:
            done, pending = pending, None
            yield from done.records_made()
    except KeyboardInterrupt:
        interrupted = True  # the connections are stopped under what is under way
        raise
    finally:
        if pending is not None:  # the caller stopped early: what is under way ends before the connections are reused
            pending.abandon(wait=not interrupted)
        own.close(wait=not interrupted)


# The first batch of inputs that arrive as they are drawn: small, so that the oracle starts on it while the next
# ones are drawn; each batch after is twice as large, up to the surface's batch size.
FIRST_ARRIVING_BATCH = 8


def _chunks(items: Iterable[Input], candidate: Connection, oracle: Oracle, arriving: bool = False,
            ) -> Iterator[list[Input]]:
    """Inputs as they are asked for: batches of a surface that batches (to a candidate that batches), runs of
    whole-job inputs as wide as the wider side takes at once, else one by one; batches of ``arriving`` inputs
    growing from FIRST_ARRIVING_BATCH."""
    batching = candidate.implementation is not None and candidate.implementation.batch
    candidate_width = candidate.capabilities.width
    limit = FIRST_ARRIVING_BATCH if arriving else None
    chunk: list[Input] = []
    chunk_batchable = False
    for item in items:
        surface = surfaces.get(item.surface)
        batchable = surface.batchable(item.value)
        if chunk and (item.surface != chunk[0].surface or batchable != chunk_batchable):
            yield chunk
            chunk = []
        chunk.append(item)
        chunk_batchable = batchable
        size = (surface.batch_size if batching else 1) if batchable else max(oracle.width(surface), candidate_width)
        if len(chunk) >= (size if limit is None else min(size, limit)):
            yield chunk
            chunk = []
            if limit is not None:
                limit *= 2
    if chunk:
        yield chunk


def run_cases(
    items: Iterable[LoadedCase],
    candidate: Connection,
    oracle: Oracle,
    policy: NanPolicy | None = None,
) -> Iterator[CaseLine]:
    inputs = (Input(i.case.id, i.case.surface, i.case.input, i.case.expect.result() if i.case.expect else None)
              for i in items)
    yield from run_inputs(inputs, candidate, oracle, policy)


def ask(connection: Connection, surface: str, inputs: list[Any], batch: bool = True,
        width: int | None = None) -> list[Reply]:
    """The connection's replies to ``inputs`` (wire values): in one batch where it can (and ``batch``); inputs
    that may not be batched one request each, as many at once as the connection takes (its width: a pool's
    processes, a concurrent in-process candidate's threads), or as ``width`` allows where that is fewer."""
    items = [(next(_SEQ), surface, value) for value in inputs]
    if not items:
        return []
    if not batch and len(items) > 1 and (at_once := min(connection.capabilities.width, width or len(items))) > 1:
        return [reply for start in range(0, len(items), at_once)
                for reply in connection.run_each(items[start:start + at_once])]
    answers = connection.run_batch(items) if batch and len(items) > 1 else [None] * len(items)
    return [answer if answer is not None else connection.run(*item)
            for item, answer in zip(items, answers, strict=True)]


def _run_chunk(chunk: list[Input], candidate: Connection, oracle: Oracle, policy: NanPolicy | None) -> list[CaseLine]:
    """Inputs of one surface asked for together, their records."""
    if not chunk:
        return []
    asked = _Chunk(chunk, policy)
    # Inputs that run whole jobs are long for both sides: the oracle is asked from a lane meanwhile. A cheap one
    # would spend more on a thread than it saves.
    own = lanes.Lanes() if not asked.batchable else None
    try:
        asked.ask(candidate, oracle, own, on_lane=False)
        return asked.records_made()
    finally:
        if own is not None:
            own.close()


def candidate_width(candidate: Connection, live: Connection | None) -> int:
    """How many whole jobs the candidate is asked at once beside the oracle ``live``: its width, but where the
    oracle works on this machine meanwhile (harbor's processes), only as many as the cores it leaves. A harbor
    job is one thread: the cores the candidate takes from it while both work it never gets back, so asking the
    candidate wider there would make the run slower, not faster."""
    width = candidate.capabilities.width
    if width > 1 and live is not None and live.working:
        width = min(width, max(1, cores() - live.capabilities.width))
    return width


def _wait(future: Future[T]) -> Future[T]:
    """``future`` once done. Waited for in short steps: a signal (SIGTERM, Ctrl-C) the system hands to another
    thread is then still acted on in this one within a moment, not only once the request is over."""
    while not wait([future], timeout=WAIT_STEP).done:
        pass
    return future


class _Chunk:
    """Inputs of one surface asked for together: both sides asked at once, then compared into records."""

    def __init__(self, inputs: list[Input], policy: NanPolicy | None) -> None:
        self.inputs = inputs
        self.surface = surfaces.get(inputs[0].surface)
        self.policy = policy or self.surface.policy
        self.started = time.perf_counter()
        # An outcome decided before any reply (the candidate broken, no oracle result): the rest is compared.
        self.decided: list[tuple[Outcome, str] | None] = [None] * len(inputs)
        with wire.gc_paused:  # see gc_paused: a batch's inputs are many containers made at once
            self.encoded = [wire.encode(item.value) for item in inputs]
        self.batchable = self.surface.batchable(inputs[0].value)  # else each input is a request of its own
        self.expected: list[Result | None] = [item.recorded for item in inputs]
        self.oracle_replies: Future[list[Reply]] | None = None
        self.oracle_on_lane = False  # the oracle answers on a lane of its own: it works while the runner does
        self.asked: list[int] = []  # the inputs the candidate is asked for
        self.candidate_replies: Future[list[Reply]] | None = None
        self._again: Callable[[list[Any]], Future[list[Reply]]] | None = None  # asks the candidate once more

    def ask(self, candidate: Connection, oracle: Oracle, own: lanes.Lanes | None, *, on_lane: bool) -> None:
        """Send the inputs to the oracle (on its lane) and to the candidate (on its lane, or here); without
        ``own`` lanes, one after the other, here."""
        if candidate.broken:  # recorded, not run: the oracle's answer would compare with nothing
            self.decided = [(Outcome.BROKEN, f"not run: {candidate.broken}")] * len(self.inputs)
            return
        surface = self.surface
        try:
            live = oracle.for_surface(surface)
        except ConnectError as e:  # a surface's own oracle that cannot start is these inputs' error, not the run's end
            self.expected = [None] * len(self.inputs)
            self.decided = [(Outcome.ERROR, f"oracle of {surface.name} ({surface.oracle}): {e}")] * len(self.inputs)
            return
        if live is None:
            self.decided = [(Outcome.SKIP, "no recorded oracle result and no live oracle") if result is None else None
                            for result in self.expected]
            self.asked = [i for i, result in enumerate(self.expected) if result is not None]
        else:
            # Both at once: the candidate is asked every input, the oracle's failures found afterwards.
            if own is not None:
                self.oracle_on_lane = live.capabilities.own_lane
                self.oracle_replies = own.submit(live, ask, live, surface.name, self.encoded, self.batchable)
            else:
                self.oracle_replies = Future()
                self.oracle_replies.set_result(ask(live, surface.name, self.encoded, self.batchable))
            self.asked = list(range(len(self.inputs)))
        width = None if self.batchable else candidate_width(candidate, live)  # whole jobs only: each a request

        def asking(values: list[Any]) -> Future[list[Reply]]:
            if on_lane and own is not None:  # after whatever the lane was given before: one request at a time
                return own.submit(candidate, ask, candidate, surface.name, values, self.batchable, width)
            done: Future[list[Reply]] = Future()
            done.set_result(ask(candidate, surface.name, values, self.batchable, width))
            return done

        self.candidate_replies = asking([self.encoded[i] for i in self.asked])
        self._again = lambda values: _none_asked() if candidate.broken else asking(values)

    def candidate_answered(self) -> None:
        """Wait until the candidate has answered (or failed on) every input it was asked."""
        if self.candidate_replies is not None:
            _wait(self.candidate_replies)

    def abandon(self, wait: bool) -> None:
        """Nobody will read the replies: the requests not yet sent are dropped, those under way waited for (not
        on an interrupt: the connections are then stopped under them)."""
        for future in (self.oracle_replies, self.candidate_replies):
            if future is not None and not future.cancel() and wait:
                _wait(future)

    def records_made(self) -> list[CaseLine]:
        """The oracle's results, the candidate's compared with them: the records, in the inputs' order, each made
        once, whole.

        An input on which the candidate diverged by what it answered (a result that differs, an ``errored``
        reply) is asked once more; a second answer unlike the first makes the record ``flaky``, with both."""
        surface, decided = self.surface, self.decided
        found: list[dict[str, Any]] = [{} for _ in self.inputs]  # each record's fields, as the replies give them
        first: dict[int, Reply] = {}  # the inputs to ask again: the candidate's first answer to each
        with wire.gc_paused:
            if self.oracle_replies is not None:
                for i, reply in enumerate(_wait(self.oracle_replies).result()):
                    result = reply.result(surface)
                    if result is None:
                        decided[i] = Outcome.ERROR, f"oracle {reply.kind}: {reply.detail}"
                    elif (recorded := self.inputs[i].recorded) is None:
                        found[i]["recording"] = "missing"
                    else:
                        stale = compare(recorded, result, self.policy, surface.unordered)
                        found[i].update(recording_mismatches=stale, recording="stale" if stale else "agrees")
                    self.expected[i] = result
            answers = _wait(self.candidate_replies).result() if self.candidate_replies is not None else []
            for i, reply in zip(self.asked, answers, strict=True):
                known = self.expected[i]
                if known is None or decided[i] is not None:
                    continue  # the oracle has no result: that is the record, whatever the candidate said
                fields = found[i]
                fields["oracle"] = result_line(known)
                actual = reply.result(surface)
                if actual is None:
                    fields.update(outcome=outcome_of(reply.kind), detail=reply.detail, protocol_error=reply.error)
                else:
                    mismatches = compare(known, actual, self.policy, surface.unordered)
                    fields.update(candidate=result_line(actual), mismatches=mismatches,
                                  outcome=Outcome.FAIL if mismatches else Outcome.PASS)
                if fields["outcome"] in ASKED_AGAIN:
                    first[i] = reply
        if first and self._again is not None:
            self._asked_again(first, found)
        with wire.gc_paused:
            each = (time.perf_counter() - self.started) / len(self.inputs)
            records = []
            for item, value, fields, early in zip(self.inputs, self.encoded, found, decided, strict=True):
                if early is not None:
                    fields["outcome"], fields["detail"] = early
                outcome = fields.setdefault("outcome", Outcome.PASS)
                if outcome is not Outcome.PASS:
                    fields["input"] = value  # whoever reads the report sees what went in, without the corpus at hand
                records.append(CaseLine(id=item.id, surface=item.surface, seconds=each, **fields))
        return records

    def _asked_again(self, first: dict[int, Reply], found: list[dict[str, Any]]) -> None:
        """Ask the candidate the inputs of ``first`` once more; a second answer unlike the first is ``flaky``.

        Alike: the same kind of reply, and for a result, one the comparator finds no mismatch with (under the
        run's NaN policy, as it compares with the oracle's).
        """
        assert self._again is not None
        surface = self.surface
        indexes = sorted(first)
        second = _wait(self._again([self.encoded[i] for i in indexes])).result()
        for i, reply in zip(indexes, second, strict=False):  # none when the candidate had been given up on
            if reply.kind is ReplyKind.BROKEN:
                continue  # given up on meanwhile: not asked
            before, after = first[i].result(surface), reply.result(surface)
            if before is not None and after is not None:
                alike = not compare(before, after, self.policy, surface.unordered)
            else:
                alike = before is None and after is None and first[i].kind == reply.kind
            if alike:
                continue
            fields = found[i]
            fields["outcome"] = Outcome.FLAKY
            if after is not None:
                fields["candidate_again"] = result_line(after)
            else:
                told = f"asked again, it answered {reply.kind}" + (f": {reply.detail}" if reply.detail else "")
                fields["detail"] = "\n".join(part for part in (fields.get("detail", ""), told) if part)


# What the candidate answered (not how it failed to): an input with one of these outcomes is asked again. A crash
# or a timeout costs a restart (a timeout its whole time limit): not asked again.
ASKED_AGAIN = frozenset({Outcome.FAIL, Outcome.ERROR})


def _none_asked() -> Future[list[Reply]]:
    done: Future[list[Reply]] = Future()
    done.set_result([])
    return done
