"""Options several commands share, declared once; the report outputs as one group."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from conformance.cli.console import out
from conformance.report import badge, junit, markdown
from conformance.report.reader import read

OUTPUTS = "Report outputs"

Candidate = Annotated[str, typer.Option(
    "--candidate", "-c", help="reference, module:attr, exec:COMMAND, harbor==X or an entry-point name.")]
Surfaces = Annotated[list[str] | None, typer.Option("--surface", "-s", help="Only these surfaces (repeatable).")]
CasesRoot = Annotated[Path | None, typer.Option("--cases", help="The case corpus folder.")]
Timeout = Annotated[float, typer.Option(help="Seconds a candidate may take per request.")]
TimeoutMultiplier = Annotated[float, typer.Option(
    min=0.01, help="Scale the candidate's request, start and stop timeouts (a slow runtime, a loaded machine).")]
HarborRelease = Annotated[str, typer.Option("--harbor", help="The harbor release.")]
MarkdownOut = Annotated[Path | None, typer.Option(
    "--markdown", help="Also write a Markdown summary here ('-': stdout).", rich_help_panel=OUTPUTS)]
JunitOut = Annotated[Path | None, typer.Option("--junit", help="Also write JUnit XML here.", rich_help_panel=OUTPUTS)]
BadgeOut = Annotated[Path | None, typer.Option(
    "--badge", help="Also write a shields.io endpoint badge (JSON) here.", rich_help_panel=OUTPUTS)]



@dataclass(frozen=True)
class ReportOutputs:
    """The formats derived from a report, written after a run (or by ``summary``) from the report on disk."""

    markdown: Path | None = None
    junit: Path | None = None
    badge: Path | None = None

    def write(self, report: Path) -> None:
        if not (self.markdown or self.junit or self.badge):
            return
        data = read(report)
        if self.markdown is not None:
            text = markdown.summary(data)
            if str(self.markdown) == "-":
                out.print(text, markup=False, highlight=False)
            else:
                _write(self.markdown, text)
        if self.junit is not None:
            _write(self.junit, junit.render(data))
        if self.badge is not None:
            _write(self.badge, json.dumps(badge.render(data), indent=2) + "\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
