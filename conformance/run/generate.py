"""Generated inputs: each surface's Hypothesis strategy run against the oracle and the candidate.

Every input goes through :func:`runner.run_input`, like a case. An input on
which the candidate does not conform raises a :class:`Divergence` whose type
encodes the outcome and the most severe mismatch class. Hypothesis tells failures
apart by exception type, so each kind of divergence is shrunk on its own and
a shrink step that changes the kind does not count as the same failure: the
minimal input keeps the mismatch class it was found with.

A kind may hold several bugs. Findings of one kind are told apart by the
shape of their inputs (:mod:`conformance.run.shapes`): later rounds take an
input whose shape covers a known finding's as that finding, so they shrink
toward other shapes, up to :data:`FINDINGS_PER_KIND` findings of a kind and
:data:`FINDINGS_PER_SURFACE` in all. Each finding is then rid of the duplicate
JSON keys the shrinker left in it (:mod:`conformance.run.simplify`).

Profiles fix the budget and the search:

    ci       a fixed seed and budget: the same run every time, a gate
    dev      the default: a fresh random seed each run (recorded, so it can be replayed)
    explore  a long run that steers toward large ULP distances with ``hypothesis.target`` (an input
             is scored when some value of the candidate's is off by ULPs)

A run is reproduced from the profile and seed in the report header alone,
and findings worth keeping are made into cases with ``conformance promote``.
A run given an example database (:mod:`conformance.run.examples`) also
saves its findings there and replays them first the next time, whoever
found them (a campaign's shard, a pytest run, another certify).

A round does not wait on each answer before the next draw: Hypothesis draws
in a thread of its own, taking every input as passing, and the inputs are
asked in batches (:mod:`conformance.run.ahead`); from the first input that
does not pass, the round runs live from its start, with the same inputs and
what was already asked, and shrinks as always.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
import threading
import warnings
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, closing
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from conformance.connection.base import Connection
from conformance.core import scope, surfaces
from conformance.core.compare import NanPolicy, most_severe
from conformance.core.features import Gate, minimums, present
from conformance.core.outcomes import Outcome
from conformance.errors import UsageError
from conformance.kit import wire
from conformance.report.model import CaseLine, GeneratedLine, Generation, RaisedResult
from conformance.run import shapes, simplify
from conformance.run.observations import recording
from conformance.run.observations import start as observed_to
from conformance.run.runner import ASKED_AGAIN, Input, Oracle, run_input, run_inputs
from conformance.run.stored_inputs import InputStore, hypothesis_version
from conformance.run.stored_inputs import key as stored_key

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase

    from conformance.run import ahead


@dataclass(frozen=True)
class Profile:
    name: str
    max_examples: int  # per surface
    fixed_seed: int | None  # None: a new random seed per run
    target_ulps: bool = False
    summary: str = ""
    # What a feature drawn less often than its minimum share does (conformance.core.features).
    feature_gate: Gate = Gate.WARN


# ci gates on the features its fixed seed reaches; dev's fresh seeds and small budget make a shortfall a note;
# explore (a campaign) steers its draws toward large ULP distances on purpose and is sized by time, so it warns too.
PROFILES = {
    p.name: p
    for p in (
        Profile("ci", 250, 0, summary="fixed seed and budget; suitable as a gate", feature_gate=Gate.FAIL),
        Profile("dev", 100, None, summary="a fresh seed each run"),
        Profile("explore", 5000, None, target_ulps=True, summary="long runs steered toward large ULP distances"),
    )
}
DEFAULT_PROFILE = "dev"


def surface_budget(profile: Profile, surface_name: str, max_examples: int | None = None) -> int:
    """A surface's generated inputs: ``max_examples`` when given, else the profile's budget times the
    surface's ``examples_scale``."""
    if max_examples is not None:
        return max_examples
    return profile.max_examples * surfaces.get(surface_name).examples_scale


