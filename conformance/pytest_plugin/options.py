"""The plugin's options: each ``--conformance-NAME`` on the command line, most also ``conformance_NAME`` in the
ini file, read and checked once into :class:`Settings`. Each is a run option declared once in
:mod:`conformance.run.flags` (its help, its value, its bounds), as ``conformance certify`` takes it too.

The config file that ``certify`` reads (:mod:`conformance.run.config`, found from where pytest was started) gives
what neither the command line nor the ini file does, the candidate aside: only ``--conformance-candidate`` turns
the plugin on, so a project's plain ``pytest`` run starts no oracle because the file names a candidate.

Every name is namespaced, so a project whose own conftest adds ``--candidate``
or ``--oracle`` is left alone. Values are taken as text and converted here, so
a bad one is a ``pytest.UsageError`` (exit status 4) that names the option,
before any item runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance import ORACLE_RELEASE
from conformance.run.flags import FLAGS, Flag

if TYPE_CHECKING:
    from conformance.run.config import Config
    from conformance.run.plan import Options

PREFIX = "conformance"
DEFAULT_PROFILE = "ci"  # a fixed seed and budget: a test suite's run repeats
NO_DATABASE = "none"


@dataclass(frozen=True)
class Option:
    """A run option (:data:`conformance.run.flags.FLAGS`, which gives its help, value and bounds) as the plugin
    takes it."""

    name: str  # --conformance-NAME, ini conformance_NAME
    default: str | None = None  # the plugin's default, in words
    ini: bool = True
    path: bool = False  # a path: in the ini file, relative to the ini file's folder

    @property
    def declared(self) -> Flag:
        return FLAGS[self.name]

    @property
    def help(self) -> str:
        return self.declared.help + (f" (default: {self.default})" if self.default else "")

    @property
    def metavar(self) -> str | None:  # None: a flag
        return self.declared.metavar

    @property
    def flag(self) -> str:
        return f"--{PREFIX}-{self.name}"

    @property
    def dest(self) -> str:
        return f"{PREFIX}_{self.name.replace('-', '_')}"


OPTIONS = (
    Option("candidate", ini=False),
    Option("oracle", f"harbor=={ORACLE_RELEASE}"),
    Option("timeout", "certify's"),
    Option("timeout-multiplier", "1.0"),
    Option("broken-after", "certify's"),
    Option("validate-protocol"),
    Option("nan-policy"),
    Option("expectations", path=True),
    Option("report", path=True),
    Option("profile", DEFAULT_PROFILE),
    Option("seed", "the profile's, or a fresh one per run"),
    Option("max-examples", "the profile's"),
    Option("example-database", f".hypothesis/examples under the rootdir; '{NO_DATABASE}': none"),
    Option("observations", "none", path=True),
    Option("no-oracle-cache"),
    Option("no-input-cache"),
    Option("no-cases"),
    Option("no-generate"),
    Option("strict-warnings"),
    Option("config", ini=False),
    Option("no-config", ini=False),
)
_BY_NAME = {option.name: option for option in OPTIONS}


def add(parser: pytest.Parser) -> None:
    group = parser.getgroup(PREFIX, "harbor-conformance: case files and generated inputs as items "
                                    "(with --conformance-candidate: without it, the plugin collects nothing)")
    for option in OPTIONS:
        if option.metavar is None:
            group.addoption(option.flag, action="store_true", default=False, dest=option.dest, help=option.help)
        else:
            group.addoption(option.flag, default=None, dest=option.dest, metavar=option.metavar, help=option.help)
        if option.ini and option.metavar is None:
            parser.addini(option.dest, option.help, type="bool")
        elif option.ini:
            parser.addini(option.dest, option.help, type="string")


def candidate_text(config: pytest.Config) -> str | None:
    """The candidate asked for: the switch that turns the plugin on."""
    text: str | None = config.getoption(_BY_NAME["candidate"].dest)
    return text


def on_the_command_line(config: pytest.Config) -> list[str]:
    """The plugin's options given on the command line (not in an ini file), the candidate aside."""
    return [option.flag for option in OPTIONS if option.name != "candidate" and config.getoption(option.dest)]


