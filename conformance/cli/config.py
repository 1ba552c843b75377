"""The config file on the command line: the commands that read it (``certify``, ``smoke``) and ``conformance
config``, which says which file a run reads and what it gives.

The file's values become the command's defaults (click's default map), so an option given on the command line
wins, and each value goes through the same parsing as the option's (a spec, a path, a mode); the file is checked
first, whole (:func:`conformance.run.config.load`), so a bad value is said with its file and line.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from conformance.cli import options as opt
from conformance.cli.console import log, out
from conformance.run import config as config_file
from conformance.run.flags import FLAGS


def _read(explicit: Path | None, ignore: bool) -> config_file.Config | None:
    path = config_file.locate(explicit, ignore, Path.cwd())
    return config_file.load(path) if path is not None else None


class Configured(TyperCommand):
    """A command whose options a config file gives defaults: read before the options are, named on stderr."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer's own click Context: private to typer
        opts, _, _ = self.make_parser(ctx).parse_args(args=list(args))  # --config and --no-config, unprocessed
        if not opts.get("help"):
            explicit = opts.get(FLAGS["config"].dest)
            read = _read(Path(explicit) if explicit else None, bool(opts.get(FLAGS["no-config"].dest)))
            if read is not None:
                ctx.default_map = {**(ctx.default_map or {}), **self._defaults(read)}
                log(f"config: {read.path}")
        return super().parse_args(ctx, args)

    def _defaults(self, read: config_file.Config) -> dict[str, Any]:
        """The file's values by the names of this command's parameters (an option it does not take is left)."""
        by_option = {name: param.name for param in self.params for name in param.opts if name.startswith("--")}
        return {by_option[f"--{key}"]: value for key, value in read.values.items() if f"--{key}" in by_option}


CONFIGURED = ("certify", "smoke")  # the commands that read the file
SHELL_PREFIX = "file_"  # `config --shell`: the shell variables it sets are named file_KEY


def show(
    key: Annotated[str | None, typer.Argument(help="Print only this key's value (empty when the file gives none).")]
    = None,
    config: opt.ConfigFile = None,
    no_config: opt.NoConfig = False,
    as_json: Annotated[bool, typer.Option("--json", help="The values as one JSON object.")] = False,
    as_shell: Annotated[bool, typer.Option("--shell", help=(
        f"Every key as a shell assignment, {SHELL_PREFIX}KEY='VALUE' (dashes as underscores; empty when the file "
        "gives none), for a script's eval: one process for all of them."))] = False,
) -> None:
    """Say which config file a run started here reads, and the values it gives (paths made absolute)."""
    read = _read(config, no_config)
    if key is not None:
        if key not in config_file.KEYS:
            raise typer.BadParameter(f"{key!r} is no key of the config file; the keys: {', '.join(config_file.KEYS)}",
                                     param_hint="KEY")
        value = read.value(key) if read is not None else None
        out.print("" if value is None else _text(value), markup=False, highlight=False, soft_wrap=True)
        return
    values = dict(read.values) if read is not None else {}
    if as_shell:
        for name in config_file.KEYS:
            value = values.get(name)
            text = shlex.quote("" if value is None else _text(value))
            out.print(f"{SHELL_PREFIX}{name.replace('-', '_')}={text}", markup=False, highlight=False, soft_wrap=True)
        return
    if as_json:
        out.print(json.dumps({"file": str(read.path) if read else None, "values": values}), markup=False,
                  highlight=False, soft_wrap=True)
        return
    out.print(f"# {read.path}" if read else "# no config file", markup=False, highlight=False)
    for name, value in values.items():
        out.print(f"{name} = {json.dumps(value)}", markup=False, highlight=False, soft_wrap=True)


def _text(value: Any) -> str:
    """A value as a shell reads it: a list one item a line, a switch true or false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "\n".join(map(str, value))
    return str(value)