def feature_gate(profile_name: str, surface_name: str, budget: int, *, cut_short: bool = False) -> Gate:
    """What a feature shortfall does to a generator run of ``budget`` inputs: its profile's gate, when the run
    drew at least its profile's budget for the surface; a smaller sample (``--max-examples``, one shard of a run,
    a campaign's task) only warns, and a merge of such runs is judged again on their sum.

    ``cut_short``: the run made findings and drew fewer than its budget (their shrinking used its work, see
    WORK_PER_EXAMPLE): a smaller sample too, so it only warns. Such a run's verdict is its findings; when an
    expectation file lists them all (an upgrade gate, a runner's known divergences), the shortfall is still said.
    """
    profile = PROFILES.get(profile_name)
    if (cut_short or profile is None or surface_name not in surfaces.SURFACES
            or budget < surface_budget(profile, surface_name)):
        return Gate.WARN
    return profile.feature_gate


def describe(profile: Profile, seed: int, max_examples: int | None) -> Generation:
    """The report header's account of a generation run: enough to repeat it."""
    return Generation(profile=profile.name, seed=seed,
                      max_examples=max_examples if max_examples is not None else profile.max_examples,
                      target_ulps=profile.target_ulps, hypothesis=hypothesis_version())


# How many findings a generator keeps: of one kind (shapes apart), and on one surface.
FINDINGS_PER_KIND = 3
FINDINGS_PER_SURFACE = 10
# No round starts once this many inputs per example of the budget have run (shrinking and re-runs included):
# each finding's shrinking costs calls the budget does not count, and a candidate with many bugs has many.
WORK_PER_EXAMPLE = 4
# Outcomes that end the candidate's process (each costs a restart, a timeout its whole time limit), and answers that
# change from one asking to the next (no smaller input would say more): one each.
ONE_PER_KIND = frozenset({Outcome.CRASH, Outcome.TIMEOUT, Outcome.PROTOCOL_ERROR, Outcome.FLAKY})


def new_seed() -> int:
    return random.SystemRandom().randrange(2**32)


def finding_id(surface: str, value: Any) -> str:
    """A stable id for a generated input: the same input always gets the same id."""
    digest = hashlib.sha256(json.dumps(wire.encode(value), separators=(",", ":")).encode()).hexdigest()
    return f"{surface}::gen-{digest[:12]}"


class Divergence(Exception):
    """The candidate did not conform on a generated input; subclassed per kind."""

    kind: tuple[str, ...] = ()


_KINDS: dict[tuple[str, ...], type[Divergence]] = {}


def kind_of(record: CaseLine) -> tuple[str, ...]:
    """The outcome, and for a ``fail`` its most severe mismatch class.

    One bug shows several classes at once (a key missing and another one
    extra): keying on all of them would report each combination as a finding.
    """
    main = most_severe(record.mismatches)
    return (record.outcome,) if main is None else (record.outcome, main.value)


def kind_limit(kind: tuple[str, ...]) -> int:
    """How many findings of ``kind`` a generator keeps."""
    return 1 if kind[0] in ONE_PER_KIND else FINDINGS_PER_KIND


def divergence_type(kind: tuple[str, ...]) -> type[Divergence]:
    if kind not in _KINDS:
        _KINDS[kind] = type(f"Divergence[{'/'.join(kind)}]", (Divergence,), {"kind": kind})
    return _KINDS[kind]


# Hypothesis mines the literals of every local module in sys.modules (its "local constants") and mixes them into
# its draws; an in-process candidate's own module (or which commands of this package ran) would then change the
# inputs a seed produces, and the same seed must give every candidate the same inputs. No setting turns the
# mining off, so the private function that does it is replaced, once per process, by one that finds nothing;
# every Hypothesis run of the process then draws only Hypothesis's own constants. Written against Hypothesis
# 6.131 to 6.170 (providers._get_local_constants, providers.Constants, providers.CONSTANTS_CACHE);
# tests/test_process_state.py fails when they change. A Hypothesis without the mining needs nothing.
_LOCAL_CONSTANTS_LOCK = threading.Lock()
_local_constants_off = False


def _no_local_constants() -> Any:
    from hypothesis.internal.conjecture import providers

    return providers.Constants()  # type: ignore[attr-defined]  # imported there, not re-exported


