"""The config file: a project's run options, in ``conformance.toml`` or in ``[tool.conformance]`` of its
``pyproject.toml``.

Its keys are the run options declared in :mod:`conformance.run.flags`, named as on the command line without the
dashes in front (``timeout-multiplier = 3``, ``no-cases = true``, ``surface = ["reward.parse"]``): one key per
option, and no other list of them, so an option declared there is a key here. The options that are one run's
action (``in_file=False``: ``--resume``, ``--shard``, the choice of the file itself) are no keys. The file is
checked by a pydantic model made from the same declaration (its JSON Schema is published as ``config.json``),
then its registered names (candidate, oracle, surfaces, profile, NaN policy) by the run options' own checks; a
problem is a :class:`ConfigurationError` naming the file, the key's line and the key.

Where it is found: from a folder up through its parents, ``conformance.toml`` first, else a ``pyproject.toml``
that has a ``[tool.conformance]`` table; the search stops at the first folder holding one, and at the top of the
repository (a folder holding ``.git``): a file above a repository does not steer its runs. Paths in the file are
relative to the file's folder.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from conformance.errors import ConfigurationError, OptionError, UsageError
from conformance.run.flags import FLAGS, Flag

FILE_NAME = "conformance.toml"
PYPROJECT = "pyproject.toml"
TABLE = ("tool", "conformance")  # in pyproject.toml
SCHEMA_KEY = "$schema"  # an editor's pointer to the JSON Schema: allowed, and ignored
TABLE_LINE = ""  # in a file's lines: where its table starts (no key is empty)
STDOUT = "-"  # a report or summary path that is no file

# The options the file takes, by key.
KEYS: dict[str, Flag] = {name: flag for name, flag in FLAGS.items() if flag.in_file}

# The values whose names the run options check against their registries, by key: the field of
# conformance.run.plan.Options that takes each (their own checks say what is wrong with one).
_REGISTERED = {"candidate": "candidate", "oracle": "oracle", "surface": "surfaces", "profile": "profile",
               "nan-policy": "nan_policy"}


def _annotation(flag: Flag) -> Any:
    """The type a key's value has in the file, with the option's bounds."""
    value: Any
    if flag.switch:
        value = bool
    elif flag.choices:
        value = Literal[flag.choices]
    elif flag.minimum is not None:
        value = Annotated[flag.kind, Field(gt=flag.minimum) if flag.above else Field(ge=flag.minimum)]
    else:
        value = flag.kind
    return list[value] if flag.repeatable else value


def _model() -> type[BaseModel]:
    fields: dict[str, Any] = {
        flag.dest: (_annotation(flag), Field(default=None, alias=name, description=flag.help))
        for name, flag in KEYS.items()}  # no default in the file's terms: a key left out leaves the option alone
    fields["schema_"] = (str, Field(default=None, alias=SCHEMA_KEY,
                                    description="The JSON Schema of this file, for an editor."))
    return create_model(
        "ConfigFile", __config__=ConfigDict(extra="forbid", strict=True, title="harbor-conformance config file"),
        __doc__="A project's run options: conformance.toml, or [tool.conformance] in pyproject.toml. Each key is a "
                "`conformance certify` option without its leading dashes; paths are relative to the file's folder.",
        **fields)


ConfigModel = _model()


def schema() -> dict[str, Any]:
    """The published JSON Schema of the file (``config.json``)."""
    out = ConfigModel.model_json_schema(by_alias=True)
    for definition in out["properties"].values():
        definition.pop("default", None)  # None is no TOML value: a key is given, or left out
    out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return out


@dataclass(frozen=True)
class Config:
    """A config file, read and checked: the options it gives (by key, paths made absolute) and where."""

    path: Path
    values: Mapping[str, Any]  # by key; only the keys the file gives
    lines: Mapping[str, int]  # each key's line in the file

    def value(self, name: str) -> Any:
        """The file's value of an option (None when it gives none)."""
        return self.values.get(name)

    def by_dest(self) -> dict[str, Any]:
        """The values by the options' Python names (``timeout_multiplier``): a command's defaults."""
        return {KEYS[name].dest: value for name, value in self.values.items()}

    def error(self, name: str, problem: str) -> ConfigurationError:
        return ConfigurationError(_where(self.path, line_of(self.lines, name), name, problem))


def line_of(lines: Mapping[str, int], key: str) -> int:
    """A key's line; where it is not found (a dotted key, an inline table), its table's first line."""
    return lines.get(key, lines.get(TABLE_LINE, 1))


def _where(path: Path, line: int, key: str, problem: str) -> str:
    return f"{path}:{line}: {key}: {problem}"


def find(start: Path) -> Path | None:
    """The config file that governs ``start``: the nearest up from it, not above the repository's top."""
    for folder in [start.resolve(), *start.resolve().parents]:
        candidate = folder / FILE_NAME
        if candidate.is_file():
            return candidate
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and _has_table(pyproject):
            return pyproject
        if (folder / ".git").exists():
            return None
    return None


