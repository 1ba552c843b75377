"""Commands that run a candidate: ``certify``, ``smoke``, ``combine`` (the parts of a sharded run)."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from conformance.cli import options as opt
from conformance.cli.console import (
    log,
    out,
    print_problems,
    print_tables,
    print_verdict,
    stdout_for_data,
    warn,
)
from conformance.cli.progress import ProgressMode, watcher_for
from conformance.connection.base import DEFAULT_TIMEOUT
from conformance.connection.breaker import DEFAULT_LIMIT
from conformance.connection.connectors import REFERENCE
from conformance.connection.smoke import smoke as run_smoke
from conformance.corpus import cases as case_corpus
from conformance.errors import UsageError
from conformance.report.problems import Problems
from conformance.report.reader import Report, read
from conformance.report.writer import dumps
from conformance.run import certification
from conformance.run import generate as generation
from conformance.run.plan import DEFAULT_ORACLE, Options, oracle_spec
from conformance.run.runner import RECORDED
from conformance.run.shards import Shard
from conformance.run.shards import combine as merge


def default_report(stem: str, shard: Shard | None, *, partial: bool = False) -> Path:
    """Where a report goes without --report: ``reports/STEM[.shard-I-of-N].jsonl``. A run writes it as
    ``....partial.jsonl`` under its spec's name, the one thing known before the candidate starts (and what
    --resume finds again), and a finished run moves it to the candidate's own name."""
    part = f".shard-{shard.index}-of-{shard.count}" if shard is not None else ""
    return Path("reports") / f"{stem}{part}{'.partial' if partial else ''}.jsonl"


def _ignored(ctx: typer.Context, oracle: str, no_generate: bool, case: list[str] | None) -> None:
    """Generation options given on the command line to a run that generates nothing: said, not silently dropped."""
    why = ("generated inputs need a live oracle (not --oracle recorded)" if oracle == RECORDED
           else "--no-generate" if no_generate else "--case selects cases only" if case else None)
    given = [f"--{name.replace('_', '-')}" for name in ("profile", "seed", "max_examples", "example_database")
             if getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"]
    if why and given:
        warn(f"{', '.join(given)} ignored: {why}")


def certify(
    ctx: typer.Context,
    candidate: opt.Candidate = REFERENCE,
    oracle: opt.Oracle = DEFAULT_ORACLE,
    surface: opt.Surfaces = None,
    case: opt.CaseGlobs = None,
    report: Annotated[Path | None, opt.option(
        "report", help="Where to write the JSONL report ('-': stdout, and the tables go to stderr).",
        show_default="reports/conformance-<name>-<version>.jsonl, named after the candidate's handshake when the "
                     "run ends; reports/<spec>.partial.jsonl while it runs, and for --resume")] = None,
    cases_root: opt.CasesRoot = None,
    timeout: opt.Timeout = DEFAULT_TIMEOUT,
    nan_policy_name: opt.NanPolicyName = None,
    profile: opt.Profile = generation.DEFAULT_PROFILE,
    seed: opt.Seed = None,
    max_examples: opt.MaxExamples = None,
    no_cases: opt.NoCases = False,
    no_generate: opt.NoGenerate = False,
    expectations: opt.Expectations = None,
    markdown_out: opt.MarkdownOut = None,
    junit_out: opt.JunitOut = None,
    badge_out: opt.BadgeOut = None,
    timeout_multiplier: opt.TimeoutMultiplier = 1.0,
    validate_protocol: opt.ValidateProtocol = False,
    broken_after: opt.BrokenAfter = DEFAULT_LIMIT,
    resume: Annotated[bool, opt.option("resume")] = False,
    shard: Annotated[Shard | None, opt.option("shard", parser=Shard.parse)] = None,
    example_database: opt.ExampleDatabase = None,
    observations: opt.Observations = None,
    progress: Annotated[ProgressMode, opt.option("progress")] = ProgressMode.AUTO,
    no_oracle_cache: opt.NoOracleCache = False,
    no_input_cache: opt.NoInputCache = False,
    strict_warnings: opt.StrictWarnings = False,
    oracle_processes: Annotated[int, opt.option(
        "oracle-processes", help=f"Oracle processes that run whole-job cases ({opt.whole_jobs()}) at once; the "
                                 "extra ones start when such cases come.")] = 1,
    config: opt.ConfigFile = None,  # read before the other options, which it gives defaults (cli.config)
    no_config: opt.NoConfig = False,
) -> None:
    """Certify a candidate against the oracle: the declared cases, then generated inputs."""
    outputs = opt.ReportOutputs(markdown_out, junit_out, badge_out)
    report_to_stdout = report is not None and str(report) == "-"
    if report_to_stdout and (outputs.to_stdout or resume):
        raise UsageError("--report - is the report on stdout: it goes with neither --markdown - nor --resume")
    _ignored(ctx, oracle, no_generate, case)
    options = Options(
        candidate=candidate, oracle=oracle_spec(oracle), surfaces=surface, case_globs=case, cases_root=cases_root,
        timeout=timeout, nan_policy=nan_policy_name, profile=profile, seed=seed, max_examples=max_examples,
        no_cases=no_cases, no_generate=no_generate, expectations=expectations,
        timeout_multiplier=timeout_multiplier, validate_protocol=validate_protocol, broken_after=broken_after,
        resume=resume, shard=shard, example_database=example_database, oracle_cache=not no_oracle_cache,
        input_cache=not no_input_cache, oracle_processes=oracle_processes, strict_warnings=strict_warnings,
        observations=observations)
    with contextlib.ExitStack() as stack:
        if report_to_stdout:  # written to a file as always (flushed line by line), then sent to stdout whole
            path = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="conformance-report-"))) / "r.jsonl"
        else:
            path = report if report is not None else default_report(options.candidate.report_id, options.shard,
                                                                    partial=True)
        stack.enter_context(stdout_for_data(report_to_stdout or outputs.to_stdout))
        try:
            run = certification.certify(options, path, log=log, watcher=watcher_for(progress))
        except KeyboardInterrupt:
            log(f"interrupted: the report so far is in {path} (no footer); the same command with "
                "--resume goes on from it")
            raise typer.Exit(130) from None
        if report is None:  # the run is over: its report takes the candidate's own name
            path = path.replace(default_report(run.candidate.file_stem, options.shard))
        print_problems(Problems.of(run.records), report=None if report_to_stdout else path)
        print_tables(run.tally, run.candidate, run.oracle_spec)
        print_verdict(run.candidate, run.tally, run.conforms, Path("-") if report_to_stdout else path)
        outputs.write(path)
        if report_to_stdout:
            sys.stdout.write(path.read_text(encoding="utf-8"))
    raise typer.Exit(0 if run.footer.passes(options.strict_warnings) else 1)