def inputs_independent_of_imports() -> None:
    """Keep Hypothesis from mixing literals of locally imported modules into its draws (idempotent, thread-safe)."""
    global _local_constants_off
    with _LOCAL_CONSTANTS_LOCK:  # once a round: a lock costs nothing beside it
        if _local_constants_off:
            return
        from hypothesis.internal.conjecture import providers

        if hasattr(providers, "_get_local_constants") and hasattr(providers, "Constants"):
            providers._get_local_constants = _no_local_constants
            providers.CONSTANTS_CACHE.cache.clear()  # constants of a run before: computed with the local ones
        _local_constants_off = True


def quiet_warnings() -> None:
    """Hypothesis's warnings that say nothing of the strategies, not for the console: the shrinker describing a
    strategy it cannot re-encode a value for, at any length; and the global random state changed during a draw,
    which no strategy does, but another thread does while a round draws ahead (an in-process candidate, a Dask
    worker's own threads).

    The filters are added (idempotent: warnings keeps one copy) before each round and never taken away: a
    warnings.catch_warnings() per round would save and restore the process's filters under another thread's feet.
    """
    from hypothesis.errors import HypothesisDeprecationWarning, HypothesisWarning

    warnings.filterwarnings("ignore", "Generating overly large repr", HypothesisWarning)
    warnings.filterwarnings("ignore", "Do not use the `random` module inside strategies", HypothesisDeprecationWarning)


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


class Taken(Exception):
    """An input drawn ahead did not pass as it was taken to: it set a ``target`` score."""


class CandidateBroken(Exception):
    """The candidate was declared broken while generating: the generator stops."""


@dataclass
class GenerationResult:
    surface: str
    profile: str
    seed: int
    max_examples: int
    inputs_run: int = 0  # every call, shrinking included
    findings: list[CaseLine] = field(default_factory=list)
    skipped: int = 0  # inputs the candidate declined: a skip, never a divergence to shrink or promote
    skip_reason: str | None = None
    rejected: int = 0  # inputs the oracle turned away before any scoring (the surface's declared rejections)
    error: str | None = None  # the generator itself failed (a flaky candidate, a harness bug)
    drawn: int = 0  # inputs the features are counted over: each round's up to its first new finding
    features: Counter[str] = field(default_factory=Counter)  # drawn inputs with each of the surface's features
    replayed: int = 0  # inputs sent from the stored inputs (conformance.run.stored_inputs), not drawn
    unanswered: int = 0  # inputs the oracle gave no answer to: left out, neither passing nor a finding
    unanswered_reason: str | None = None

    def answered(self, record: CaseLine) -> None:
        """One more input run (``record`` its line): counted, and whether the oracle rejected it."""
        self.inputs_run += 1
        oracle = record.oracle
        if isinstance(oracle, RaisedResult) and surfaces.get(self.surface).rejected(oracle.raised):
            self.rejected += 1

    def counts(self) -> GenerationResult:
        """A copy of the counts, for :meth:`restore`."""
        return replace(self, features=Counter(self.features))

    def restore(self, counts: GenerationResult) -> None:
        """The counts as they were in ``counts``: a round run again live counts its inputs again."""
        for each in fields(self):
            setattr(self, each.name, getattr(counts, each.name))

    @property
    def conforms(self) -> bool:
        return not self.findings and not self.skipped and self.error is None

    def line(self) -> GeneratedLine:
        """The report's account of this generator."""
        declared = surfaces.get(self.surface).features
        cut_short = bool(self.findings) and self.drawn < self.max_examples
        return GeneratedLine(surface=self.surface, profile=self.profile, seed=self.seed,
                             max_examples=self.max_examples, inputs_run=self.inputs_run,
                             divergences=[r.id for r in self.findings], skipped=self.skipped,
                             skip_reason=self.skip_reason, rejected=self.rejected, error=self.error, drawn=self.drawn,
                             features={f.name: self.features[f.name] for f in declared}, replayed=self.replayed,
                             unanswered=self.unanswered, unanswered_reason=self.unanswered_reason,
                             feature_minimums=minimums(declared, self.profile),
                             feature_gate=feature_gate(self.profile, self.surface, self.max_examples,
                                                       cut_short=cut_short))


