"""Declarative cases: the model, the loader and the corpus check.

A case file is ``cases/<surface>/<topic>.yaml``:

    surface: reward.parse
    cases:
      - id: reward.parse::txt-one        # immutable: surface::slug
        description: reward.txt holding "1"
        tags: [reward.txt]
        spec: seed-003 §1.2
        harbor: ">=0.13.1"               # optional PEP 440 specifiers; absent = every release
        input: {reward_txt: !bytes "1"}
        expect:                          # the oracle's recorded result (optional)
          output: {reward: !float 1.0}   # or: raised: RewardFileEmptyError
        spec_disagrees: ...              # optional: where harbor differs from the prose spec

Every error names the file, the line and the case id. A case file is read
only if it is a regular file of at most 2 MiB inside the corpus
(:mod:`conformance.corpus.files`); its YAML may nest at most 64 levels deep
and hold at most 100000 values (:mod:`conformance.corpus.yaml_values`).
An input the suite leaves out (:func:`conformance.core.scope.out_of_scope`:
a JSON file nested so deep that the interpreter decides the outcome) is an
error too.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from conformance import shipped
from conformance.core import scope, surfaces
from conformance.core.compare import Result
from conformance.corpus import parsed
from conformance.corpus.files import FileProblem, read_case_file
from conformance.corpus.yaml_values import AliasError, CaseLoader, FileRead, LimitError, lint
from conformance.errors import ConfigurationError

ID_PATTERN = r"^[a-z][a-z0-9_.]*::[a-z0-9][a-z0-9._-]*$"


class Expectation(BaseModel):
    """The oracle's recorded result: exactly one of ``output`` and ``raised``."""

    model_config = ConfigDict(extra="forbid")
    output: Any = Field(default=None, description="The output value (tags as in the case file).")
    raised: str | None = Field(default=None, description="Class name of the exception raised.")
    reason_code: str | None = Field(
        default=None, description="With raised, on surfaces that compare it: the agent-challenge reason code "
                                  "the message normalizes to; absent when it is none that agent-challenge lists.")

    @model_validator(mode="after")
    def _one_of(self) -> Expectation:
        given = {"output", "raised"} & self.model_fields_set
        if len(given) != 1:
            raise ValueError("expect takes exactly one of 'output' and 'raised'")
        if "reason_code" in self.model_fields_set and "raised" not in given:
            raise ValueError("expect: reason_code goes with raised")
        return self

    def result(self) -> Result:
        if "raised" in self.model_fields_set:
            # Not of_raised: the model accepts ``raised: null``, which names no exception.
            return Result(raised=self.raised, reason_code=self.reason_code)
        return Result.of_value(self.output)


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=ID_PATTERN, description="Immutable id: <surface>::<slug>.")
    description: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    spec: str = Field(min_length=1, description="The spec section the case checks.")
    harbor: str | None = Field(default=None, description="PEP 440 specifiers of the harbor releases it applies to.")
    input: Any
    expect: Expectation | None = None
    spec_disagrees: str | None = Field(
        default=None, description="Where harbor's wheel differs from the spec's prose, and how."
    )

    @field_validator("harbor")
    @classmethod
    def _specifiers(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                SpecifierSet(value)
            except InvalidSpecifier as e:
                raise ValueError(str(e)) from None
        return value

    @property
    def surface(self) -> str:
        return self.id.split("::", 1)[0]

    def applies_to(self, harbor_version: str | None) -> bool:
        if self.harbor is None or harbor_version is None:
            return True
        return SpecifierSet(self.harbor).contains(Version(harbor_version), prereleases=True)


class CaseFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    surface: str
    cases: list[Case] = Field(min_length=1)


@dataclass(frozen=True)
class CaseError:
    file: Path
    line: int
    case_id: str | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return f"{where}: [{self.case_id}] {self.message}" if self.case_id else f"{where}: {self.message}"


class CorpusError(ConfigurationError):
    """Case files that do not load; each error names its file, line and case id (after ``context``: what
    could not be done because of them)."""

    def __init__(self, errors: list[CaseError], context: str | None = None) -> None:
        self.errors = errors
        listed = "\n".join(map(str, errors))
        super().__init__(f"{context}:\n{listed}" if context else listed)


@dataclass(frozen=True)
class LoadedCase:
    case: Case
    file: Path
    line: int

    @property
    def id(self) -> str:
        return self.case.id


# What a case file parses to: its cases, its errors, and the files its ``!file`` tags read.
Parsed = tuple[list[LoadedCase], list[CaseError], tuple[FileRead, ...]]
# (line, id, first line, last line) of one case mapping in a case file.
CaseNode = tuple[int, str | None, int, int]


def case_nodes(root: yaml.Node | None) -> list[CaseNode]:
    """(line, id, first line, last line) of each case mapping in the file."""
    out: list[CaseNode] = []
    if not isinstance(root, yaml.MappingNode):
        return out
    for key, value in root.value:
        if getattr(key, "value", None) == "cases" and isinstance(value, yaml.SequenceNode):
            for item in value.value:
                case_id = None
                if isinstance(item, yaml.MappingNode):
                    for k, v in item.value:
                        if getattr(k, "value", None) == "id" and isinstance(v, yaml.ScalarNode):
                            case_id = v.value
                out.append((item.start_mark.line + 1, case_id, item.start_mark.line + 1, item.end_mark.line + 1))
    return out


def _owner(nodes: list[CaseNode], line: int) -> str | None:
    """The id of the case a line belongs to: the last case starting at or before it."""
    owner = None
    for _, case_id, first, last in nodes:
        if first <= line <= last:
            owner = case_id
    return owner


def load_file(path: Path, data: bytes | None = None) -> tuple[list[LoadedCase], list[CaseError]]:
    """Load one case file (``data``: its bytes, when already read with :func:`read_case_file`); never raises for
    bad content, returns the errors instead."""
    cases, errors, _ = _parse(path, data)
    return cases, errors


def _parse(path: Path, data: bytes | None) -> Parsed:
    """:func:`load_file`, and the files its ``!file`` tags read."""
    loaded, errors, loader = _parse_with(path, data)
    return loaded, errors, tuple(loader.reads) if loader is not None else ()


def _parse_with(path: Path, data: bytes | None) -> tuple[list[LoadedCase], list[CaseError], CaseLoader | None]:
    try:
        text = (read_case_file(path) if data is None else data).decode("utf-8")
    except FileProblem as e:
        return [], [CaseError(path, 1, None, str(e))], None
    except UnicodeDecodeError as e:
        return [], [CaseError(path, 1, None, f"cannot read: {e}")], None
    # One loader composes the file once: the nodes serve the lint and the line numbers, then become the data.
    loader = CaseLoader(text)
    loader.base_dir = path.parent
    try:
        root = loader.get_single_node()
    except AliasError as e:
        line = e.problem_mark.line + 1
        return [], [CaseError(path, line, _owner(case_nodes(e.node), line), e.problem)], loader
    except LimitError as e:  # nothing was built: no case can be named
        return [], [CaseError(path, e.problem_mark.line + 1, None, e.problem)], loader
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (column {mark.column + 1})" if mark else ""
        return [], [CaseError(path, mark.line + 1 if mark else 1, None,
                              f"bad YAML: {getattr(e, 'problem', None) or e}{where}")], loader
    if root is None:
        return [], [CaseError(path, 1, None, "empty case file")], loader
    nodes = case_nodes(root)
    errors = [CaseError(path, p.line, _owner(nodes, p.line), p.message) for p in lint(root)]
    try:
        data = loader.construct_document(root)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        problem = f"bad value: {getattr(e, 'problem', e)}"
        return [], errors + [CaseError(path, line, _owner(nodes, line), problem)], loader
    try:
        parsed = CaseFile.model_validate(data)
    except ValidationError as e:
        for err in e.errors():
            loc = err["loc"]
            line, case_id = 1, None
            if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int) and loc[1] < len(nodes):
                line, case_id = nodes[loc[1]][0], nodes[loc[1]][1]
            field = ".".join(str(part) for part in loc)
            errors.append(CaseError(path, line, case_id, f"{field}: {err['msg']}"))
        return [], errors, loader
    if parsed.surface not in surfaces.SURFACES:
        errors.append(CaseError(path, 1, None, f"unknown surface {parsed.surface!r}"))
        return [], errors, loader
    if path.parent.name != parsed.surface:
        errors.append(CaseError(path, 1, None, f"a {parsed.surface} case file belongs in cases/{parsed.surface}/"))
    surface = surfaces.get(parsed.surface)
    loaded = []
    for case, (line, _, _, _) in zip(parsed.cases, nodes, strict=False):
        if case.surface != parsed.surface:
            errors.append(CaseError(path, line, case.id, f"id must start with {parsed.surface}::"))
        try:
            surface.validate_input(case.input)
        except ValidationError as e:
            for err in e.errors():
                field = ".".join(str(part) for part in err["loc"]) or "input"
                errors.append(CaseError(path, line, case.id, f"input.{field}: {err['msg']}"))
        else:
            left_out = scope.out_of_scope(case.input)
            if left_out is not None:
                errors.append(CaseError(path, line, case.id, left_out))
        loaded.append(LoadedCase(case, path, line))
    return loaded, errors, loader


