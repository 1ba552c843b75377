"""``conformance mutants``: the suite's own discriminating power, measured on one-bug mutants of the reference."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from conformance.cli import options as opt
from conformance.cli.console import log, out
from conformance.errors import UsageError
from conformance.mutation import table
from conformance.mutation.measure import Measured, measure
from conformance.mutation.mutants import Mutant, catalogue

MutantIds = Annotated[list[str] | None, typer.Option(
    "--mutant", "-m", help="Only the mutants whose id matches this glob (repeatable), e.g. 'SURFACE/*'.")]


def _chosen(surfaces: list[str] | None, patterns: list[str] | None) -> list[Mutant]:
    chosen = [m for m in catalogue() if (not surfaces or m.surface in surfaces)
              and (not patterns or any(fnmatch.fnmatchcase(m.id, p) for p in patterns))]
    if not chosen:
        raise UsageError("no mutant matches the --surface and --mutant given")
    return chosen


def _line(result: Measured) -> str:
    columns = [f"{name}: {len(c.killing)} killing of {c.inputs_run}" + (f" ({c.problem})" if c.problem else "")
               for name, c in (("cases", result.cases), ("generators", result.generators)) if c is not None]
    state = "killed" if result.killed else "survives" if result.mutant.equivalent else "SURVIVES"
    state += " (argued equivalent)" if result.mutant.equivalent else ""
    return f"{result.mutant.id}: {state}; {'; '.join(columns)} ({result.seconds:.1f} s)"


def _rates_table(results: list[Measured]) -> Table:
    view = Table(title="mutants killed, of those not argued equivalent")
    for name in ("surface", "mutants", "equivalent", "by the cases", "by the ci generators", "killed"):
        view.add_column(name, justify="left" if name == "surface" else "right")
    for rate in table.rates(results):
        view.add_row(rate.surface, str(rate.mutants), str(rate.equivalent), table.percent(rate.by_cases, rate.counted),
                     table.percent(rate.by_generators, rate.counted), table.percent(rate.killed, rate.counted))
    return view


def mutants(
    surfaces: opt.Surfaces = None,
    patterns: MutantIds = None,
    no_cases: Annotated[bool, typer.Option("--no-cases", help="Do not hunt the mutants with the cases.")] = False,
    no_generators: Annotated[bool, typer.Option(
        "--no-generators", help="Do not hunt them with the ci generators (no live oracle is needed then).")] = False,
    listing: Annotated[bool, typer.Option("--list", help="List the mutants and exit.")] = False,
    markdown_out: opt.MarkdownOut = None,
    cases_root: opt.CasesRoot = None,
) -> None:
    """Certify one-bug mutants of the reference, by the cases alone and by the ci generators alone; exit 1
    when a target is not met (a survivor, a rate under target, a mutant killed by one input only)."""
    chosen = _chosen(surfaces, patterns)
    if listing:
        for mutant in chosen:
            note = " (equivalent)" if mutant.equivalent else ""
            out.print(f"{escape(mutant.id)}{note}: {escape(mutant.bug)}", highlight=False)
        return
    if no_cases and no_generators:
        raise UsageError("--no-cases and --no-generators leave nothing to hunt the mutants with")
    results = []
    for result in measure(chosen, cases=not no_cases, generators=not no_generators, cases_root=cases_root, log=log):
        log(_line(result))
        results.append(result)
    document = table.DOCUMENT.format(table=table.markdown(results))
    if markdown_out is not None:
        if str(markdown_out) == "-":
            out.print(document, markup=False, highlight=False)
        else:
            Path(markdown_out).write_text(document, encoding="utf-8")
    out.print(_rates_table(results))
    problems = table.shortfalls(results)
    for problem in problems:
        out.print(f"[red]target not met:[/red] {escape(problem)}", highlight=False)
    if problems:
        raise typer.Exit(1)
    out.print(f"[green]every target met[/green] by {len(results)} mutant(s)", highlight=False)