def generate(
    surface_name: str,
    candidate: Connection,
    oracle: Oracle,
    *,
    profile: Profile,
    seed: int,
    max_examples: int | None = None,
    policy: NanPolicy | None = None,
    on_input: Callable[[str], None] = lambda surface: None,
    first_only: bool = False,
    database: ExampleDatabase | None = None,
    observations: Path | None = None,
    stored: InputStore | None = None,
) -> GenerationResult:
    """Run one surface's generator; the shrunk findings are in the result, by kind and, within one, by shape.

    Hypothesis stops generating soon after its first failure, so one run would
    spend little of the budget when a bug shows early. The budget is spent in
    rounds instead: each round treats the findings already made as passing
    (an input of a kind that has all its findings, or whose shape covers one
    of its kind's findings), so a later round looks for other bugs. A finding
    whose shape covers a later, smaller one's is dropped for it (the smaller
    input explains it), but still counts toward the limits. Rounds end when
    one finds nothing new, when :data:`FINDINGS_PER_SURFACE` findings have
    been made, when the examples drawn before each round's first failure
    use up the budget, or when :data:`WORK_PER_EXAMPLE` times the budget of
    inputs have run.

    ``first_only``: stop at the first divergence, unshrunk (whether a candidate can be told apart, not how).
    ``database``: findings are saved there, and the first round replays what it holds for the surface first.
    ``observations``: a folder where Hypothesis's observations of the surface's inputs are written (Tyche's
    format, each input's features among them: :mod:`conformance.run.observations`).
    ``stored``: where the inputs of a run that makes no finding are kept, and replayed from by the next run with
    the same key (:mod:`conformance.run.stored_inputs`); only given for a seed that will come again. A run that
    replays an example database, writes observations or steers with ``target`` draws as it always does.
    """
    with ExitStack() as stack:
        observed = stack.enter_context(observed_to(observations, surface_name)) if observations else None
        if database is not None or observed is not None or profile.target_ulps:
            stored = None
        return _generate(surface_name, candidate, oracle, profile=profile, seed=seed, max_examples=max_examples,
                         policy=policy, on_input=on_input, first_only=first_only, database=database,
                         observed=observed, stored=stored)


def _generate(
    surface_name: str, candidate: Connection, oracle: Oracle, *, profile: Profile, seed: int,
    max_examples: int | None, policy: NanPolicy | None, on_input: Callable[[str], None], first_only: bool,
    database: ExampleDatabase | None, observed: IO[str] | None, stored: InputStore | None,
) -> GenerationResult:
    if oracle.connection is None:
        raise UsageError("generated inputs need a live oracle")
    budget = surface_budget(profile, surface_name, max_examples)
    result = GenerationResult(surface_name, profile.name, seed, budget)
    drawn_values: list[Any] | None = None
    sequence: list[Any] | None = None  # inputs stored by an earlier run with the same key, sent without drawing
    if stored is not None:
        claimed = candidate.implementation.scope if candidate.implementation is not None else None
        sequence_key = stored_key(surface_name, profile=profile.name, seed=seed, budget=budget,
                                  claimed=(claimed or {}).get(surface_name))
        sequence = stored.get(sequence_key)
        if sequence is None:
            drawn_values = []
    found: dict[tuple[str, ...], list[tuple[shapes.Shape, CaseLine]]] = {}
    made: dict[tuple[str, ...], int] = {}  # findings made of each kind, dropped ones included

    def keep(kind: tuple[str, ...], shape: shapes.Shape, record: CaseLine) -> None:
        kept = [(other, earlier) for other, earlier in found.get(kind, []) if not shapes.covers(other, shape)]
        found[kind] = [*kept, (shape, record)]
        made[kind] = made.get(kind, 0) + 1

    if database is not None:
        for kind, shape, record in _replayed(surface_name, candidate, oracle, policy, database, result, on_input):
            limited = sum(made.values()) >= FINDINGS_PER_SURFACE or made.get(kind, 0) >= kind_limit(kind)
            if not limited and not any(shapes.covers(shape, seen) for seen, _ in found.get(kind, [])):
                keep(kind, shape, record)
        if first_only and found:
            result.findings = [found[min(found)][0][1]]
            return result
    used, round_number = 0, 0
    while (used < budget and result.error is None and sum(made.values()) < FINDINGS_PER_SURFACE
           and result.inputs_run < WORK_PER_EXAMPLE * budget):
        known = {kind: [shape for shape, _ in kept] for kind, kept in found.items()}
        full = {kind for kind, count in made.items() if count >= kind_limit(kind)}
        new, drawn = _round(surface_name, candidate, oracle, profile, _round_seed(seed, round_number),
                            budget - used, policy, known, full, result, on_input, shrink=not first_only,
                            database=_surface_database(database, surface_name, round_number), observed=observed,
                            drawn_values=drawn_values if round_number == 0 else None,
                            sequence=sequence if round_number == 0 else None)
        if first_only and new:
            kind = min(new)
            found[kind] = [new[kind]]
            break
        for kind in sorted(new):
            if sum(made.values()) >= FINDINGS_PER_SURFACE:
                break
            shape, record = new[kind]
            record = _simplified(record, kind, shape, candidate, oracle, policy, result, on_input)
            keep(kind, shape, record)
            if database is not None:
                from conformance.run.examples import save_finding

                save_finding(database, surface_name, record.decoded_input)
        used += drawn
        round_number += 1
        if not new:
            break
    result.findings = [record for kind in sorted(found) for _, record in found[kind]]
    if stored is not None and drawn_values is not None and round_number == 1 and not made and result.error is None:
        stored.put(sequence_key, drawn_values)  # one round, no finding: what any conforming candidate draws
    return result


