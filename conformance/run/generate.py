"""Generated inputs: each surface's Hypothesis strategy run against the oracle and the candidate.

Every input goes through :func:`runner.run_input`, like a case. An input on
which the candidate does not conform raises a :class:`Divergence` whose type
encodes the outcome and the set of mismatch classes. Hypothesis tells failures
apart by exception type, so each kind of divergence is shrunk on its own and
a shrink step that changes the kind does not count as the same failure: the
minimal input keeps the mismatch class it was found with.

Profiles fix the budget and the search:

    ci       a fixed seed and budget, no example database: the same run every time, a gate
    dev      the default: a fresh random seed each run (recorded, so it can be replayed)
    explore  a long run that steers toward large ULP distances with ``hypothesis.target``

No profile uses Hypothesis's example database: a run is reproduced from the
profile and seed in the report header alone, and findings worth keeping are
made into cases with ``conformance promote``.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from conformance.connection.base import Connection
from conformance.core import scope, surfaces
from conformance.core.compare import NanPolicy, most_severe
from conformance.core.outcomes import Outcome
from conformance.kit import wire
from conformance.report.model import CaseLine, GeneratedLine, Generation
from conformance.run.runner import Oracle, run_input


@dataclass(frozen=True)
class Profile:
    name: str
    max_examples: int  # per surface
    fixed_seed: int | None  # None: a new random seed per run
    target_ulps: bool = False
    summary: str = ""


PROFILES = {
    p.name: p
    for p in (
        Profile("ci", 250, 0, summary="fixed seed and budget; suitable as a gate"),
        Profile("dev", 100, None, summary="a fresh seed each run"),
        Profile("explore", 5000, None, target_ulps=True, summary="long runs steered toward large ULP distances"),
    )
}
DEFAULT_PROFILE = "dev"


def describe(profile: Profile, seed: int, max_examples: int | None) -> Generation:
    """The report header's account of a generation run: enough to repeat it."""
    from hypothesis import __version__ as hypothesis_version

    return Generation(profile=profile.name, seed=seed,
                      max_examples=max_examples if max_examples is not None else profile.max_examples,
                      target_ulps=profile.target_ulps, hypothesis=hypothesis_version)


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


def divergence_type(kind: tuple[str, ...]) -> type[Divergence]:
    if kind not in _KINDS:
        _KINDS[kind] = type(f"Divergence[{'/'.join(kind)}]", (Divergence,), {"kind": kind})
    return _KINDS[kind]


@contextmanager
def _inputs_independent_of_imports() -> Iterator[None]:
    """Keep Hypothesis from mixing literals of locally imported modules into its draws.

    Hypothesis mines constants from every non-site-packages module in
    sys.modules; an in-process candidate's own module (or which commands of
    this package ran) would then change the inputs a seed produces, and the
    same seed must give every candidate the same inputs.
    """
    from hypothesis.internal.conjecture import providers

    original = getattr(providers, "_get_local_constants", None)
    if original is None or not hasattr(providers, "Constants"):  # a Hypothesis without the feature
        yield
        return
    providers._get_local_constants = providers.Constants
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


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
    error: str | None = None  # the generator itself failed (a flaky candidate, a harness bug)

    @property
    def conforms(self) -> bool:
        return not self.findings and not self.skipped and self.error is None

    def line(self) -> GeneratedLine:
        """The report's account of this generator."""
        return GeneratedLine(surface=self.surface, profile=self.profile, seed=self.seed,
                             max_examples=self.max_examples, inputs_run=self.inputs_run,
                             divergences=[r.id for r in self.findings], skipped=self.skipped,
                             skip_reason=self.skip_reason, error=self.error)


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
) -> GenerationResult:
    """Run one surface's generator; the shrunk findings are in the result, one per kind.

    Hypothesis stops generating soon after its first failure, so one run would
    spend little of the budget when a bug shows early. The budget is spent in
    rounds instead: each round treats the kinds already found as passing, so a
    later round looks for other bugs; rounds end when one finds nothing new or
    the examples drawn before each round's first failure use up the budget.
    """
    if oracle.connection is None:
        raise ValueError("generated inputs need a live oracle")
    budget = max_examples if max_examples is not None else profile.max_examples
    result = GenerationResult(surface_name, profile.name, seed, budget)
    found: dict[tuple[str, ...], CaseLine] = {}
    used, round_number = 0, 0
    while used < budget and result.error is None:
        new, drawn = _round(surface_name, candidate, oracle, profile, _round_seed(seed, round_number),
                            budget - used, policy, set(found), result, on_input)
        found.update(new)
        used += drawn
        round_number += 1
        if not new:
            break
    result.findings = [found[k] for k in sorted(found)]
    return result


