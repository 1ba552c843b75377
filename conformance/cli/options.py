"""Options several commands share, declared once; the report outputs as one group."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from conformance.report import badge, junit, markdown
from conformance.report.reader import Overview, ReportFile

OUTPUTS = "Report outputs"

Candidate = Annotated[str, typer.Option(
    "--candidate", "-c", help="reference, module:attr, exec:COMMAND, harbor==X or an entry-point name.")]
def _known_surfaces(names: list[str] | None) -> list[str] | None:
    """Every command that takes --surface refuses a name that is no surface, and lists those there are."""
    from conformance.core import surfaces

    unknown = [name for name in names or [] if name not in surfaces.SURFACES]
    if unknown:
        raise typer.BadParameter(f"unknown surface {', '.join(map(repr, unknown))}; known: "
                                 + ", ".join(sorted(surfaces.SURFACES)))
    return names


Surfaces = Annotated[list[str] | None, typer.Option(
    "--surface", "-s", help="Only these surfaces (repeatable).", callback=_known_surfaces)]
CasesRoot = Annotated[Path | None, typer.Option("--cases", help="The case corpus folder.")]
Timeout = Annotated[float, typer.Option(help="Seconds a candidate may take per request.")]
TimeoutMultiplier = Annotated[float, typer.Option(
    min=0.01, help="Scale the candidate's request, start and stop timeouts (a slow runtime, a loaded machine).")]
HarborRelease = Annotated[str, typer.Option("--harbor", help="The harbor release.")]
NoOracleCache = Annotated[bool, typer.Option(
    "--no-oracle-cache", help="Ask the oracle every input: no answer from the oracle answer cache, none stored "
                              "(`conformance cache`).")]
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

    @property
    def to_stdout(self) -> bool:
        return self.markdown is not None and str(self.markdown) == "-"

    def write(self, report: Path, view: Overview | None = None) -> None:
        """Each format asked for, from the report on disk (``view``: its overview, when already read), read as a
        stream: the report is never whole in memory."""
        if not (self.markdown or self.junit or self.badge):
            return
        source = ReportFile(report)
        if self.markdown is not None or self.badge is not None:
            view = view if view is not None else source.overview()
        if self.markdown is not None and view is not None:
            text = markdown.summary(view)
            if str(self.markdown) == "-":
                sys.stdout.write(text + "\n")  # alone on stdout: the command's tables went to stderr
            else:
                _write(self.markdown, text)
        if self.junit is not None:
            junit.write(source, self.junit)
        if self.badge is not None and view is not None:
            _write(self.badge, json.dumps(badge.render(view), indent=2) + "\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
