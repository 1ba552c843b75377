"""``conformance cache``: what the oracle answer cache, the stored inputs and the parsed case files hold, and
clearing them;
``conformance recordings``: the answers and inputs that ship with the suite, written and checked."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from conformance import ORACLE_RELEASE
from conformance.cli import options as opt
from conformance.cli.console import log, out
from conformance.corpus import parsed
from conformance.oracle import answers
from conformance.run import recording, stored_inputs


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 100_000 else f"{count / 1e3:.1f} kB"


def info() -> None:
    """Where the oracle answer cache is, its size, and its answers by oracle and surface; then the stored inputs
    of generator runs with a fixed seed, by surface; then the case files kept parsed."""
    found = answers.info()
    out.print(f"oracle answer cache: {escape(str(found.folder))} ({_size(found.bytes)}, {found.entries} answer(s); "
              f"at most {answers.MAX_ENTRIES}, the oldest go first)", highlight=False)
    if found.problem:
        out.print(f"[red]unreadable[/red]: {escape(found.problem)} (`conformance cache clear` removes it)",
                  highlight=False)
    # A line per oracle, then one per surface: no table, whose cells a narrow terminal would wrap.
    for oracle, by_surface in sorted(found.by_oracle.items()):
        out.print(escape(oracle), highlight=False, soft_wrap=True)
        for surface, count in sorted(by_surface.items()):
            out.print(f"  {escape(surface)}: {count} answer(s)", highlight=False)
    inputs = stored_inputs.info()
    out.print(f"stored inputs: {escape(str(inputs.folder))} ({_size(inputs.bytes)}, {inputs.sequences} "
              "sequence(s) of generated inputs)", highlight=False)
    for surface, count in sorted(inputs.by_surface.items()):
        out.print(f"  {escape(surface)}: {count} sequence(s)", highlight=False)
    kept = parsed.info()
    out.print(f"parsed case files: {escape(str(parsed.folder()))} ({_size(kept.bytes)}, {kept.files} file(s))",
              highlight=False)


def clear() -> None:
    """Remove every stored oracle answer, stored input and parsed case file; the next run asks the oracle, draws
    and parses again."""
    found = answers.info()
    freed = answers.clear()
    out.print(f"removed {found.entries} answer(s), {_size(freed)}, from {escape(str(found.folder))}", highlight=False)
    inputs = stored_inputs.info()
    freed = stored_inputs.clear()
    out.print(f"removed {inputs.sequences} sequence(s) of stored inputs, {_size(freed)}, from "
              f"{escape(str(inputs.folder))}", highlight=False)
    kept = parsed.clear()
    out.print(f"removed {kept.files} parsed case file(s), {_size(kept.bytes)}, from {escape(str(parsed.folder()))}",
              highlight=False)


def recordings_write(harbor: opt.HarborRelease = ORACLE_RELEASE) -> None:
    """Record harbor's answers to every case and to the ci profile's generated inputs, with those inputs, into the
    suite's oracles/recordings/ (the reference certified with --profile ci against the live oracle)."""
    written = recording.write(harbor, log=log)
    out.print(f"wrote {escape(str(written.path))}: {written.answers} answer(s), {written.sequences} sequence(s) of "
              f"ci inputs", highlight=False)


def recordings_check(harbor: opt.HarborRelease = ORACLE_RELEASE) -> None:
    """Check that the suite's recordings apply as they are: recorded from the oracle a run would start, and the ci
    inputs drawn with the strategy code as it is. Prints each problem; exit status 1 when there is any."""
    found = recording.problems(harbor)
    for problem in found:
        out.print(escape(problem), highlight=False, soft_wrap=True)
    if found:
        out.print("the recordings are stale: `nox -s recordings` writes them anew", highlight=False)
        raise typer.Exit(1)
    out.print(f"the recordings of harbor {escape(harbor)} apply", highlight=False)


def recordings_needed(
    oracle: Annotated[str | None, typer.Option(
        "--oracle", metavar="SPEC", help="The oracle certify is given. Default: the config file's, else "
                                         f"harbor=={ORACLE_RELEASE}.")] = None,
    profile: Annotated[str | None, typer.Option(
        "--profile", metavar="NAME", help="The profile certify is given. Default: the config file's, else ci.")]
    = None,
    args: Annotated[list[str] | None, typer.Argument(
        metavar="CERTIFY-OPTION", help="Further options certify is given, after `--`: `-- --seed 3`.")] = None,
) -> None:
    """Say whether certify with these options needs the oracle's environment (a CPython 3.12 and harbor's
    virtualenv) when its candidate conforms: `needed=false` when the suite's recordings answer the whole run,
    else `needed=true` (on stdout, in the format of $GITHUB_OUTPUT), and why on stderr. A diverging candidate
    still needs it to shrink what it finds."""
    found = recording.oracle_environment(oracle, profile, args or ())
    log(f"oracle environment {'needed' if found.needed else 'not needed'}: {found.reason}")
    out.print(f"needed={'true' if found.needed else 'false'}", markup=False, highlight=False)
