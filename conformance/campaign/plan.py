"""What a campaign asks for, checked before anything starts, and the stream of tasks it submits.

Nothing here starts a process or imports Dask: every decision is testable
on its own. A task is one surface, one seed and a slice of examples; the
tasks take the surfaces in turn, and each surface's n-th task draws from a
seed derived from the campaign's base seed, the surface and n, so a task is
repeated by ``certify --no-cases -s SURFACE --profile P --seed S
--max-examples N`` from what the report and the log say.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conformance.connection.base import DEFAULT_TIMEOUT
from conformance.connection.spec import Spec
from conformance.core import scope, surfaces
from conformance.errors import OptionError, UsageError
from conformance.run import generate as generation
from conformance.run.plan import Options

# Explore-like by default: fresh seeds, steered toward large ULP distances.
DEFAULT_PROFILE = "explore"
# Examples a task draws. Small enough that a task ends a few seconds after the budget does on the cheap
# surfaces, large enough that starting it (a round trip to the scheduler) costs nothing beside it.
DEFAULT_TASK_EXAMPLES = 100
DEFAULT_CONNECT_TIMEOUT = 20.0  # seconds to reach a scheduler, and for its first worker to join

_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}
_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)([hms])")


def parse_duration(text: str, option: str = "--budget") -> float:
    """Seconds in a duration such as ``90s``, ``30m``, ``2h`` or ``1h30m``; UsageError, naming the ``option``
    it was given to, saying how to write one."""
    compact = text.strip().lower()
    parts = _PART.findall(compact)
    units = [unit for _, unit in parts]
    if (not parts or "".join(number + unit for number, unit in parts) != compact
            or units != sorted(set(units), key="hms".index)):
        raise UsageError(f"{option}: a duration is written like 90s, 30m, 2h or 1h30m, got {text!r}")
    seconds = sum(float(number) * _UNITS[unit] for number, unit in parts)
    if seconds <= 0:
        raise UsageError(f"{option}: a duration must be longer than nothing, got {text!r}")
    return seconds


@dataclass(frozen=True)
class Connections:
    """What each worker connects to, sent to every worker with the campaign's plugin."""

    candidate: Spec
    oracle: Spec
    timeout: float = DEFAULT_TIMEOUT  # per candidate request
    example_database: str | None = None  # findings saved there and replayed first (conformance.run.examples)
    oracle_cache: bool = True  # the oracle's answers from the answer cache where it has them (--no-oracle-cache)


@dataclass(frozen=True)
class Task:
    """One generator run on a worker: a surface, its n-th seed, a slice of examples."""

    surface: str
    number: int  # the surface's n-th task, from 0
    seed: int
    max_examples: int
    profile: str

    def __str__(self) -> str:
        return f"{self.surface} #{self.number} (seed {self.seed})"


def task_seed(base_seed: int, surface: str, number: int) -> int:
    """The seed of a surface's n-th task: one stream of inputs per task, all from the campaign's seed."""
    return int.from_bytes(hashlib.sha256(f"{base_seed}:{surface}:{number}".encode()).digest()[:4], "big")


@dataclass(frozen=True)
class Plan:
    connections: Connections
    budget: float  # seconds during which tasks are submitted
    generators: tuple[str, ...]  # surfaces whose generators run
    profile: generation.Profile
    base_seed: int
    task_examples: int
    report: Path
    workers: int | None = None  # of the local cluster; None: one per core
    scheduler: str | None = None  # tcp://HOST:PORT of a cluster's scheduler; None: a local cluster
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT

    def tasks(self) -> Iterator[Task]:
        """Every task the campaign could submit, in order: the surfaces in turn, without end."""
        for number in itertools.count():
            for surface in self.generators:
                yield Task(surface, number, task_seed(self.base_seed, surface, number), self.task_examples,
                           self.profile.name)

    def within(self, claimed: scope.Scope | None) -> Plan:
        """The plan narrowed to the surfaces a candidate claims; UsageError when none is left."""
        if claimed is None:
            return self
        generators = tuple(scope.surfaces(claimed, list(self.generators)))
        if not generators:
            raise UsageError(f"{self.connections.candidate} claims {claimed}: no surface selected falls within it")
        return dataclasses.replace(self, generators=generators)


def make_plan(options: Options, *, budget: float, report: Path, task_examples: int = DEFAULT_TASK_EXAMPLES,
              workers: int | None = None, scheduler: str | None = None,
              connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> Plan:
    """The campaign asked for: the run options (checked where they were made, as certify's are) and what only a
    campaign takes; UsageError (exit 2) for one that cannot start as asked."""
    oracle, example_database = options.oracle, options.example_database
    if oracle is None:
        raise OptionError("oracle", "a campaign generates inputs, which need a live oracle (not --oracle recorded)")
    if example_database is None:
        raise OptionError("example-database", "a campaign saves its findings to an example database: name one")
    generators = tuple(surfaces.with_generators(options.surfaces))
    if not generators:
        raise UsageError("none of the surfaces selected has a generator")
    if budget <= 0 or task_examples < 1 or connect_timeout <= 0 or (workers is not None and workers < 1):
        raise UsageError("the budget, --task-examples, --workers and --connect-timeout must be positive")
    if scheduler is not None and "://" not in scheduler:
        raise UsageError(f"--scheduler takes a scheduler's address such as tcp://HOST:8786, got {scheduler!r}")
    chosen, seed = options.profile_settings, options.seed
    if seed is None:
        seed = chosen.fixed_seed if chosen.fixed_seed is not None else generation.new_seed()
    # Workers open the database by this name: a directory is named absolutely (a cluster's workers need it
    # on a shared file system, at the same path).
    database = example_database if example_database.startswith("redis://") else str(
        Path(example_database).expanduser().resolve())
    return Plan(Connections(options.candidate, oracle, options.timeout, database, options.oracle_cache), budget,
                generators, chosen, seed, task_examples, report, workers, scheduler, connect_timeout)