def _round_seed(seed: int, round_number: int) -> int:
    if round_number == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}:{round_number}".encode()).digest()[:4], "big")


def _round(
    surface_name: str, candidate: Connection, oracle: Oracle, profile: Profile, seed: int, budget: int,
    policy: NanPolicy | None, known: set[tuple[str, ...]], result: GenerationResult,
    on_input: Callable[[str], None],
) -> tuple[dict[tuple[str, ...], CaseLine], int]:
    """One Hypothesis run: the new kinds found (shrunk), and how many examples it drew before the first."""
    import hypothesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.reporting import with_reporter
    from hypothesis.strategies import SearchStrategy

    latest: dict[tuple[str, ...], CaseLine] = {}
    calls = 0
    drawn_before_first: int | None = None  # calls when the first new kind appeared

    def check(value: Any) -> None:
        nonlocal calls, drawn_before_first
        result.inputs_run += 1
        calls += 1
        record = run_input(f"{surface_name}::generated", surface_name, value, candidate, oracle, policy)
        on_input(surface_name)
        if record.outcome is Outcome.BROKEN:
            raise CandidateBroken(record.detail)  # nothing more can be learnt from this candidate
        if profile.target_ulps:
            hypothesis.target(float(max((m.ulps or 0 for m in record.mismatches), default=0)), label="ulps")
        if record.outcome is Outcome.PASS:
            return
        if record.outcome is Outcome.SKIP:
            result.skipped += 1
            result.skip_reason = result.skip_reason or record.detail or "skipped"
            return
        kind = kind_of(record)
        if kind in known:
            return  # found and shrunk in an earlier round
        # Only divergences get an id and keep their input (the id hashes the input).
        record.id, record.origin, record.input = finding_id(surface_name, value), "generated", wire.encode(value)
        # Hypothesis replays each minimal failing input last, so the last record of a kind is the minimal one.
        latest[kind] = record
        if drawn_before_first is None:
            drawn_before_first = calls
        raise divergence_type(kind)(record.id)

    phases = [Phase.explicit, Phase.generate, Phase.shrink] + ([Phase.target] if profile.target_ulps else [])
    claimed = candidate.implementation.scope if candidate.implementation is not None else None
    inputs: SearchStrategy[Any] = scope.restrict(surfaces.get(surface_name).inputs(), claimed, surface_name)
    configured = settings(
        max_examples=budget,
        database=None,
        deadline=None,
        derandomize=False,
        phases=phases,
        report_multiple_bugs=True,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    property_test = given(inputs)(check)
    test: Callable[[], None] = hypothesis.seed(seed)(configured(property_test))
    try:
        # findings go to the report, not to stdout
        with with_reporter(lambda _message: None), _inputs_independent_of_imports():
            test()
    except BaseException as error:  # noqa: B036 - Hypothesis raises groups; anything else is reported
        if isinstance(error, KeyboardInterrupt):
            raise
        others = [e for e in _leaves(error) if not isinstance(e, Divergence)]
        broken = [e for e in others if isinstance(e, CandidateBroken)]
        if broken:
            result.error = str(broken[0])[:4000]
        elif others:
            result.error = f"{type(others[0]).__name__}: {others[0]}"[:4000]
    return latest, (drawn_before_first if drawn_before_first is not None else budget)