def default_root() -> Path:
    """The corpus the suite ships (inside the installed package, or a checkout's top level)."""
    return shipped.folder(shipped.Shipped.CASES)


def case_files(root: Path) -> list[Path]:
    """Every ``<surface>/<name>.yaml`` below ``root`` that is not a folder: a FIFO, a socket or a dangling link
    named so is listed too, and refused with its problem when it is loaded."""
    return sorted(p for p in root.glob("*/*.yaml") if not p.is_dir())


# A file's parse by (path, sha256 of its text): a process that reads the corpus again (a test suite, the gate's
# releases) parses only a file whose text, or any file it read, changed; and a process that reads it first takes
# the parse an earlier one kept on disk (:mod:`conformance.corpus.parsed`).
_LOADED: dict[tuple[Path, str], Parsed] = {}


def _recalled(path: Path, text_digest: str) -> Parsed | None:
    found = parsed.recall(path, text_digest)
    if not (isinstance(found, tuple) and len(found) == 3
            and all(isinstance(read, FileRead) and read.holds() for read in found[2])):
        return None
    return found


def _load_file_once(path: Path) -> tuple[list[LoadedCase], list[CaseError]]:
    try:
        data = read_case_file(path)
    except FileProblem as e:
        return [], [CaseError(path, 1, None, str(e))]
    key = (path, hashlib.sha256(data).hexdigest())
    if key not in _LOADED or not all(read.holds() for read in _LOADED[key][2]):
        found = _recalled(*key)
        if found is None:
            found = _parse(path, data)
            parsed.keep(*key, found)
        _LOADED[key] = found
    cases, errors, _ = _LOADED[key]
    return list(cases), list(errors)


