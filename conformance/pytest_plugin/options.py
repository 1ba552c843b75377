"""The plugin's options: each ``--conformance-NAME`` on the command line, most also ``conformance_NAME`` in the
ini file, read and checked once into :class:`Settings`. Each is a run option declared once in
:mod:`conformance.run.flags` (its help, its value, its bounds), as ``conformance certify`` takes it too.

Every name is namespaced, so a project whose own conftest adds ``--candidate``
or ``--oracle`` is left alone. Values are taken as text and converted here, so
a bad one is a ``pytest.UsageError`` (exit status 4) that names the option,
before any item runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance import ORACLE_RELEASE
from conformance.run.flags import FLAGS, Flag

if TYPE_CHECKING:
    from conformance.connection.spec import Spec
    from conformance.core.compare import NanPolicy
    from conformance.run.generate import Profile

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
    Option("no-oracle-cache"),
    Option("no-cases"),
    Option("no-generate"),
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


def given(config: pytest.Config, name: str) -> str | bool | None:
    """The option's value as given: the command line's, else the ini file's (a path made absolute), else None."""
    option = _BY_NAME[name]
    value: str | bool | None = config.getoption(option.dest)
    if value or not option.ini:
        return value or None
    ini = config.getini(option.dest)
    if not ini:
        return None
    if option.path and config.inipath is not None:
        return str(config.inipath.parent / str(ini))
    return ini if isinstance(ini, bool) else str(ini)


@dataclass(frozen=True)
class Settings:
    """What was asked for, checked."""

    candidate: Spec
    oracle: Spec | None  # None: the cases' recorded results
    timeout: float
    timeout_multiplier: float
    broken_after: int
    validate_protocol: bool
    nan_policy: NanPolicy | None
    expectations: Path | None
    report: Path | None
    profile: Profile
    seed: int | None  # None: the profile's, or a fresh one
    max_examples: int | None  # None: the profile's budget, scaled by each surface
    example_database: str | None  # None: none
    cases: bool
    generate: bool
    oracle_cache: bool = True  # the oracle's answers from the answer cache where it has them


def read(config: pytest.Config) -> Settings:
    """The settings; pytest.UsageError naming the option for a value that cannot be used."""
    from conformance.errors import HarnessError

    try:
        return _read(config)
    except HarnessError as e:
        raise pytest.UsageError("\n".join([str(e), *e.details])) from None


def _text(config: pytest.Config, name: str) -> str | None:
    value = given(config, name)
    return value if isinstance(value, str) else None


def _flag(config: pytest.Config, name: str) -> bool:
    return bool(given(config, name))


def _number(config: pytest.Config, name: str, kind: type[int] | type[float], default: float) -> float:
    """The number given, within the bounds the option declares; UsageError naming the option otherwise."""
    from conformance.errors import UsageError

    text = _text(config, name)
    if text is None:
        return default
    try:
        value = kind(text)
    except ValueError:  # the text is no number: said below with the bounds, where it was given
        value = None
    declared = _BY_NAME[name].declared
    minimum, above = declared.minimum if declared.minimum is not None else float("-inf"), declared.above
    if value is None or value < minimum or (above and value == minimum):
        bound = f"above {minimum:g}" if above else f"at least {minimum:g}"
        raise UsageError(f"{_BY_NAME[name].flag}: expected {'an integer' if kind is int else 'a number'} {bound}, "
                         f"got {text!r}")
    return value


@contextmanager
def _named(name: str) -> Iterator[None]:
    """A usage error, said of the option it comes from."""
    from conformance.errors import UsageError

    try:
        yield
    except UsageError as e:
        raise e.within(_BY_NAME[name].flag) from None


def _read(config: pytest.Config) -> Settings:
    from conformance.connection.base import DEFAULT_TIMEOUT
    from conformance.connection.breaker import DEFAULT_LIMIT
    from conformance.connection.connectors import parse
    from conformance.core.compare import POLICIES
    from conformance.core.registry import RegistryError
    from conformance.errors import UsageError
    from conformance.run import generate
    from conformance.run.plan import DEFAULT_ORACLE, oracle_spec

    text = candidate_text(config)
    assert text is not None  # read only when the plugin is on
    with _named("candidate"):
        candidate = parse(text)
    with _named("oracle"):
        oracle = oracle_spec(_text(config, "oracle") or DEFAULT_ORACLE)
    profile_name = _text(config, "profile") or DEFAULT_PROFILE
    if profile_name not in generate.PROFILES:
        raise UsageError(f"--conformance-profile: unknown profile {profile_name!r}; known: "
                         f"{', '.join(generate.PROFILES)}")
    profile = generate.PROFILES[profile_name]
    policy_name = _text(config, "nan-policy")
    try:
        nan_policy = POLICIES.get(policy_name) if policy_name else None
    except RegistryError as e:
        raise UsageError(f"--conformance-nan-policy: {e}") from None
    cases, generating = not _flag(config, "no-cases"), not _flag(config, "no-generate")
    if not cases and not generating:
        raise UsageError("--conformance-no-cases and --conformance-no-generate together leave nothing to run")
    seed = _text(config, "seed")
    database = _text(config, "example-database")
    expectations, report = _text(config, "expectations"), _text(config, "report")
    return Settings(
        candidate=candidate,
        oracle=oracle,
        timeout=_number(config, "timeout", float, DEFAULT_TIMEOUT),
        timeout_multiplier=_number(config, "timeout-multiplier", float, 1.0),
        broken_after=int(_number(config, "broken-after", int, DEFAULT_LIMIT)),
        validate_protocol=_flag(config, "validate-protocol"),
        nan_policy=nan_policy,
        expectations=Path(expectations) if expectations else None,
        report=Path(report) if report else None,
        profile=profile,
        seed=int(_number(config, "seed", int, 0)) if seed is not None else None,
        max_examples=(int(_number(config, "max-examples", int, 0)) if _text(config, "max-examples") is not None
                      else None),
        example_database=(None if database == NO_DATABASE
                          else database or str(config.rootpath / ".hypothesis" / "examples")),
        cases=cases,
        generate=generating,
        oracle_cache=not _flag(config, "no-oracle-cache"),
    )
