"""The ``conformance`` command: its command groups assembled, and how it exits.

Exit status: 0 everything conforms, 1 something diverges (or a run could not
finish), 2 a usage or configuration error (bad spec, broken corpus, no
oracle environment), 130 interrupted.

Commands raise the errors of :mod:`conformance.errors` where the mistake is
found; the command group below is the one place that prints them and turns
them into the exit status of their kind.
"""

from __future__ import annotations

import io
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from conformance import ORACLE_RELEASE, SUITE, __version__
from conformance.cli import cache, campaign, config, corpus, mutants, oracle, replay, reports, repro, run
from conformance.cli.console import out, print_error
from conformance.connection.protocol import PROTOCOL_VERSION
from conformance.core.compare import COMPARATOR_VERSION
from conformance.errors import HarnessError

HELP = {"help_option_names": ["-h", "--help"]}


class Commands(TyperGroup):
    """The command's root: an error of the harness raised by any command under it (its options' parsing
    included) is printed here, once, and ends the command with the exit status of its kind."""

    def invoke(self, ctx: Any) -> Any:  # typer's own click Context: the class is private to typer
        try:
            return super().invoke(ctx)
        except HarnessError as e:
            print_error(e)
            raise typer.Exit(e.exit_code) from None


app = typer.Typer(cls=Commands, add_completion=False, no_args_is_help=True, context_settings=HELP,
                  help="Certify a harbor scoring runner against harbor itself, case by case and bit for bit.")
cases_app = typer.Typer(no_args_is_help=True, context_settings=HELP, help="Inspect and check the case corpus.")
expectations_app = typer.Typer(no_args_is_help=True, context_settings=HELP,
                               help="Expectation files: a candidate's known divergences.")
cache_app = typer.Typer(no_args_is_help=True, context_settings=HELP,
                        help="The oracle answer cache and the stored inputs: harbor's answers and the generators' "
                             "inputs kept for the next run that asks the same.")
recordings_app = typer.Typer(no_args_is_help=True, context_settings=HELP,
                             help="The answers and ci inputs that ship with the suite (oracles/recordings/).")


def _version(asked: bool) -> None:
    if asked:
        out.print(f"{SUITE} {__version__} (protocol {PROTOCOL_VERSION}, comparator {COMPARATOR_VERSION}, "
                  f"oracle harbor=={ORACLE_RELEASE})", highlight=False)
        raise typer.Exit(0)


@app.callback()
def _options(
    version: Annotated[bool, typer.Option(
        "--version", "-V", callback=_version, is_eager=True, help="Print the suite's version and exit.")] = False,
) -> None:
    """Certify a harbor scoring runner against harbor itself, case by case and bit for bit."""
    # What a command prints may hold a candidate's text that no UTF-8 stream can encode (a lone surrogate):
    # shown as its escape, \ud800, as the report writes it, rather than ending the command.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


app.add_typer(cases_app, name="cases")
app.add_typer(expectations_app, name="expectations")
app.add_typer(cache_app, name="cache")
app.add_typer(recordings_app, name="recordings")

COMMANDS: list[tuple[typer.Typer, str, Callable[..., None]]] = [
    (app, "certify", run.certify),
    (app, "summary", reports.summary),
    (app, "combine", run.combine),
    (app, "campaign", campaign.campaign),
    (app, "diff", reports.diff),
    (app, "site", reports.site),
    (app, "gate", oracle.gate),
    (app, "lock", oracle.lock),
    (app, "promote", reports.promote),
    (app, "coverage", oracle.coverage),
    (app, "schemas", corpus.schemas),
    (app, "oracle", oracle.oracle),
    (app, "smoke", run.smoke),
    (app, "mutants", mutants.mutants),
    (app, "config", config.show),
    (cases_app, "list", corpus.cases_list),
    (cases_app, "check", corpus.cases_check),
    (cases_app, "record", corpus.cases_record),
    (expectations_app, "update", reports.expectations_update),
    (expectations_app, "check", reports.expectations_check),
    (cache_app, "info", cache.info),
    (cache_app, "clear", cache.clear),
    (recordings_app, "write", cache.recordings_write),
    (recordings_app, "check", cache.recordings_check),
    (recordings_app, "needed", cache.recordings_needed),
    (app, "replay", replay.replay),
    (app, "repro", repro.repro),
    (app, "check-reply", repro.check_reply),
]
for group, name, command in COMMANDS:
    group.command(name, cls=config.Configured if group is app and name in config.CONFIGURED else None)(command)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # SIGTERM (a cancelled CI job) unwinds like Ctrl-C: candidates stopped, report kept


def main() -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
