"""What a certification run will do, decided before anything starts: a pure plan.

:func:`make_plan` checks the options, reads the corpus, the expectation file
and (with ``--resume``) the interrupted report, selects the cases, and fixes
the generators' seeds and budget, the shard's part included; nothing is
started, so every decision here is testable without a process. Once the
candidate has said what it claims, :meth:`Plan.within` narrows the plan to
that scope. :mod:`conformance.run.certification` carries the plan out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from conformance import ORACLE_RELEASE
from conformance.connection.base import DEFAULT_TIMEOUT
from conformance.connection.breaker import DEFAULT_LIMIT
from conformance.connection.connectors import parse
from conformance.connection.spec import Spec
from conformance.core import scope, surfaces
from conformance.core.compare import POLICIES, NanPolicy
from conformance.corpus import cases as case_corpus
from conformance.errors import OptionError, UsageError
from conformance.report.model import CaseLine, Header, Party, ShardInfo
from conformance.report.writer import new_header
from conformance.run import generate as generation
from conformance.run.expectations import Coverage, ExpectationError, Expectations
from conformance.run.flags import FLAGS
from conformance.run.resume import Resumed, resumable, within
from conformance.run.runner import RECORDED
from conformance.run.shards import Shard

DEFAULT_ORACLE = f"harbor=={ORACLE_RELEASE}"


def oracle_spec(text: str | Spec | None) -> Spec | None:
    """The ``--oracle`` value parsed: a spec, or None for the corpus's recordings (``recorded``)."""
    if text is None or isinstance(text, Spec):
        return text
    return None if text == RECORDED else parse(text)


@dataclass(frozen=True)
class Options:
    """What was asked for, typed: the front ends parse what they read (a spec into a :class:`Spec`, a shard into
    a :class:`Shard`) at their edge, from the options declared once in :mod:`conformance.run.flags`; a spec
    written as a string by a caller in Python is parsed here, on construction, so no string travels on."""

    candidate: Spec = field(default_factory=lambda: parse("reference"))
    oracle: Spec | None = field(default_factory=lambda: parse(DEFAULT_ORACLE))  # None: the corpus's recordings
    surfaces: list[str] | None = None
    case_globs: list[str] | None = None
    cases_root: Path | None = None
    timeout: float = DEFAULT_TIMEOUT
    nan_policy: str | None = None
    profile: str = generation.DEFAULT_PROFILE
    seed: int | None = None
    max_examples: int | None = None
    no_cases: bool = False
    no_generate: bool = False
    expectations: Path | None = None
    timeout_multiplier: float = 1.0  # scales the candidate's request, start and stop timeouts
    validate_protocol: bool = False  # check every candidate message against the published schemas
    broken_after: int = DEFAULT_LIMIT  # consecutive crashes, timeouts or protocol errors that end the candidate
    resume: bool = False  # go on from the report at the report path, keeping what it finished
    shard: Shard | None = None  # run only this part: its cases, its seed, its share of the budget
    first_finding: bool = False  # each generator stops at its first divergence, unshrunk
    example_database: str | None = None  # findings saved there, replayed first (conformance.run.examples)
    observations: Path | None = None  # a folder for Hypothesis's observations (conformance.run.observations)
    oracle_cache: bool = True  # the oracle's answers from the answer cache where it has them (--no-oracle-cache)
    input_cache: bool = True  # a seed that comes again: its inputs from the stored ones (--no-input-cache)
    oracle_processes: int = 1  # oracle processes that answer whole-job inputs at once (connection.pool)
    strict_warnings: bool = False  # a run that conforms with warnings fails (docs/warnings.md)

    def __post_init__(self) -> None:
        """Every value checked once, here, against the option's declaration and the registries: an OptionError
        names the option whose value cannot be used (each front end says it as it spells the option)."""
        candidate: Spec | str = self.candidate
        with option_error("candidate"):
            if isinstance(candidate, str):
                object.__setattr__(self, "candidate", parse(candidate))
        with option_error("oracle"):
            object.__setattr__(self, "oracle", oracle_spec(self.oracle))
        if self.profile not in generation.PROFILES:
            raise OptionError("profile", f"unknown profile {self.profile!r}; known: {', '.join(generation.PROFILES)}")
        for name in self.surfaces or []:
            if name not in surfaces.SURFACES:
                raise OptionError("surface",
                                  f"unknown surface {name!r}; known: {', '.join(sorted(surfaces.SURFACES))}")
        if self.nan_policy:
            with option_error("nan-policy"):
                POLICIES.get(self.nan_policy)  # a registered name, or a RegistryError naming those there are
        for field_name, option in _BOUNDED.items():
            value = getattr(self, field_name)
            if value is not None and (problem := FLAGS[option].out_of_bounds(value)):
                raise OptionError(option, problem)
        if self.oracle_processes < 1:
            raise OptionError("oracle-processes", f"expected a number at least 1, got {self.oracle_processes!r}")
        if self.no_cases and self.no_generate:
            raise UsageError("--no-cases and --no-generate together leave nothing to run")

    @property
    def policy(self) -> NanPolicy | None:
        """The NaN policy that overrides every surface's (None: each surface's own)."""
        return POLICIES.get(self.nan_policy) if self.nan_policy else None

    @property
    def profile_settings(self) -> generation.Profile:
        return generation.PROFILES[self.profile]


