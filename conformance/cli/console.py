"""What the command prints, in one place: errors, a run's problems, its tables, its verdict.

Tables and verdicts go to stdout; logs, progress and errors to stderr.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from conformance.core.compare import UlpBucket
from conformance.core.features import Gate
from conformance.core.outcomes import Outcome
from conformance.errors import HarnessError, OptionError
from conformance.report.commands import command as command  # re-exported: the commands print with it
from conformance.report.commands import repro
from conformance.report.markdown import shown_outcomes
from conformance.report.model import CaseLine, Party, result_text, verdict
from conformance.report.problems import Problems
from conformance.report.writer import Tally

# Rich lays out for 80 columns when it writes to no terminal: a CI log's tables would be cut to fit. Unless
# COLUMNS says otherwise, such output gets this width.
LOG_WIDTH = 120


def _console(*, stderr: bool) -> Console:
    made = Console(stderr=stderr, soft_wrap=True)
    if not made.is_terminal and "COLUMNS" not in os.environ:
        made.width = max(made.width, LOG_WIDTH)
    return made


console = _console(stderr=True)
out = _console(stderr=False)


@contextlib.contextmanager
def stdout_for_data(reserved: bool) -> Iterator[None]:
    """While ``reserved``, what the command would print for a reader goes to stderr: stdout carries only the
    data asked for with ``-`` (a report, a Markdown summary), so it can be piped."""
    if not reserved:
        yield
        return
    # rich keeps None for "sys.stdout at each write" (a test runner swaps sys.stdout): put back what was there.
    previous = out._file
    out.file = sys.stderr
    try:
        yield
    finally:
        out._file = previous


def warn(message: str) -> None:
    console.print(f"[yellow]warning:[/yellow] {escape(message)}", highlight=False)


def log(message: str) -> None:
    console.print(message, highlight=False)


def print_error(error: HarnessError) -> None:
    """An error of the harness, as the command's entry point ends with it: its details (e.g. each corpus
    problem), each on a line, then ``error: MESSAGE``."""
    for line in error.details:
        console.print(line, markup=False, highlight=False)
    text = f"--{error.option}: {error}" if isinstance(error, OptionError) else str(error)
    console.print(f"[red]error:[/red] {escape(text)}", markup=True, highlight=False)


def outcome_table(tally: Tally, title: str) -> Table:
    shown = shown_outcomes(tally)
    table = Table(title=title)
    table.add_column("surface", no_wrap=True, min_width=14)
    for name in ("cases", *shown):
        table.add_column(name.replace("protocol-error", "protocol"), justify="right", no_wrap=True)
    for surface, counts in sorted(tally.by_surface.items()):
        total = sum(counts.values())
        table.add_row(surface, str(total), *(str(counts.get(n, 0)) for n in shown))
    table.add_row("[b]all[/b]", str(tally.total), *(str(tally.outcomes.get(n, 0)) for n in shown))
    return table


def generated_table(tally: Tally) -> Table:
    table = Table(title="generated inputs")
    for name in ("surface", "profile", "seed", "inputs run", "divergences"):
        table.add_column(name, justify="left" if name in ("surface", "profile") else "right", no_wrap=True)
    for surface, line in sorted(tally.generated.items()):
        found = (str(len(line.divergences)) + (" + error" if line.error else "")
                 + (f" ({line.skipped} skipped)" if line.skipped else ""))
        seed = _seeds(line.seed)
        table.add_row(surface, line.profile, seed, str(line.inputs_run), found)
    return table


def ulp_table(tally: Tally) -> Table:
    """Each surface's float mismatches by ULP distance, and the worst of them."""
    table = Table(title="float mismatches by ULP distance")
    table.add_column("surface", no_wrap=True)
    for bucket in UlpBucket:
        table.add_column(bucket.value, justify="right", no_wrap=True)
    table.add_column("worst", overflow="fold")
    for surface, distances in sorted(tally.distances.items()):
        summary = distances.summary()
        table.add_row(escape(surface), *(str(n) for n in summary.buckets.values()), escape(summary.worst.text()))
    return table


def _seeds(seed: int | list[int], shown: int = 3) -> str:
    """A generator's seed, or a merged one's seeds: a campaign has one per task, the report lists them all."""
    if not isinstance(seed, list):
        return str(seed)
    more = f", … ({len(seed)} seeds)" if len(seed) > shown else ""
    return ", ".join(map(str, seed[:shown])) + more


def shortened(text: str, limit: int = 300) -> str:
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _case(record: CaseLine, indent: str = "    ", report: Path | None = None) -> None:
    """One problem: its input, both sides, every mismatch (bits and ULPs with floats), its detail; with the
    ``report`` it is in, the command that reproduces it."""
    def say(text: str) -> None:
        out.print(indent + text, highlight=False, markup=False)

    if record.input is not None:
        say(f"input:     {shortened(repr(record.decoded_input))}")
    if record.oracle is not None or record.candidate is not None:
        say(f"oracle:    {shortened(result_text(record.oracle))}")
        say(f"candidate: {shortened(result_text(record.candidate))}")
    if record.candidate_again is not None:
        say(f"again:     {shortened(result_text(record.candidate_again))}  (the same input, asked once more)")
    for m in record.mismatches:
        say(m.describe())
    if record.stale:
        say("the live oracle disagrees with the case's recorded result:")
        for m in record.recording_mismatches:
            say(m.describe("recorded", "oracle"))
    if record.detail:
        say(record.detail.strip().replace("\n", "\n" + indent)[:2000])
    if report is not None and record.reproducible:
        say(f"repro:     {repro(report, record.id)}")