def _has_table(pyproject: Path) -> bool:
    """Whether a pyproject.toml has a [tool.conformance] table; one that cannot be read is said when it is read."""
    try:
        _table(tomllib.loads(pyproject.read_text(encoding="utf-8")), pyproject)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
        return True  # found, and refused with its line when read
    except ConfigurationError:
        return False
    return True


def _table(document: dict[str, Any], path: Path) -> dict[str, Any]:
    if path.name != PYPROJECT:
        return document
    table: Any = document
    for part in TABLE:
        table = table.get(part) if isinstance(table, dict) else None
    if not isinstance(table, dict):
        raise ConfigurationError(f"{path}: no [{'.'.join(TABLE)}] table")
    return table


def locate(explicit: Path | None, ignore: bool, start: Path) -> Path | None:
    """Which file a run reads: none with ``ignore`` (--no-config), the one named (--config), else the one found."""
    if ignore:
        return None
    if explicit is not None:
        if not explicit.is_file():
            raise OptionError("config", f"{explicit}: no such config file")
        return explicit
    return find(start)


def load(path: Path) -> Config:
    """The file read and checked; ConfigurationError naming file, line and key for whatever it gets wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigurationError(f"{path}: cannot be read: {e}") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigurationError(_syntax_error(path, e, text)) from None
    table = _table(document, path)
    lines = key_lines(text, TABLE if path.name == PYPROJECT else ())
    try:
        checked = ConfigModel.model_validate(table)
    except ValidationError as e:
        problems = [_where(path, line_of(lines, str(error["loc"][0]) if error["loc"] else TABLE_LINE),
                           ".".join(map(str, error["loc"])), _problem(error)) for error in e.errors()]
        raise ConfigurationError(problems[0] if len(problems) == 1 else f"{len(problems)} problems in {path}",
                                 problems if len(problems) > 1 else None) from None
    given = checked.model_dump(exclude_unset=True, by_alias=True)
    given.pop(SCHEMA_KEY, None)
    folder = path.resolve().parent
    values = {name: _resolved(KEYS[name], value, folder) for name, value in given.items()}
    config = Config(path, values, lines)
    _check_registered(config)
    return config


def _resolved(flag: Flag, value: Any, folder: Path) -> Any:
    """A path made absolute from the file's folder; '-' (stdout) and an example database's URL left as they are."""
    if not flag.path or value == STDOUT or "://" in str(value):
        return value
    return str(folder / Path(value).expanduser())


def _check_registered(config: Config) -> None:
    from conformance.run.plan import Options  # the run options check the names they take, one way everywhere

    given = {field: config.values[name] for name, field in _REGISTERED.items() if name in config.values}
    if not given:
        return
    try:
        Options(**given)
    except OptionError as e:
        raise config.error(e.option, str(e)) from None
    except UsageError as e:
        raise ConfigurationError(f"{config.path}: {e}", e.details) from None


def _problem(error: Any) -> str:
    """A pydantic error said of a key; an unknown key with the one it may have meant."""
    loc = error["loc"]
    if error["type"] != "extra_forbidden":
        message: str = error["msg"]
        return message[:1].lower() + message[1:]
    key = str(loc[0])
    if key in FLAGS:
        return "not taken by a config file: an action of one run, given on the command line"
    near = difflib.get_close_matches(key.replace("_", "-"), list(KEYS), n=1)
    return "unknown key" + (f" (did you mean {near[0]!r}?)" if near else
                            f"; the keys are the run options: {', '.join(KEYS)}")


_LINE = re.compile(r"\s*\(at line (\d+), column \d+\)|\s*\(at end of document\)")


def _syntax_error(path: Path, error: tomllib.TOMLDecodeError, text: str) -> str:
    """tomllib's message as FILE:LINE: problem (it gives the line in its message, or says the end)."""
    message = str(error)
    found = _LINE.search(message)
    line = found.group(1) if found and found.group(1) else str(max(1, len(text.splitlines())))
    return f"{path}:{line}: TOML syntax: {_LINE.sub('', message)}"


_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_ARRAY_HEADER = re.compile(r"^\s*\[\[")
_KEY = re.compile(r"""^\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_$-]+))\s*=""")


def key_lines(text: str, table: tuple[str, ...]) -> dict[str, int]:
    """The line of each key of ``table`` (() for the top level) in a TOML text: tomllib gives values, not lines.

    Keys written as dotted keys or in an inline table are not found: their problems are said of the table's
    first line, which is as near as the text gives without a TOML parser of its own.
    """
    found: dict[str, int] = {}
    current: tuple[str, ...] | None = ()
    for number, line in enumerate(text.splitlines(), start=1):
        if _ARRAY_HEADER.match(line):
            current = None
            continue
        header = _HEADER.match(line)
        if header:
            current = tuple(part.strip().strip("\"'") for part in header.group(1).split("."))
            if current == table:
                found.setdefault(TABLE_LINE, number)
            continue
        key = _KEY.match(line)
        if key and current == table:
            found.setdefault(next(group for group in key.groups() if group is not None), number)
    return found