# The options whose values are numbers with a bound, by field: checked against their declaration (FLAGS).
_BOUNDED = {"timeout": "timeout", "timeout_multiplier": "timeout-multiplier", "broken_after": "broken-after",
            "seed": "seed", "max_examples": "max-examples"}


@contextmanager
def option_error(name: str) -> Iterator[None]:
    """A usage error in reading an option's value (a spec, a registered name), as an error of that option: a front
    end that parses a value at its edge says it as the run options would."""
    try:
        yield
    except OptionError:
        raise
    except UsageError as e:
        raise OptionError(name, str(e)) from None


def policy_name(nan_policy: NanPolicy | None) -> str:
    return nan_policy.name if nan_policy else ", ".join(
        sorted({f"{s.name}={s.policy.name}" for s in surfaces.SURFACES.values()}))


@dataclass(frozen=True)
class Plan:
    options: Options
    report: Path
    cases_root: Path
    cases: tuple[case_corpus.LoadedCase, ...]  # to run (those a resumed report finished excluded below)
    generators: tuple[str, ...]  # surfaces whose generated inputs run
    nan_policy: NanPolicy | None
    expectations: Expectations | None
    profile: generation.Profile
    seed: int  # the generators' seed (a shard's own)
    base_seed: int  # the run's seed
    budget: int  # generated inputs per surface (a shard's share), before each surface's scale
    resumed: Resumed
    seed_recurs: bool = False  # the seed is the profile's, or given: a later run may well have it again

    def budget_for(self, surface: str) -> int:
        """The generated inputs of one surface: the profile's budget times the surface's scale; a budget
        given with --max-examples is every surface's as it is."""
        scale = 1 if self.options.max_examples is not None else surfaces.get(surface).examples_scale
        return self.budget * scale

    @property
    def policy_name(self) -> str:
        return policy_name(self.nan_policy)

    @property
    def to_run(self) -> list[case_corpus.LoadedCase]:
        return [i for i in self.cases if i.id not in self.resumed.cases]

    def within(self, claimed: scope.Scope | None) -> Plan:
        """The plan narrowed to what a candidate claims; UsageError when nothing is left."""
        if claimed is None:
            return self
        cases = tuple(i for i in self.cases if scope.claims(claimed, i.case.surface, i.case.input))
        generators = tuple(scope.surfaces(claimed, list(self.generators)))
        if not cases and not generators:
            raise UsageError(f"{self.options.candidate} claims {claimed}: nothing selected falls within it")
        return dataclasses.replace(self, cases=cases, generators=generators)

    def header(self, oracle: Party, candidate: Party) -> Header:
        shard = self.options.shard
        return new_header(
            oracle=oracle, candidate=candidate, nan_policy=self.policy_name,
            surfaces=sorted({i.case.surface for i in self.cases} | set(self.generators)),
            cases_root=str(self.cases_root),
            generation=(generation.describe(self.profile, self.seed, self.budget).model_copy(
                update={"base_seed": self.base_seed}) if self.generators else None),
            shard=(ShardInfo(index=shard.index, count=shard.count, cases=[i.id for i in self.cases])
                   if shard else None),
            expectations=str(self.options.expectations) if self.options.expectations else None,
            resumed=self.resumed.history or None,
            case_globs=self.options.case_globs or None,
        )

    def coverage(self) -> Coverage:
        """Which expectation entries should have named something this run ran (an id there that names no case
        is a typo or a removed case)."""
        return Coverage(case_surfaces=frozenset(i.case.surface for i in self.cases),
                        generators=frozenset(self.generators), case_globs=tuple(self.options.case_globs or ()),
                        shard=self.options.shard)


