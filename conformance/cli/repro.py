"""Commands that reproduce one failure by hand, with no oracle: ``repro`` and ``check-reply``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from conformance.cli import options as opt
from conformance.cli.console import out
from conformance.connection.replies import HINTS
from conformance.corpus import cases as case_corpus
from conformance.report import reply_check, reproducer
from conformance.report.model import result_line, result_text

DEFAULT_OUT = Path("conformance-repro")


def _corpus_inputs(root: Path) -> Callable[[str], Any]:
    """A case's input by id, the corpus read on the first lookup (only a case that conformed needs it)."""
    found: dict[str, Any] = {}

    def lookup(case_id: str) -> Any:
        if not found:
            found.update((item.case.id, item.case.input) for item in case_corpus.load_corpus(root))
        return found.get(case_id)

    return lookup


def repro(
    report: Annotated[Path, typer.Argument(help="A JSONL report written by `conformance certify`.")],
    ids: Annotated[list[str] | None, typer.Argument(
        help="Case ids to reproduce.", show_default="every case of the report that does not conform")] = None,
    out_dir: Annotated[Path, typer.Option(
        "--out", "-o", help="The folder the reproducers are written to (made if need be).")] = DEFAULT_OUT,
    cases_root: opt.CasesRoot = None,
) -> None:
    """Write a reproducer of each failure of a report: NAME.jsonl, the protocol lines to pipe into the candidate,
    and NAME.json, what `conformance check-reply` judges its reply by. No oracle, no harbor, no rerun.

    Exit status 2 for a report that cannot be read (naming its file and line) or an id it does not hold.
    """
    written = reproducer.write(report, out_dir, ids or [], _corpus_inputs(cases_root or case_corpus.default_root()))
    if not written:
        out.print(f"every case of {escape(str(report))} conforms: nothing to reproduce", highlight=False)
        raise typer.Exit(0)
    table = Table(title=f"{len(written)} reproducer(s) in {out_dir}")
    for name in ("id", "outcome", "requests", "sidecar"):
        table.add_column(name, overflow="fold")
    for item in written:
        made = item.reproducer
        table.add_row(escape(made.id), str(made.outcome), escape(str(item.requests)), escape(str(item.sidecar)))
    out.print(table)
    out.print("run each against the candidate, then judge its reply:", highlight=False)
    for note in dict.fromkeys(item.reproducer.how.note for item in written if item.reproducer.how.note):
        out.print(f"  # {note}", highlight=False, markup=False)
    for item in written:
        how = item.reproducer.how
        out.print(f"  {how.run}", highlight=False, markup=False)
        out.print(f"  {how.check}", highlight=False, markup=False)


def check_reply(
    file: Annotated[Path, typer.Argument(help="A reproducer's sidecar (NAME.json, written by `conformance repro`).")],
    reply: Annotated[Path, typer.Argument(
        help="The candidate's stdout with NAME.jsonl on its stdin: its handshake, then its reply.")],
) -> None:
    """Judge a candidate's reply to a reproducer by the oracle's answer the sidecar keeps: as the harness reads a
    reply, with its comparator. Runs no oracle and needs no network.

    Exit status 0 when the reply conforms, 1 when it does not (a protocol error, an errored or skipped reply
    included), 2 for a sidecar or reply file that cannot be read.
    """
    made, judged = reply_check.judge(file, reply)

    def say(text: str) -> None:
        out.print(text, highlight=False, markup=False)

    say(f"{made.id} ({made.surface}), in the report: {made.outcome}")
    say(f"  oracle:    {result_text(made.oracle.result)}")
    if judged.actual is None:
        answer = judged.reply
        named = f" ({answer.error})" if answer.error is not None else ""
        say(f"  candidate: {answer.kind}{named}: {answer.detail}")
        hint = HINTS.get(str(answer.error or answer.kind))
        if hint:
            say(f"  -> {hint}")
    else:
        say(f"  candidate: {result_line(judged.actual).text()}")
        for mismatch in judged.mismatches:
            say(f"  {mismatch.describe()}")
    if judged.conforms:
        out.print("[green]the reply conforms[/green]", highlight=False)
        raise typer.Exit(0)
    out.print("[red]the reply does not conform[/red]", highlight=False)
    raise typer.Exit(1)