def print_problems(found: Problems, per_group: int = 10, others_limit: int = 20, report: Path | None = None) -> None:
    """Failures first, grouped by surface and mismatch class; the other problems; then skips, counted. With the
    ``report`` they are in, each one's repro command."""
    if found.failures:
        out.print(f"[b]{found.failing} failing case(s)[/b], by surface and mismatch class:", highlight=False)
    for surface, groups in found.failures.items():
        for cls, lines in groups.items():
            count = found.failing_in(surface, cls)
            out.print(f"[b]{escape(surface)}[/b] — {escape(cls)}: {count} case(s)", highlight=False)
            for record in lines[:per_group]:
                out.print(f"  [b]FAIL[/b] {escape(record.id)}", highlight=False)
                _case(record, report=report)
            if count > per_group:
                out.print(f"  ... and {count - per_group} more {escape(cls)} failure(s) of {escape(surface)} "
                          "in the report", highlight=False)
    if found.other_count:
        out.print(f"[b]{found.other_count} other problem(s)[/b]:", highlight=False)
    for record in found.others[:others_limit]:
        named = f" ({record.protocol_error})" if record.protocol_error else ""
        label = "STALE RECORDING" if record.conforms else record.outcome.upper()
        out.print(f"  [b]{escape(label)}[/b] {escape(record.id)}{named}", highlight=False)
        _case(record, report=report)
    if found.other_count > others_limit:
        out.print(f"  ... and {found.other_count - others_limit} more in the report", highlight=False)
    if found.skips:
        out.print(f"[b]{found.skipped} case(s) skipped[/b] (they count against conformance):", highlight=False)
        for (surface, reason), count in sorted(found.skips.items()):
            out.print(f"  {escape(surface)}: {count} — {escape(reason)}", highlight=False)


def print_tables(tally: Tally, candidate: Party, oracle: str, note: str = "") -> None:
    """The outcome table, titled ``CANDIDATE vs ORACLE``, and the generated inputs' table."""
    if tally.total:
        out.print(outcome_table(tally, escape(f"{candidate.display_name} vs {oracle}{note}")))
    if tally.generated:
        out.print(generated_table(tally))
    if tally.distances:
        out.print(ulp_table(tally))
    for error in tally.generator_errors:
        out.print(f"[red]generator error[/red] {error}", highlight=False)
    for short in tally.feature_shortfalls:
        label = "[red]feature shortfall[/red]" if short.gate is Gate.FAIL else "[yellow]feature warning[/yellow]"
        out.print(f"{label} {escape(short.describe())}", highlight=False)


def print_verdict(candidate: Party, tally: Tally, conforms: bool, path: Path) -> None:
    warned = tally.warnings()
    said = escape(verdict(conforms, warned))
    colour = "red" if not conforms else "yellow" if warned else "green"
    verdict_text = f"[{colour}]{said}[/{colour}]"
    counts = [f"{tally.outcomes[Outcome.PASS]}/{tally.total} cases pass"] if tally.total else []
    if tally.outcomes[Outcome.XFAIL]:
        counts.append(f"{tally.outcomes[Outcome.XFAIL]} known divergence(s)")
    if tally.generated:
        counts.append(f"{len(tally.findings)} generated divergence(s)")
    if tally.stale_expectations:
        counts.append(f"{len(tally.stale_expectations)} stale expectation(s): {', '.join(tally.stale_expectations)}")
    if tally.expired_expectations:
        counts.append(f"{len(tally.expired_expectations)} expired expectation(s), their divergences counted as new: "
                      f"{', '.join(tally.expired_expectations)}")
    if tally.protocol_errors:
        counts.append("protocol errors: "
                      + ", ".join(f"{n} {name}" for name, n in sorted(tally.protocol_errors.items())))
    for problem in tally.candidate_problems:
        counts.append(f"the candidate failed to {problem.stage} ({problem.outcome})")
    if tally.recorded_answers:
        counts.append(f"{tally.recorded_answers} oracle answer(s) from the suite's recordings")
    if tally.cached_answers:
        counts.append(f"{tally.cached_answers} oracle answer(s) from the cache")
    if tally.failing_shortfalls:
        counts.append("features drawn below their minimum: "
                      + "; ".join(short.describe() for short in tally.failing_shortfalls))
    out.print(f"{escape(candidate.described)}: {verdict_text} ({escape(', '.join(counts))}); report: "
              f"{escape(str(path))}")
    for warning in warned:
        out.print(f"  [yellow]warning[/yellow] {escape(warning.text())} — {escape(warning.name.hint)}", highlight=False)
    if tally.findings:
        out.print(f"make them cases with: {command('promote', str(path))}", highlight=False, markup=False)