def smoke(
    candidate: opt.Candidate,
    timeout: opt.Timeout = DEFAULT_TIMEOUT,
    timeout_multiplier: opt.TimeoutMultiplier = 1.0,
    cases_root: Annotated[Path | None, opt.option(
        "cases", help="Where the inputs it sends come from.", callback=opt.existing("cases", folder=True))] = None,
    config: opt.ConfigFile = None,  # read before the other options, which it gives defaults (cli.config)
    no_config: opt.NoConfig = False,
) -> None:
    """Check that a candidate speaks the protocol at all, before any scoring: handshake, one request a surface, stop."""
    inputs = case_corpus.first_inputs(cases_root or case_corpus.default_root())
    checks = run_smoke(candidate, inputs, timeout=timeout, timeout_multiplier=timeout_multiplier)
    for check in checks:
        mark = "[green]ok[/green]  " if check.ok else "[red]FAIL[/red]"
        out.print(f"{mark} {escape(check.step)}: {escape(check.message)}", highlight=False)
        if check.hint:
            out.print(f"       -> {escape(check.hint)}", highlight=False)
    failed = [c for c in checks if not c.ok]
    out.print(f"{candidate}: " + ("[green]speaks the protocol[/green]" if not failed else
                                  f"[red]{len(failed)} problem(s)[/red]"), highlight=False)
    raise typer.Exit(1 if failed else 0)


def combine(
    reports: Annotated[list[Path], typer.Argument(help="The shards' reports (certify --shard I/N), one per shard.")],
    out_path: Annotated[Path, typer.Option("--out", "-o", help="Where to write the combined report.")],
    markdown_out: opt.MarkdownOut = None,
    junit_out: opt.JunitOut = None,
    badge_out: opt.BadgeOut = None,
) -> None:
    """Merge the reports of a sharded run into one: every shard once, every case once, nothing missing."""
    parts = [(str(path), read(path)) for path in reports]
    head, lines, footer = merge(parts)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with out_path.open("w", encoding="utf-8") as handle:
        for line in [head, *lines, footer]:
            handle.write(dumps(line) + "\n")
    data = Report.of([head, *lines, footer])  # what was written, still in memory: not read back
    tally = data.tally()
    outputs = opt.ReportOutputs(markdown_out, junit_out, badge_out)
    with stdout_for_data(outputs.to_stdout):
        print_problems(data.problems(), report=out_path)
        print_tables(tally, head.candidate, head.oracle.spec, f" ({len(parts)} shards)")
        print_verdict(head.candidate, tally, footer.conforms, out_path)
        outputs.write(out_path)
    raise typer.Exit(0 if footer.conforms else 1)
