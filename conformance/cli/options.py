"""Options several commands share: the run options spelt from their one declaration
(:mod:`conformance.run.flags`), the report outputs as one group."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from conformance.connection.connectors import parse
from conformance.connection.spec import Spec
from conformance.core import surfaces
from conformance.errors import HarnessError, OptionError
from conformance.report import badge, junit, markdown
from conformance.report.reader import Overview, ReportFile
from conformance.run.flags import FLAGS

OUTPUTS = "Report outputs"


def option(name: str, **settings: Any) -> Any:
    """The typer option of a run option, from its one declaration (:data:`conformance.run.flags.FLAGS`): its
    names, help and bounds; ``settings`` adds what only the command line has (a default in words, a parser, a help
    that names what the command knows)."""
    flag = FLAGS[name]
    if flag.minimum is not None and flag.above:
        settings["callback"] = _above(flag.minimum)
    elif flag.minimum is not None:
        settings["min"] = flag.minimum
    if flag.default is not None:
        settings.setdefault("show_default", flag.default)
    first, *others = flag.names  # with Annotated, typer takes the names where the default would go
    settings.setdefault("help", flag.help)
    return typer.Option(first, *others, **settings)


def _above(minimum: float) -> Callable[[float], float]:
    def check(value: float) -> float:
        if value <= minimum:
            raise typer.BadParameter(f"{value:g} is not above {minimum:g}.")
        return value

    return check


def existing(name: str, *, folder: bool = False) -> Callable[[typer.Context, typer.CallbackParam, Path | None],
                                                             Path | None]:
    """The check of a path option that names something to read (``--NAME``): set, on the command line or in the
    config file, it must be there, or the command stops with an error naming the option and the path rather than
    going on without it."""
    kind = "folder" if folder else "file"

    def check(ctx: typer.Context, param: typer.CallbackParam, value: Path | None) -> Path | None:
        if value is not None and not (value.is_dir() if folder else value.is_file()):
            source = ctx.get_parameter_source(param.name) if param.name is not None else None
            where = " (the config file's value)" if getattr(source, "name", None) == "DEFAULT_MAP" else ""
            raise OptionError(name, f"{value}: {'not a' if value.exists() else 'no such'} {kind}{where}")
        return value

    return check


def _spec(value: str | Spec) -> Spec:
    """A candidate spec, parsed where the command line is read: the command is given a Spec."""
    return value if isinstance(value, Spec) else parse(value)


def _known_surfaces(names: list[str] | None) -> list[str] | None:
    """Every command that takes --surface refuses a name that is no surface, and lists those there are."""
    unknown = [name for name in names or [] if name not in surfaces.SURFACES]
    if unknown:
        raise typer.BadParameter(f"unknown surface {', '.join(map(repr, unknown))}; known: "
                                 + ", ".join(sorted(surfaces.SURFACES)))
    return names


def whole_jobs() -> str:
    """The surfaces whose inputs are whole jobs, one to a request (a batch of one), from the registry; in words
    when the registry cannot be read (a broken entry point), which the command then reports as it runs."""
    try:
        return ", ".join(sorted(surfaces.whole_job()))
    except HarnessError:
        return "the surfaces that send one request at a time"


Candidate = Annotated[Spec, option("candidate", parser=_spec, metavar="SPEC")]
CandidateIfGiven = Annotated[Spec | None, option("candidate", parser=_spec, metavar="SPEC")]  # a default elsewhere
Oracle = Annotated[str, option("oracle")]
Surfaces = Annotated[list[str] | None, option("surface", callback=_known_surfaces)]
CasesRoot = Annotated[Path | None, option("cases", callback=existing("cases", folder=True))]
CaseGlobs = Annotated[list[str] | None, option("case")]
Timeout = Annotated[float, option("timeout")]
TimeoutMultiplier = Annotated[float, option("timeout-multiplier")]
BrokenAfter = Annotated[int, option("broken-after")]
ValidateProtocol = Annotated[bool, option("validate-protocol")]
NanPolicyName = Annotated[str | None, option("nan-policy")]
Expectations = Annotated[Path | None, option("expectations", callback=existing("expectations"))]
Profile = Annotated[str, option("profile")]
Seed = Annotated[int | None, option("seed")]
MaxExamples = Annotated[int | None, option("max-examples")]
ExampleDatabase = Annotated[str | None, option("example-database")]
Observations = Annotated[Path | None, option("observations")]
NoOracleCache = Annotated[bool, option("no-oracle-cache")]
NoInputCache = Annotated[bool, option("no-input-cache")]
NoCases = Annotated[bool, option("no-cases")]
StrictWarnings = Annotated[bool, option("strict-warnings")]
NoGenerate = Annotated[bool, option("no-generate")]
HarborRelease = Annotated[str, typer.Option("--harbor", help="The harbor release.")]
MarkdownOut = Annotated[Path | None, option("markdown", rich_help_panel=OUTPUTS)]
JunitOut = Annotated[Path | None, option("junit", rich_help_panel=OUTPUTS)]
BadgeOut = Annotated[Path | None, option("badge", rich_help_panel=OUTPUTS)]
# Read by the command before its other options (cli.config.Configured), as the defaults of those the file gives.
ConfigFile = Annotated[Path | None, option("config", dir_okay=False)]
NoConfig = Annotated[bool, option("no-config")]



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
            text = markdown.summary(view, source=report)
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