def given(config: pytest.Config, name: str, file: Config | None = None) -> str | bool | None:
    """The option's value as given: the command line's, else the ini file's (a path made absolute), else the
    config file's (its paths absolute already; a number as its text, as the others give it), else None."""
    option = _BY_NAME[name]
    value: str | bool | None = config.getoption(option.dest)
    if value or not option.ini:
        return value or None
    ini = config.getini(option.dest)
    if not ini:
        in_file = file.value(name) if file is not None else None
        return in_file if in_file is None or isinstance(in_file, bool) else str(in_file)
    if option.path and config.inipath is not None:
        return str(config.inipath.parent / str(ini))
    return ini if isinstance(ini, bool) else str(ini)


def config_file(config: pytest.Config) -> Config | None:
    """The config file the run reads: --conformance-config's, none with --conformance-no-config, else the one found
    from where pytest was started."""
    from conformance.run.config import load, locate

    explicit = given(config, "config")
    path = locate(Path(explicit) if isinstance(explicit, str) else None, bool(given(config, "no-config")),
                  config.invocation_params.dir)
    return load(path) if path is not None else None


@dataclass(frozen=True)
class Settings:
    """What was asked for, checked: the run options (checked where they are made, as certify's are) and where the
    plugin writes its report."""

    run: Options
    report: Path | None


def read(config: pytest.Config) -> Settings:
    """The settings; pytest.UsageError naming the option for a value that cannot be used."""
    from conformance.errors import HarnessError, OptionError

    try:
        return _read(config)
    except OptionError as e:
        raise pytest.UsageError("\n".join([f"{_BY_NAME[e.option].flag}: {e}", *e.details])) from None
    except HarnessError as e:
        raise pytest.UsageError("\n".join([str(e), *e.details])) from None


def _text(config: pytest.Config, name: str, file: Config | None) -> str | None:
    value = given(config, name, file)
    return value if isinstance(value, str) else None


def _flag(config: pytest.Config, name: str, file: Config | None) -> bool:
    return bool(given(config, name, file))


def _number(config: pytest.Config, name: str, kind: type[str] | type[int] | type[float], file: Config | None) -> Any:
    """The number given (its bounds are the run options' to check), None if none; OptionError if no number."""
    from conformance.errors import OptionError

    text = _text(config, name, file)
    if text is None:
        return None
    try:
        return kind(text)
    except ValueError:
        raise OptionError(name, f"expected {'an integer' if kind is int else 'a number'}, got {text!r}") from None


def _read(config: pytest.Config) -> Settings:
    from conformance.connection.connectors import parse
    from conformance.run.plan import DEFAULT_ORACLE, Options, option_error, oracle_spec

    text = candidate_text(config)
    assert text is not None  # read only when the plugin is on
    file = config_file(config)
    numbers = [name for name, flag in FLAGS.items() if flag.kind is not str and name in _BY_NAME]
    given_numbers = {FLAGS[name].dest: value for name in numbers
                     if (value := _number(config, name, FLAGS[name].kind, file)) is not None}
    database = _text(config, "example-database", file)
    expectations, report = _text(config, "expectations", file), _text(config, "report", file)
    observations = _text(config, "observations", file)
    with option_error("candidate"):
        candidate = parse(text)
    with option_error("oracle"):
        oracle = oracle_spec(_text(config, "oracle", file) or DEFAULT_ORACLE)
    run = Options(
        candidate=candidate,
        oracle=oracle,
        profile=_text(config, "profile", file) or DEFAULT_PROFILE,
        nan_policy=_text(config, "nan-policy", file),
        validate_protocol=_flag(config, "validate-protocol", file),
        expectations=Path(expectations) if expectations else None,
        example_database=(None if database == NO_DATABASE
                          else database or str(config.rootpath / ".hypothesis" / "examples")),
        no_cases=_flag(config, "no-cases", file),
        no_generate=_flag(config, "no-generate", file),
        oracle_cache=not _flag(config, "no-oracle-cache", file),
        input_cache=not _flag(config, "no-input-cache", file),
        strict_warnings=_flag(config, "strict-warnings", file),
        observations=Path(observations) if observations else None,
        **given_numbers,
    )
    return Settings(run, Path(report) if report else None)
