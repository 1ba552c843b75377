"""Certify each mutant twice, by the cases alone and by the ``ci`` generators alone, and keep what killed it.

A mutant is certified on its own surface. The cases run against the
corpus's recordings (no oracle needed); the generators run against one
live oracle, opened once and shared by every mutant's run. With the
``ci`` profile's fixed seed every mutant meets the same inputs until it
diverges, so the two columns compare like with like.
"""

from __future__ import annotations

import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from conformance.connection.connectors import parse
from conformance.core.outcomes import CONFORMING
from conformance.errors import RunFailure
from conformance.mutation.mutants import Mutant
from conformance.run import certification
from conformance.run.certification import Options, Oracle, connect_oracle
from conformance.run.plan import DEFAULT_ORACLE, oracle_spec
from conformance.run.runner import RECORDED

PROFILE = "ci"
REFERENCE = "reference"


def candidate_spec(mutant: Mutant) -> str:
    return "exec:" + shlex.join([sys.executable, "-m", "conformance.mutation.serve", mutant.id])


@dataclass(frozen=True)
class Column:
    """One way of hunting a mutant: what ran, and the inputs that told it from the oracle."""

    inputs_run: int
    killing: tuple[str, ...]  # ids of the cases (or generated inputs) on which it diverged
    problem: str | None = None  # the run could not go on (the candidate broke, the generator failed)

    @property
    def killed(self) -> bool:
        return bool(self.killing) or self.problem is not None


@dataclass(frozen=True)
class Measured:
    mutant: Mutant
    cases: Column | None  # None: not measured
    generators: Column | None
    seconds: float

    @property
    def killed(self) -> bool:
        return any(column.killed for column in (self.cases, self.generators) if column is not None)

    @property
    def killing_inputs(self) -> int:
        """How many inputs tell this mutant from the oracle, over both columns: losing one still leaves the rest."""
        return sum(len(c.killing) or int(c.problem is not None) for c in (self.cases, self.generators) if c)


def _column(run: certification.Run, generated: bool) -> Column:
    killing = tuple(r.id for r in run.records if r.outcome not in CONFORMING)
    problems = [p.detail or p.outcome for p in run.tally.candidate_problems if p.stage == "start"]
    if generated:
        problems += [line.error for line in run.tally.generated.values() if line.error]
        problems += [f"{line.skipped} generated input(s) skipped" for line in run.tally.generated.values()
                     if line.skipped]
        inputs = sum(line.inputs_run for line in run.tally.generated.values())
    else:
        inputs = len(run.records)
    return Column(inputs, killing, problems[0] if problems else None)


def _certify(candidate: str, surface: str, oracle: Oracle, report: Path, generated: bool,
             cases_root: Path | None) -> Column:
    options = Options(
        cases_root=cases_root,
        candidate=parse(candidate),
        oracle=oracle_spec(DEFAULT_ORACLE if generated else RECORDED),
        surfaces=[surface],
        no_cases=generated,
        no_generate=not generated,
        profile=PROFILE,
        first_finding=True,  # a kill needs one divergence; shrinking and further rounds only cost time
    )
    return _column(certification.certify(options, report, oracle=oracle), generated)


def measure(
    mutants: Iterable[Mutant],
    *,
    cases: bool = True,
    generators: bool = True,
    cases_root: Path | None = None,
    log: Callable[[str], None] = lambda message: None,
) -> Iterator[Measured]:
    """Each mutant's two columns, as each is done (a live oracle is started only when generators run).

    The unmutated reference is certified first, the same two ways, on every surface measured: a kill means
    something only where the reference itself conforms (RunFailure otherwise).
    """
    chosen = list(mutants)
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="conformance-mutants-")))
        recorded = Oracle(None)
        live = stack.enter_context(connect_oracle(oracle_spec(DEFAULT_ORACLE), log)) if generators else None
        columns = [(name, oracle, generated) for name, oracle, generated, wanted in (
            ("cases", recorded, False, cases), ("generators", live, True, live is not None)) if wanted]
        for surface in sorted({m.surface for m in chosen}):
            for name, oracle, generated in columns:
                assert oracle is not None
                if _certify(REFERENCE, surface, oracle, folder / "reference.jsonl", generated, cases_root).killed:
                    raise RunFailure(f"the reference itself does not conform on {surface} by the {name}: "
                                     f"`{shlex.join(['conformance', 'certify', '-c', 'reference', '-s', surface])}` "
                                     "shows why")
        for mutant in chosen:
            started = time.monotonic()
            spec = candidate_spec(mutant)
            by_cases = (_certify(spec, mutant.surface, recorded, folder / "cases.jsonl", False, cases_root)
                        if cases else None)
            by_generators = (_certify(spec, mutant.surface, live, folder / "generated.jsonl", True, cases_root)
                             if live is not None else None)
            yield Measured(mutant, by_cases, by_generators, time.monotonic() - started)
