"""``conformance campaign``: generators run as tasks on a Dask cluster for a wall-clock budget, into one report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from conformance.campaign import engine, interrupt
from conformance.campaign.plan import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_PROFILE,
    DEFAULT_TASK_EXAMPLES,
    make_plan,
    parse_duration,
)
from conformance.cli import options as opt
from conformance.cli.console import command, console, log, out, print_problems, print_tables, print_verdict, warn
from conformance.cli.progress import LineProgress
from conformance.connection.base import DEFAULT_TIMEOUT
from conformance.connection.connectors import REFERENCE
from conformance.report.model import Party
from conformance.report.problems import Problems
from conformance.run.plan import DEFAULT_ORACLE, Options, oracle_spec


def campaign(
    budget: Annotated[str, typer.Option(
        "--budget", "-b", help="How long to submit tasks: 90s, 30m, 2h, 1h30m. Tasks under way then are finished.")],
    candidate: opt.Candidate = REFERENCE,
    surface: opt.Surfaces = None,
    profile: opt.Profile = DEFAULT_PROFILE,
    seed: opt.Seed = None,
    task_examples: Annotated[int, typer.Option(
        min=1, help="Generated inputs a task draws (shrinking aside).")] = DEFAULT_TASK_EXAMPLES,
    report: Annotated[Path | None, opt.option("report", show_default="reports/<candidate>.campaign.jsonl")] = None,
    example_database: Annotated[str | None, opt.option(
        "example-database", show_default="the report's path, .examples")] = None,
    oracle: opt.Oracle = DEFAULT_ORACLE,
    workers: Annotated[int | None, typer.Option(
        min=1, help="Worker processes of the local cluster.", show_default="one per core")] = None,
    scheduler: Annotated[str | None, typer.Option(
        help="Run on the cluster of this Dask scheduler (tcp://HOST:PORT) instead of a local one.")] = None,
    connect_timeout: Annotated[float, typer.Option(
        min=0.1, help="Seconds to reach the scheduler, and for a worker to join it.")] = DEFAULT_CONNECT_TIMEOUT,
    timeout: opt.Timeout = DEFAULT_TIMEOUT,
    markdown_out: opt.MarkdownOut = None,
    junit_out: opt.JunitOut = None,
    badge_out: opt.BadgeOut = None,
    no_oracle_cache: opt.NoOracleCache = False,
) -> None:
    """Fuzz a candidate for a wall-clock budget: generator tasks on a Dask cluster, findings merged into one
    report and saved to a shared example database."""
    seconds = parse_duration(budget, "--budget")
    if workers is not None and scheduler is not None:
        warn("--workers ignored: the cluster of --scheduler has the workers it has")
    spec = candidate
    path = report if report is not None else Path("reports") / f"{spec.report_id}.campaign.jsonl"
    database = example_database if example_database is not None else str(path.with_suffix(".examples"))
    options = Options(candidate=spec, oracle=oracle_spec(oracle), surfaces=surface, profile=profile, seed=seed,
                      timeout=timeout, example_database=database, oracle_cache=not no_oracle_cache)
    plan = make_plan(options, budget=seconds, report=path, task_examples=task_examples,
                     workers=None if scheduler else workers, scheduler=scheduler, connect_timeout=connect_timeout)
    said = (f"interrupted: the findings so far are in {path} (no footer) and in the example database {database}, "
            "where the next campaign, or certify --example-database, replays them first")
    try:
        forced = f"{said}; the campaign did not end within {interrupt.GRACE_SECONDS:g}s: its processes were killed"
        with interrupt.bounded(lambda: log(forced)):
            run = engine.run(plan, log=log, on_finding=LineProgress(console).case)
    except KeyboardInterrupt:
        log(said)
        raise typer.Exit(interrupt.INTERRUPTED) from None
    print_problems(Problems.of(run.findings))
    named = Party(spec=spec.text, implementation=run.candidate)
    print_tables(run.tally, named, run.oracle_spec)
    print_verdict(named, run.tally, run.footer.conforms, path)
    if run.findings:
        out.print(f"they replay first in: {command('certify', '-c', spec.text, '--example-database', database)}",
                  highlight=False, markup=False)
    opt.ReportOutputs(markdown_out, junit_out, badge_out).write(path)
    raise typer.Exit(0 if run.footer.conforms else 1)