def _unanswered(record: CaseLine) -> bool:
    """Whether the oracle gave the input no answer to hold the candidate to (it could not start, or failed)."""
    return record.outcome is Outcome.ERROR and record.oracle is None


def _replayed(
    surface_name: str, candidate: Connection, oracle: Oracle, policy: NanPolicy | None, database: ExampleDatabase,
    result: GenerationResult, on_input: Callable[[str], None],
) -> list[tuple[tuple[str, ...], shapes.Shape, CaseLine]]:
    """The stored findings the candidate still diverges on, each with its kind and shape, run again input by
    input; one it now conforms on is forgotten, one it does not claim or the suite leaves out is passed over."""
    from conformance.run.examples import forget_finding, stored_findings

    claimed = candidate.implementation.scope if candidate.implementation is not None else None
    still: list[tuple[tuple[str, ...], shapes.Shape, CaseLine]] = []
    for value in stored_findings(database, surface_name):
        if not scope.claims(claimed, surface_name, value) or not scope.in_scope(value):
            continue
        record = run_input(f"{surface_name}::generated", surface_name, value, candidate, oracle, policy)
        result.answered(record)
        on_input(surface_name)
        if record.outcome is Outcome.BROKEN:
            break  # the first round says so, as for any input
        if record.outcome is Outcome.PASS:
            forget_finding(database, surface_name, value)
        elif record.outcome is Outcome.SKIP:
            result.skipped += 1
            result.skip_reason = result.skip_reason or record.detail or "skipped"
        else:
            shape = shapes.shape_of(surface_name, value)
            still.append((kind_of(record), shape, _as_finding(record, surface_name, value)))
    return still


def _as_finding(record: CaseLine, surface_name: str, value: Any) -> CaseLine:
    """A divergence gets an id and keeps its input (the id hashes the input)."""
    return record.amended(id=finding_id(surface_name, value), origin="generated", input=wire.encode(value))


def _simplified(
    record: CaseLine, kind: tuple[str, ...], shape: shapes.Shape, candidate: Connection, oracle: Oracle,
    policy: NanPolicy | None, result: GenerationResult, on_input: Callable[[str], None],
) -> CaseLine:
    """The finding with every duplicate JSON key removed that it diverges, of the same kind and shape, without."""
    surface_name, tried = record.surface, set()
    changed = True
    while changed:
        changed = False
        for smaller in simplify.without_duplicate_keys(record.decoded_input):
            key = finding_id(surface_name, smaller)
            if key in tried:
                continue
            tried.add(key)
            again = run_input(f"{surface_name}::generated", surface_name, smaller, candidate, oracle, policy)
            result.answered(again)
            on_input(surface_name)
            if again.outcome is Outcome.BROKEN:
                return record
            if kind_of(again) == kind and shapes.shape_of(surface_name, smaller) == shape:
                record, changed = _as_finding(again, surface_name, smaller), True
                break
    return record