def load_corpus(root: Path) -> list[case_corpus.LoadedCase]:
    loaded, errors = case_corpus.check_corpus(root)
    if errors:
        raise UsageError(f"{len(errors)} problem(s) in the case corpus at {root}; `conformance cases check` lists them",
                         [str(e) for e in errors])
    return loaded


def make_plan(options: Options, report: Path, log: Callable[[str], None] = lambda message: None) -> Plan:
    """Everything a run will do; UsageError (exit 2) for a run that cannot start as asked."""
    nan_policy = options.policy
    try:
        known = Expectations.from_file(options.expectations) if options.expectations else None
    except ExpectationError as e:
        raise e.within("expectation file") from None
    root = options.cases_root or case_corpus.default_root()
    loaded = load_corpus(root)
    oracle = options.oracle
    # Recordings were made with the default oracle; the oracle's release decides which cases apply.
    harbor_version = oracle.harbor_version if oracle is not None else ORACLE_RELEASE
    selected = [] if options.no_cases else case_corpus.select(loaded, options.surfaces, harbor_version,
                                                              options.case_globs)
    if not selected and not options.no_cases:
        raise UsageError("no case selected")
    if unmatched := [glob for glob in (options.case_globs if not options.no_cases else None) or []
                     if not case_corpus.select(selected, ids=[glob])]:
        # Each glob, not only all of them: one mistyped beside another that matches would narrow the run unseen.
        raise OptionError("case", f"{', '.join(map(repr, unmatched))} matches no case of the run (after --surface and "
                                  "the oracle's release): a typo, or a case renamed")
    if options.shard:
        selected = [i for i in selected if options.shard.takes(i.id)]
    # Generated inputs need a live oracle and are not selected by case id.
    generators = ([] if options.no_generate or oracle is None or options.case_globs
                  else surfaces.with_generators(options.surfaces))
    if options.no_cases and not generators:
        raise UsageError("nothing to run: generated inputs need a live oracle (not --oracle recorded) and no --case")
    profile = options.profile_settings
    if options.shard and generators and options.seed is None and profile.fixed_seed is None and not options.resume:
        raise UsageError(f"--shard with profile {options.profile} needs --seed: every shard derives its "
                         "generators' seed from the same one")
    resumed = resumable(report, options, profile, policy_name(nan_policy), log) if options.resume else Resumed()
    if resumed.cases:
        resumed = within(resumed, report, {i.id for i in loaded}, {i.id for i in selected}, log)
    seed = options.seed if options.seed is not None else resumed.seed
    recurs = seed is not None or profile.fixed_seed is not None
    if seed is None:
        seed = profile.fixed_seed if profile.fixed_seed is not None else generation.new_seed()
    base_seed, budget = seed, options.max_examples if options.max_examples is not None else profile.max_examples
    if options.shard:
        seed, budget = options.shard.seed(seed), options.shard.budget(budget)
    if known is not None:
        known.seen.update(line.id for line in resumed.kept if isinstance(line, CaseLine))
    return Plan(options, report, root, tuple(selected), tuple(generators), nan_policy, known, profile, seed,
                base_seed, budget, resumed, seed_recurs=recurs)