def check_corpus(root: Path) -> tuple[list[LoadedCase], list[CaseError]]:
    """Load every case file below ``root``; the errors include duplicate ids."""
    if not root.is_dir():
        return [], [CaseError(root, 1, None, "no such case folder")]
    loaded: list[LoadedCase] = []
    errors: list[CaseError] = []
    for path in case_files(root):
        cases, file_errors = _load_file_once(path)
        loaded.extend(cases)
        errors.extend(file_errors)
    first: dict[str, LoadedCase] = {}
    for item in loaded:
        if item.id in first:
            other = first[item.id]
            errors.append(CaseError(item.file, item.line, item.id,
                                    f"duplicate id (first at {other.file}:{other.line})"))
        else:
            first[item.id] = item
    return loaded, errors


def load_corpus(root: Path) -> list[LoadedCase]:
    loaded, errors = check_corpus(root)
    if errors:
        raise CorpusError(errors)
    return loaded


def select(
    cases: list[LoadedCase],
    surfaces_wanted: list[str] | None = None,
    harbor_version: str | None = None,
    ids: list[str] | None = None,
) -> list[LoadedCase]:
    chosen = []
    patterns = [re.compile(re.escape(i).replace(r"\*", ".*")) for i in ids or []]
    for item in cases:
        if surfaces_wanted and item.case.surface not in surfaces_wanted:
            continue
        if patterns and not any(p.fullmatch(item.id) for p in patterns):
            continue
        if not item.case.applies_to(harbor_version):
            continue
        chosen.append(item)
    return chosen


def first_inputs(root: Path) -> dict[str, Any]:
    """One input per surface: the first case of each in the corpus (whatever its other problems)."""
    loaded, _errors = check_corpus(root)
    out: dict[str, Any] = {}
    for item in loaded:
        out.setdefault(item.case.surface, item.case.input)
    return out