def _surface_database(database: ExampleDatabase | None, surface_name: str, round_number: int
                      ) -> ExampleDatabase | None:
    if database is None:
        return None
    from conformance.run.examples import SurfaceDatabase  # imports Hypothesis

    return SurfaceDatabase(database, surface_name, keep=round_number > 0)


def _round_seed(seed: int, round_number: int) -> int:
    if round_number == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}:{round_number}".encode()).digest()[:4], "big")


@dataclass
class _Judge:
    """What a round makes of each input and its record, the same whether the input was drawn live or ahead: the
    counts, the new findings, and what the live test does with it."""

    surface_name: str
    known: dict[tuple[str, ...], list[shapes.Shape]]  # the shapes of each kind's findings so far
    full: set[tuple[str, ...]]  # the kinds that have all the findings they may have
    result: GenerationResult
    drawn_values: list[Any] | None
    latest: dict[tuple[str, ...], tuple[shapes.Shape, CaseLine]] = field(default_factory=dict)
    calls: int = 0
    drawn_before_first: int | None = None  # calls when the first new kind appeared

    def __post_init__(self) -> None:
        self.declared = surfaces.get(self.surface_name).features

    def take(self, value: Any, record: CaseLine) -> tuple[BaseException | None, float | None]:
        """``value``'s record counted: what the live test raises for it (None: it passes, as far as Hypothesis
        is concerned) and the score it gives ``hypothesis.target`` (None: it sets none)."""
        result = self.result
        self.calls += 1
        if self.drawn_values is not None:
            self.drawn_values.append(value)
        if self.drawn_before_first is None:  # after it, Hypothesis shrinks: those inputs say nothing of the strategy
            result.drawn += 1
            result.features.update(present(self.declared, value))
        result.answered(record)
        if record.outcome is Outcome.BROKEN:
            return CandidateBroken(record.detail), None  # nothing more can be learnt from this candidate
        if _unanswered(record):
            # No answer to hold the candidate to (the oracle could not start, or failed): no finding of the
            # candidate's, and no pass either. Shrinking stops at such inputs; the line says how many and why.
            result.unanswered += 1
            result.unanswered_reason = result.unanswered_reason or record.detail
            return None, None
        # Scored only when some value is off by ULPs: a zero gives Hypothesis nothing to climb, yet with an example
        # database every scored input joins its Pareto front, which it keeps and shrinks at a cost of more than
        # the run's own inputs (campaign tasks spent three fifths of their time there on a conforming candidate).
        score = float(max((m.ulps or 0 for m in record.mismatches), default=0)) or None
        if record.outcome is Outcome.PASS:
            return None, score
        if record.outcome is Outcome.SKIP:
            result.skipped += 1
            result.skip_reason = result.skip_reason or record.detail or "skipped"
            return None, score
        kind = kind_of(record)
        if kind in self.full:
            return None, score  # as many findings of this kind as are kept
        shape = shapes.shape_of(self.surface_name, value)
        if any(shapes.covers(shape, seen) for seen in self.known.get(kind, ())):
            return None, score  # a finding of an earlier round, with something beside it
        if record.outcome is Outcome.FLAKY and kind in self.latest:
            return None, score  # one is enough: answers that change say nothing more on a smaller input
        # Hypothesis replays each minimal failing input last, so the last record of a kind is the minimal one.
        self.latest[kind] = shape, _as_finding(record, self.surface_name, value)
        if self.drawn_before_first is None:
            self.drawn_before_first = self.calls
        if record.outcome is Outcome.FLAKY:
            return None, score  # not raised: Hypothesis would shrink and replay an answer that does not hold still
        return divergence_type(kind)(record.id), score


# Records of inputs asked ahead kept for a live run that follows: beyond them, it asks the candidate again. A
# conforming run never needs them, and 256 of them (pass_at_k's inputs are large) made a cached ci run's harness
# 19 MB larger; 32 cost nothing measurable.
ASKED_KEPT = 32
# Rounds are drawn ahead (conformance.run.ahead); False runs every round live, as tests compare the two.
DRAW_AHEAD = True


