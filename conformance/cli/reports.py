"""Commands that read reports: ``summary``, ``diff``, ``site``, ``promote``, ``expectations update`` (and
``expectations check``, which reads the files that one writes)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from conformance.cli import options as opt
from conformance.cli.console import out, print_problems, print_tables, print_verdict, stdout_for_data
from conformance.corpus import cases as case_corpus
from conformance.corpus.promote import promote as promote_findings
from conformance.errors import UsageError
from conformance.report import diff as report_diff
from conformance.report.model import Header
from conformance.report.reader import Report, ReportFile, read
from conformance.run import expectation_writing
from conformance.run import expectations as expectation_files
from conformance.site import build as build_site


def summary(
    report: Path,
    markdown_out: opt.MarkdownOut = None,
    junit_out: opt.JunitOut = None,
    badge_out: opt.BadgeOut = None,
) -> None:
    """Summarise a JSONL report (even one cut short by a killed run), and derive its other formats."""
    data = ReportFile(report).overview()  # read as a stream: a report of any size is summarised in little memory
    tally = data.tally()
    outputs = opt.ReportOutputs(markdown_out, junit_out, badge_out)
    with stdout_for_data(outputs.to_stdout):
        print_problems(data.problems(), report=report)
        print_tables(tally, data.candidate, data.oracle_spec)
        if data.footer is None:
            out.print("[yellow]the report has no footer: the run did not finish[/yellow] (the same `certify` "
                      f"command with `--resume --report {escape(str(report))}` goes on from it)")
        print_verdict(data.candidate, tally, tally.conforms and data.footer is not None, report)
        outputs.write(report, data)
    raise typer.Exit(0 if tally.conforms and data.footer is not None else 1)


def diff(
    a: Annotated[Path, typer.Argument(help="The earlier report (e.g. the oracle's release certified).")],
    b: Annotated[Path, typer.Argument(help="The later report.")],
    markdown_out: Annotated[Path | None, typer.Option(
        "--markdown", help="Also write the changes as Markdown here.", rich_help_panel=opt.OUTPUTS)] = None,
    json_out: Annotated[Path | None, typer.Option(
        "--json", help="Also write the changes as JSON here.", rich_help_panel=opt.OUTPUTS)] = None,
) -> None:
    """Compare two reports by case id: new divergences, fixed ones, changed classes, cases only in one.

    Exit status 1 when B has a divergence A has not, or one of another kind; when B lacks a case A has; or when
    either run did not finish. 2 for a report that cannot be read. Reports of two comparator versions are said
    to be so (a class may have changed with the comparator), and fail nothing of themselves.
    """
    first, second = report_diff.Side.of(ReportFile(a).lines()), report_diff.Side.of(ReportFile(b).lines())
    changes = report_diff.diff(first, second)
    notes = report_diff.caveats(changes, first, second, f"A ({a})", f"B ({b})")
    said = notes + report_diff.remarks(first, second, f"A ({a})", f"B ({b})")
    table = Table(title=f"{a} -> {b}")
    for name in ("surface", "id", "change", "A", "B"):
        table.add_column(name, overflow="fold")
    for change in changes:
        table.add_row(change.surface, change.id, change.kind, change.before, change.after)
    if changes:
        out.print(table)
    counts = {k: sum(c.kind == k for c in changes) for k in report_diff.KINDS}
    out.print(", ".join(f"{n} {k}" for k, n in counts.items()), highlight=False)
    for note in said:
        out.print(f"[yellow]{escape(note)}[/yellow]", highlight=False)
    if markdown_out is not None:
        markdown_out.write_text(report_diff.markdown(changes, str(a), str(b), said), encoding="utf-8")
    if json_out is not None:
        json_out.write_text(json.dumps({"a": str(a), "b": str(b), "counts": counts,
                                        "finished": {"a": first.finished, "b": second.finished},
                                        "notes": said, "changes": [c.to_json() for c in changes]}, indent=2) + "\n")
    raise typer.Exit(1 if notes or any(c.kind in report_diff.REGRESSIONS for c in changes) else 0)


def site(
    reports: Annotated[list[Path], typer.Argument(
        help="JSONL reports: certify reports of candidates (several of one candidate make its trend), gate reports "
             "of harbor releases.", show_default=False)],
    out_dir: Annotated[Path, typer.Option(
        "--out", "-o", help="The folder the site is written to (new, empty, or a site written before).")],
    cases_root: opt.CasesRoot = None,
) -> None:
    """Build a static site from reports: a matrix of candidates and releases by surface, a page per candidate
    (failures first, filters, both sides, float bits) and per harbor release (what changed, and why).

    It needs no server and no network: open OUT/index.html. Exit status 2 for a report that cannot be read (the
    error names its file and line); nothing is written then.
    """
    written = build_site(reports, out_dir, cases_root)
    out.print(f"wrote {len(written)} page(s) to {escape(str(out_dir))}; open {escape(str(out_dir / 'index.html'))}",
              highlight=False)


def promote(report: Path, cases_root: opt.CasesRoot = None) -> None:
    """Write a report's generated divergences as cases (cases/<surface>/generated.yaml)."""
    root = cases_root or case_corpus.default_root()
    data = read(report)
    results = promote_findings(data, root)
    if not results:
        out.print("no generated divergences in the report", highlight=False)
    for item in results:
        where = f"-> {item.file}" if item.file else f"skipped: {item.reason}"
        out.print(f"{item.case_id} {where}", highlight=False)


