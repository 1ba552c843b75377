"""The run options are declared once (conformance.run.flags): the command's, the campaign's and the pytest
plugin's say the same thing of each, and what they list comes from the registries."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer

from conformance.cli import app
from conformance.connection.connectors import CONNECTORS
from conformance.core.surfaces import SURFACES
from conformance.pytest_plugin import options as plugin_options
from conformance.run import config
from conformance.run.flags import FLAGS

COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]


def _cli_help(command: str) -> dict[str, str]:
    """Each option of a command: its long name (without --) and its help."""
    found = {}
    for param in COMMANDS[command].params:
        for name in param.opts:
            if name.startswith("--"):
                found[name[2:]] = param.help
    return found


class _Group:
    def __init__(self) -> None:
        self.helps: dict[str, str] = {}

    def addoption(self, flag: str, **settings: Any) -> None:
        self.helps[flag] = settings["help"]


class _Parser:
    def __init__(self) -> None:
        self.group = _Group()
        self.ini: dict[str, str] = {}

    def getgroup(self, name: str, description: str) -> _Group:
        return self.group

    def addini(self, name: str, help: str, type: str) -> None:
        self.ini[name] = help


def _plugin_help() -> tuple[dict[str, str], dict[str, str]]:
    """What the plugin registers, by run option name: the command line's help and the ini file's."""
    parser = _Parser()
    plugin_options.add(parser)  # type: ignore[arg-type]
    prefix = f"--{plugin_options.PREFIX}-"
    flags = {flag.removeprefix(prefix): text for flag, text in parser.group.helps.items()}
    ini = {name.removeprefix(f"{plugin_options.PREFIX}_").replace("_", "-"): text for name, text in parser.ini.items()}
    return flags, ini


def _without_default(text: str) -> str:
    return text.split(" (default: ")[0]


def test_every_shared_option_says_the_same_in_the_command_the_campaign_the_plugin_and_the_config_file():
    certify, campaign = _cli_help("certify"), _cli_help("campaign")
    plugin, ini = _plugin_help()
    in_file = {name: text["description"] for name, text in config.schema()["properties"].items()}
    for name, flag in FLAGS.items():
        places = {"certify": certify.get(name), "campaign": campaign.get(name), "pytest": plugin.get(name),
                  "ini": ini.get(name), "file": in_file.get(name)}
        given = {where: _without_default(text) for where, text in places.items() if text is not None}
        # An action of one run (the file takes none) may be one command's alone.
        assert len(given) >= 2 or not flag.in_file, f"--{name} is declared for one front end only: {given}"
        if name in ("report", "oracle-processes"):  # certify's also says '-', stdout; names the whole-job surfaces
            given.pop("certify")
        assert set(given.values()) == {flag.help}, name


def test_every_plugin_option_is_a_declared_run_option():
    plugin, _ = _plugin_help()
    assert set(plugin) <= set(FLAGS)


@pytest.mark.parametrize("where", ["certify", "campaign", "smoke", "pytest"])
def test_the_candidates_help_names_every_kind_of_connector(where):
    text = _plugin_help()[0]["candidate"] if where == "pytest" else _cli_help(where)["candidate"]
    for connector in CONNECTORS.values():
        assert connector.usage in text, f"{connector.kind} ({connector.usage}) missing from: {text}"


def test_the_whole_job_surfaces_come_from_the_registry():
    text = _cli_help("certify")["oracle-processes"]
    whole = [name for name, declared in SURFACES.items() if declared.batch_size == 1]
    assert whole and all(name in text for name in whole)
    assert not [name for name in SURFACES if name not in whole and name in text]


class _Config:
    """What the plugin reads of a pytest config: options given on the command line, an empty ini file."""

    inipath = None
    rootpath = Path(".")
    invocation_params = SimpleNamespace(dir=Path("."))  # this repository: no config file

    def __init__(self, **given: str) -> None:
        self.given = {f"{plugin_options.PREFIX}_{name}": value for name, value in given.items()}

    def getoption(self, dest: str) -> str | None:
        return self.given.get(dest)

    def getini(self, name: str) -> str:
        return ""


def test_a_bound_is_the_same_on_the_command_line_the_run_options_and_the_plugin():
    from typer.testing import CliRunner

    from conformance.errors import OptionError
    from conformance.run.plan import Options

    result = CliRunner().invoke(app, ["certify", "--oracle", "recorded", "--timeout", "0"])
    assert result.exit_code == 2 and "0 is not above 0" in result.output
    # The run options check every value once, whichever front end made them.
    with pytest.raises(OptionError, match="expected a number above 0, got 0") as refused:
        Options(timeout=0)
    assert refused.value.option == "timeout"
    with pytest.raises(OptionError, match="expected a number at least 1, got 0") as refused:
        Options(broken_after=0)
    assert refused.value.option == "broken-after"
    # The plugin says it of its own option; a value that is no number is refused where it is read.
    with pytest.raises(pytest.UsageError, match="--conformance-timeout: expected a number above 0, got 0.0"):
        plugin_options.read(_Config(candidate="reference", timeout="0"))  # type: ignore[arg-type]
    with pytest.raises(pytest.UsageError, match="--conformance-broken-after: expected an integer, got 'x'"):
        plugin_options.read(_Config(candidate="reference", broken_after="x"))  # type: ignore[arg-type]
    with pytest.raises(pytest.UsageError, match="--conformance-broken-after: expected a number at least 1, got 0"):
        plugin_options.read(_Config(candidate="reference", broken_after="0"))  # type: ignore[arg-type]