def _round(
    surface_name: str, candidate: Connection, oracle: Oracle, profile: Profile, seed: int, budget: int,
    policy: NanPolicy | None, known: dict[tuple[str, ...], list[shapes.Shape]], full: set[tuple[str, ...]],
    result: GenerationResult, on_input: Callable[[str], None], *, shrink: bool = True,
    database: ExampleDatabase | None = None, observed: IO[str] | None = None, drawn_values: list[Any] | None = None,
    sequence: list[Any] | None = None,
) -> tuple[dict[tuple[str, ...], tuple[shapes.Shape, CaseLine]], int]:
    """One Hypothesis run: a new finding of each kind it found (shrunk, with its shape), and how many examples it
    drew before the first.

    The run is drawn ahead (:mod:`conformance.run.ahead`) unless its observations are written: as long as every
    input passes as taken, nothing waits on an answer; from the first that does not, live Hypothesis runs.

    ``known``: the shapes of each kind's findings so far; an input whose shape covers one is no new finding.
    ``full``: the kinds that have all the findings they may have.
    ``drawn_values``: every input is appended to it, in the order drawn.
    ``sequence``: the inputs the run would draw, stored by an earlier one (:mod:`conformance.run.stored_inputs`):
    sent in place of drawing ahead.
    """
    judge = _Judge(surface_name, known, full, result, drawn_values)
    drawing: ahead.Ahead | None = None  # set while the test runs ahead, in the drawing thread
    asked: ahead.Asked | None = None  # what was asked ahead, for the live run
    told = 0  # inputs told of (on_input) ahead: the live run's first ``told`` inputs are the same ones
    drawn_ahead = observed is None and DRAW_AHEAD
    # A stored sequence is sent without drawing: Hypothesis and the strategy are imported and built only when a
    # run draws (a replay that diverges goes on live).
    deferred = None
    if database is not None and drawn_ahead and sequence is None:  # a replay draws nothing it would defer
        from conformance.run import ahead

        deferred = ahead.DeferredDatabase(database)

    @functools.cache  # one test a round: the drawing thread's, then the live run's
    def hypothesis_test() -> Callable[[], None]:
        """The round's Hypothesis run, quiet (findings go to the report, not to stdout)."""
        import hypothesis
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis.reporting import with_reporter
        from hypothesis.strategies import SearchStrategy

        def check(value: Any) -> None:
            if drawing is not None:  # drawing ahead: every input passes, unscored, as for a candidate that conforms
                drawing.put(value)
                return
            if observed is not None:
                for name in present(judge.declared, value):  # an observation's features (what Tyche charts)
                    hypothesis.event(name)
            record = asked.take(value) if asked is not None else None
            if record is None:
                record = run_input(f"{surface_name}::generated", surface_name, value, candidate, oracle, policy)
            raised, score = judge.take(value, record)
            if judge.calls > told:
                on_input(surface_name)
            if score is not None and profile.target_ulps:
                hypothesis.target(score, label="ulps")
            if raised is not None:
                raise raised

        phases = [Phase.explicit] + ([Phase.reuse] if database is not None else []) + [Phase.generate] + (
            [Phase.shrink] if shrink else []) + (
            [Phase.target] if profile.target_ulps else [])
        claimed = candidate.implementation.scope if candidate.implementation is not None else None
        # The surface's inputs are within the suite's scope already; values the candidate claims are merged into
        # them after, so an input they changed is held to it again (only then: it is a walk over the whole input).
        inputs: SearchStrategy[Any] = surfaces.get(surface_name).inputs()
        if claimed is not None and claimed.get(surface_name):
            inputs = scope.restrict(inputs, claimed, surface_name).filter(scope.in_scope)
        configured = settings(
            max_examples=budget,
            database=deferred if deferred is not None else database,
            deadline=None,
            derandomize=False,
            phases=phases,
            report_multiple_bugs=True,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
        )
        if observed is not None:  # the observations' property: the surface (Hypothesis wants an identifier)
            check.__name__ = check.__qualname__ = "generated_" + re.sub(r"\W", "_", surface_name)
        property_test = given(inputs)(check)
        # The seed inside the settings: @seed alone turns the example database off, the settings given after it
        # put it back.
        test: Callable[[], None] = configured(hypothesis.seed(seed)(property_test))

        def quietly() -> None:
            with with_reporter(lambda _message: None):
                test()

        inputs_independent_of_imports()
        quiet_warnings()
        return quietly

    if drawn_ahead:
        saved, drawn_so_far = result.counts(), len(drawn_values) if drawn_values is not None else 0
        source: Iterable[Any]
        if sequence is None:
            from conformance.run import ahead

            source = drawing = ahead.Ahead(hypothesis_test())
            drawing.start()
        else:
            source = sequence
        try:  # the drawing thread is stopped before anything else
            raised, taken = _asked_ahead(surface_name, source, candidate, oracle, policy, judge, profile, on_input,
                                         replayed=sequence is not None)
        finally:
            if drawing is not None:
                drawing.close()
        whole = raised is None and (drawing is None or drawing.error is None)  # every input passed as taken
        drawing = None
        if deferred is not None and whole:  # its writes are what the live run would have written
            deferred.apply()
        elif deferred is not None:  # the live run that follows writes its own
            deferred.drop()
        # Unshrunk, the first divergence is all that is asked (whether the candidate can be told apart at all).
        whole = whole or (not shrink and isinstance(raised, Divergence))
        if whole:
            return judge.latest, (judge.drawn_before_first if judge.drawn_before_first is not None else budget)
        # Live from the start: the same inputs again up to the one that did not pass as taken, answered as asked.
        from conformance.run import ahead

        result.restore(saved)
        if drawn_values is not None:
            del drawn_values[drawn_so_far:]
        told = judge.calls
        judge = _Judge(surface_name, known, full, result, drawn_values)
        asked = ahead.Asked(lambda value: finding_id(surface_name, value), taken)
    quietly = hypothesis_test()
    try:
        with recording(observed):
            quietly()
    except BaseException as error:  # noqa: B036 - Hypothesis raises groups; anything else is reported
        if isinstance(error, KeyboardInterrupt):
            raise
        others = [e for e in _leaves(error) if not isinstance(e, Divergence)]
        broken = [e for e in others if isinstance(e, CandidateBroken)]
        if broken:
            result.error = str(broken[0])[:4000]
        elif others:
            result.error = f"{type(others[0]).__name__}: {others[0]}"[:4000]
    return judge.latest, (judge.drawn_before_first if judge.drawn_before_first is not None else budget)