def _run_date(report: Path, data: Report) -> tuple[Header, date]:
    """A report's header and the date of its run; UsageError when the report has neither."""
    head = data.header
    if head is None:
        raise UsageError(f"{report}: the report has no header: the date of its run is unknown")
    try:
        return head, head.started_on
    except ValueError:
        raise UsageError(f"{report}:1: started_at {head.started_at!r} is no ISO date and time") from None


def expectations_update(
    report: Annotated[Path, typer.Argument(help="The report whose divergences the file should list.")],
    file: Annotated[Path | None, typer.Option(
        "--file", "-f", help="The expectation file.", show_default="the one the report was run with")] = None,
) -> None:
    """Write or refresh an expectation file from a report: every divergence listed, reasons kept.

    An existing file is changed in place: its comments, and the order of its keys and entries, stay. Each
    entry the run saw gets last_seen = the run's date (its header's started_at); a new one first_seen too.
    Entries of what the run did not cover (a surface not run) are kept untouched, as unobserved; those it
    covered and did not see are pruned (fixed). expires and reasons are never changed.
    """
    data = read(report)
    head, on = _run_date(report, data)
    target = file or (Path(head.expectations) if head.expectations else None)
    if target is None:
        raise UsageError("the report was run without --expectations: say which file to write with --file")
    previous = expectation_files.load(target) if target.is_file() else None
    coverage = expectation_files.Coverage.of_report(head, data.records, data.generated, data.footer is not None)
    document, changes = expectation_files.refreshed(
        data.records, coverage, on, previous, head.candidate.spec, head.oracle.spec)
    if previous is None:
        text = expectation_writing.dump(document)
    else:  # the file's comments and order are the user's: changed in place, not written anew
        text = expectation_writing.rewritten(target.read_text(encoding="utf-8"), previous, document)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    for kind, ids in (("added", changes.added), ("updated", changes.updated), ("pruned", changes.pruned),
                      ("expired", changes.expired)):
        for case_id in ids:
            out.print(f"{kind} {case_id}", highlight=False)
    out.print(f"{target}: {len(document.divergences)} known divergence(s) on {on}; {len(changes.kept)} kept, "
              f"{len(changes.stamped)} stamped, {len(changes.added)} added, {len(changes.updated)} updated, "
              f"{len(changes.pruned)} pruned (fixed), {len(changes.unobserved)} unobserved, "
              f"{len(changes.expired)} expired", highlight=False)


def expectations_check(
    files: Annotated[list[Path], typer.Argument(help="The expectation files.", show_default=False)],
    report: Annotated[Path | None, typer.Option(
        "--report", "-r", help="Also say, by this report's run, which entries have expired and which it did not "
                               "cover (unobserved).", callback=opt.existing("report"))] = None,
) -> None:
    """Check expectation files (their keys and values, case ids and dates, an id listed twice), say for a
    pre-commit hook.

    Prints each problem as FILE:LINE: PROBLEM; exit status 2 when there is any. With --report, each entry past
    its expires date on the report's run date, and each the run did not cover, gets a line too (they are no
    problem of the file: the exit status stays).
    """
    run = None
    if report is not None:
        data = read(report)
        head, on = _run_date(report, data)
        run = on, expectation_files.Coverage.of_report(head, data.records, data.generated, data.footer is not None)
    broken = 0
    for path in files:
        document, problems = expectation_files.checked(path)
        for problem in problems:
            out.print(problem, markup=False, highlight=False)
        if document is not None:
            out.print(f"{path}: {len(document.divergences)} known divergence(s)", markup=False, highlight=False)
            if run is not None:
                _print_by_run(path, document, *run)
        broken += document is None
    raise typer.Exit(2 if broken else 0)


def _print_by_run(path: Path, document: expectation_files.ExpectationFile, on: date,
                  coverage: expectation_files.Coverage) -> None:
    lines = expectation_files.entry_lines(path)
    for entry in document.divergences:
        where = f"{path}:{lines.get(entry.key, 1)}: [{entry.key}]"
        if entry.expired_on(on):
            out.print(f"{where} expired on {entry.expires} (the run is of {on})", markup=False, highlight=False)
        if not coverage.covers(entry.id):
            out.print(f"{where} unobserved: the run did not cover it", markup=False, highlight=False)
