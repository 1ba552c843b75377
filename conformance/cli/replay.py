"""``conformance replay``: a report's findings, or an example database's, run again after a fix."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from conformance.cli import options as opt
from conformance.cli.console import log, out, shortened
from conformance.connection.base import DEFAULT_TIMEOUT
from conformance.connection.connectors import parse
from conformance.connection.spec import Spec
from conformance.core import surfaces
from conformance.errors import OptionError, UsageError
from conformance.run import replay as replaying
from conformance.run.certification import connect_oracle
from conformance.run.plan import DEFAULT_ORACLE, oracle_spec
from conformance.run.runner import RECORDED, Oracle

STYLES = {replaying.Verdict.FIXED: "green", replaying.Verdict.FAILING: "red", replaying.Verdict.FLAKY: "yellow",
          replaying.Verdict.ERROR: "magenta"}


def replay(
    ctx: typer.Context,
    report: Annotated[Path | None, typer.Argument(
        help="A JSONL report: each case line that does not conform is replayed, against the oracle's answer the "
             "line holds (no oracle is started).", show_default=False)] = None,
    candidate: opt.CandidateIfGiven = None,
    example_database: opt.ExampleDatabase = None,
    oracle: opt.Oracle = DEFAULT_ORACLE,
    surface: opt.Surfaces = None,
    runs: Annotated[int, typer.Option(min=1, help="Runs of each finding.")] = replaying.DEFAULT_RUNS,
    timeout: opt.Timeout = DEFAULT_TIMEOUT,
    no_oracle_cache: opt.NoOracleCache = False,
    json_out: Annotated[Path | None, typer.Option(
        "--json", help="Also write the verdicts as JSON here (schema: replay.json).", rich_help_panel=opt.OUTPUTS)
    ] = None,
) -> None:
    """After a fix: replay a report's findings (or an example database's) several times each, and say which are
    fixed, failing, flaky, or could not be run.

    The candidate is the report's unless --candidate names another; with --example-database, --candidate is
    needed, the oracle answers (--oracle), and each fixed finding is deleted from the database. Exit status 0
    when every finding is fixed, 1 when any is failing, flaky or an error, 2 on a usage error.
    """
    if (report is None) == (example_database is None):
        raise UsageError("give a REPORT or --example-database DB (one of them)")
    oracle_given = getattr(ctx.get_parameter_source("oracle"), "name", None) == "COMMANDLINE"
    with contextlib.ExitStack() as stack:
        if report is not None:
            if oracle_given:
                raise UsageError("--oracle goes with --example-database: a report holds the oracle's answers")
            source = replaying.from_report(report).within(surface)
            spec = candidate if candidate is not None else _reported(report, source.candidate)
            database, live = None, Oracle(None)
        else:
            assert example_database is not None
            if candidate is None:
                raise UsageError("--example-database needs --candidate: a database does not name one")
            from conformance.run.examples import REDIS, open_database  # imports Hypothesis

            if oracle == RECORDED:
                raise UsageError("--oracle recorded has no answer for a database's findings: they need a live oracle")
            if not example_database.startswith(REDIS) and not Path(example_database).expanduser().is_dir():
                # opening would make one: a database to read from that is not there is a mistake
                raise OptionError("example-database", f"{example_database}: no such folder")
            database, spec = open_database(example_database), candidate
            source = replaying.from_database(example_database, database, surface or sorted(surfaces.SURFACES))
            live = stack.enter_context(connect_oracle(oracle_spec(oracle), log, cache=not no_oracle_cache)
                                       if source.findings else Oracle(None))
        result = replaying.against(source, spec, live, runs, timeout=timeout, database=database, log=log)
    _print(result, database is not None)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    raise typer.Exit(0 if result.all_fixed else 1)


def _reported(report: Path, text: str | None) -> Spec:
    """The candidate the report was made of."""
    if text is None:
        raise UsageError(f"{report}: no header names its candidate; give --candidate")
    try:
        return parse(text)
    except UsageError as e:
        raise e.within(f"{report}: its candidate {text!r} (give another with --candidate)") from None


def _print(result: replaying.Replay, from_database: bool) -> None:
    if not result.findings:
        out.print(f"nothing to replay: {escape(result.source)} holds no finding", highlight=False)
    else:
        table = Table(title=f"{result.candidate.described}: {result.source} replayed, {result.runs} run(s) each")
        for name in ("id", "surface", "verdict", "runs", "first difference"):
            table.add_column(name, overflow="fold", no_wrap=name != "first difference")  # a difference wraps first
        for finding in result.findings:
            style = STYLES[finding.verdict]
            runs = ", ".join(run.outcome for run in finding.runs) or "—"
            said = finding.reason if finding.verdict is replaying.Verdict.ERROR else finding.difference
            table.add_row(escape(finding.id), finding.surface, f"[{style}]{finding.verdict.upper()}[/{style}]",
                          runs, escape(shortened(said, 200)))
        out.print(table)
    counts = ", ".join(f"{result.count(verdict)} {verdict}" for verdict in replaying.Verdict)
    out.print(f"{escape(result.candidate.described)}: {counts}", highlight=False)
    if from_database:
        kept = len(result.findings) - result.removed
        out.print(f"removed {result.removed} fixed finding(s) from the example database {escape(result.source)}; "
                  f"{kept} kept", highlight=False)
        if result.passed_over:
            out.print(f"{result.passed_over} saved finding(s) outside the candidate's scope or the suite's: "
                      "not replayed, kept", highlight=False)