def _asked_ahead(
    surface_name: str, values: Iterable[Any], candidate: Connection, oracle: Oracle, policy: NanPolicy | None,
    judge: _Judge, profile: Profile, on_input: Callable[[str], None], *, replayed: bool,
) -> tuple[BaseException | None, list[tuple[Any, CaseLine]]]:
    """``values`` asked in batches as they come, each record judged as the live test would, up to the first that
    does not pass as taken (the live test raises for it, or scores it): what the live test raises for that one
    (a ``Taken`` for a score; None when every input passed as taken), and the
    inputs asked with their records for the live run to take (up to ASKED_KEPT). Each record judged is told
    of (``on_input``). A drawing thread is stopped before this returns."""
    sent: deque[Any] = deque()
    taken: list[tuple[Any, CaseLine]] = []

    def items() -> Iterator[Input]:
        for value in values:
            sent.append(value)
            yield Input(f"{surface_name}::generated", surface_name, value)

    with closing(run_inputs(items(), candidate, oracle, policy, arriving=not replayed)) as records:
        for record in records:
            value = sent.popleft()
            raised, score = judge.take(value, record)
            on_input(surface_name)
            if raised is None and profile.target_ulps and score is not None:
                raised = Taken(f"target score {score}")
            # An answer that ends the run ahead is left for the live run to ask again, as it asks every
            # input: a candidate whose answers change with the order it is asked in is then judged on what it
            # answers live. A crash or a timeout (a restart, a whole time limit) is taken as it came.
            if len(taken) < ASKED_KEPT and (raised is None or record.outcome not in ASKED_AGAIN):
                taken.append((value, record))
            if raised is not None:
                return raised, taken
            if replayed:
                judge.result.replayed += 1
    return None, taken
