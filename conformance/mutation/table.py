"""The measurement as verdicts: kill rates per surface, survivors named, and the targets the suite holds itself to.

Targets, over the mutants not argued equivalent:

* every one is killed (by the cases or by the generators);
* the ``ci`` generators alone kill at least :data:`GENERATOR_TARGET` of them on every surface;
* every one is told from the oracle by at least :data:`MIN_INPUTS` inputs, so that losing one
  case does not let it pass;

and a mutant argued equivalent is never killed (that would prove the argument wrong).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from conformance.mutation.measure import PROFILE, Column, Measured

DOCUMENT = """\
# Mutants: how much of a wrong reimplementation the suite catches

Each mutant is the reference candidate with one bug a reimplementer could
make (the catalogue: each surface folder's `mutants.py`,
`conformance/surfaces/<surface>/`; `conformance mutants --list` prints it). `nox -s mutants`
certifies every one on its surface twice: by the cases alone (against the
corpus's recordings) and by the `ci` generators alone (fixed seed, against
the live oracle), and writes this page. A mutant argued equivalent carries
the argument; it is run all the same, and killing it would prove the
argument wrong.

The targets: every mutant not argued equivalent is killed; the `ci`
generators alone kill at least 90% of them on every surface; every one is
told from the oracle by at least two inputs (cases and generated inputs
together), so no bug rests on a single case.

Each generator run stops at its first divergence (a kill needs one), so
"1 of 49" reads: the 49th generated input told the mutant apart; "survives
250" means the surface's whole `ci` budget (times its `examples_scale`) ran
without a divergence.

{table}"""
GENERATOR_TARGET = 0.9
MIN_INPUTS = 2


@dataclass(frozen=True)
class SurfaceRates:
    surface: str
    mutants: int
    equivalent: int
    by_cases: int | None  # killed, of the non-equivalent ones; None: not measured
    by_generators: int | None
    killed: int

    @property
    def counted(self) -> int:
        return self.mutants - self.equivalent


def _count(results: Sequence[Measured], column: str) -> int | None:
    columns: list[Column | None] = [getattr(r, column) for r in results]
    if any(c is None for c in columns):
        return None
    return sum(1 for c in columns if c is not None and c.killed)


def rates(results: Iterable[Measured]) -> list[SurfaceRates]:
    by_surface: dict[str, list[Measured]] = defaultdict(list)
    for result in results:
        by_surface[result.mutant.surface].append(result)
    out = []
    for surface in sorted(by_surface):
        every = by_surface[surface]
        counted = [r for r in every if r.mutant.equivalent is None]
        out.append(SurfaceRates(surface, len(every), len(every) - len(counted), _count(counted, "cases"),
                                _count(counted, "generators"), sum(r.killed for r in counted)))
    return out


def shortfalls(results: Sequence[Measured]) -> list[str]:
    """Every target not met, each a sentence naming what falls short."""
    problems = []
    for r in results:
        if r.mutant.equivalent is not None:
            if r.killed:
                problems.append(f"{r.mutant.id} is argued equivalent, yet killed: the argument is wrong")
        elif not r.killed:
            problems.append(f"{r.mutant.id} survives: {r.mutant.bug}")
        elif r.killing_inputs < MIN_INPUTS:
            problems.append(f"{r.mutant.id} is killed by {r.killing_inputs} input only (target: {MIN_INPUTS})")
    for rate in rates(results):
        if rate.by_generators is not None and rate.counted and rate.by_generators < GENERATOR_TARGET * rate.counted:
            problems.append(f"{rate.surface}: the {PROFILE} generators alone kill {rate.by_generators} of "
                            f"{rate.counted} ({percent(rate.by_generators, rate.counted)}; target "
                            f"{GENERATOR_TARGET:.0%})")
    return problems


def percent(part: int | None, whole: int) -> str:
    if part is None:
        return "not measured"
    return f"{part / whole:.0%}" if whole else "-"


def _cell(column: Column | None) -> str:
    if column is None:
        return "not measured"
    if column.killing:
        return f"{len(column.killing)} of {column.inputs_run}"
    return f"stopped: {column.problem}" if column.problem else f"survives {column.inputs_run}"


def _verdict(r: Measured) -> str:
    if r.mutant.equivalent is not None:
        return "equivalent, killed (argument wrong)" if r.killed else "equivalent"
    if not r.killed:
        return "**survives**"
    return "killed" if r.killing_inputs >= MIN_INPUTS else f"killed by {r.killing_inputs} input"


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(results: Sequence[Measured]) -> str:
    """The whole measurement: the rates per surface, the unmet targets, and every mutant's row."""
    lines = [
        "| surface | mutants | equivalent | killed by the cases | killed by the ci generators | killed |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for rate in rates(results):
        lines.append(f"| {rate.surface} | {rate.mutants} | {rate.equivalent} | "
                     f"{percent(rate.by_cases, rate.counted)} | {percent(rate.by_generators, rate.counted)} | "
                     f"{percent(rate.killed, rate.counted)} |")
    problems = shortfalls(results)
    lines += ["", "Every target is met." if not problems else "Targets not met:", ""]
    lines += [f"- {_escape(problem)}" for problem in problems] + ([""] if problems else [])
    lines += ["| mutant | bug | cases that kill it | ci generated inputs that kill it | verdict |",
              "|---|---|---|---|---|"]
    for r in results:
        bug = r.mutant.bug + (f" *Equivalent: {r.mutant.equivalent}*" if r.mutant.equivalent else "")
        lines.append(f"| `{r.mutant.id}` | {_escape(bug)} | {_cell(r.cases)} | {_cell(r.generators)} | "
                     f"{_verdict(r)} |")
    return "\n".join(lines) + "\n"
