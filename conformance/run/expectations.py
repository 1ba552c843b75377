"""Expectation files: a candidate's known divergences, turned into ``xfail``.

A file lists divergences by case id and by what the divergence is (its
outcome, and for a ``fail`` the set of mismatch classes), each with a reason
and a link:

    candidate: harbor==0.25.0
    divergences:
      - id: reward.parse::json-true
        outcome: fail
        classes: [type]
        reason: harbor 0.14 keeps a JSON boolean as a bool
        link: https://example.org/changelog#0.14

Applied to a run, a listed divergence seen as listed becomes ``xfail``; a
listed case that conforms becomes ``xpass`` (the entry is out of date); a
listed case that diverges some other way stays a ``fail`` (or whatever it
was) with the listed signature in its detail; and an entry naming no case of
the run is reported as stale. The last three fail the run.

``checked`` lists a file's problems by line (``expectations check``);
``refreshed`` is what a report calls for (``expectations update``), written
by ``conformance.run.expectation_writing``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from conformance.core.compare import MismatchClass
from conformance.core.outcomes import DIVERGING, Outcome
from conformance.corpus.cases import ID_PATTERN
from conformance.errors import ConfigurationError
from conformance.report.model import CaseLine, ExpectedDivergence, Signature, describe

SIGNATURE_OUTCOMES = tuple(sorted(DIVERGING))


class KnownDivergence(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=ID_PATTERN, description="The case id (or generated input id) that diverges.")
    outcome: Outcome = Field(default=Outcome.FAIL,
                             description="The outcome it has: " + ", ".join(SIGNATURE_OUTCOMES) + ".")
    classes: list[str] = Field(default_factory=list, description="With outcome fail: its set of mismatch classes.")
    reason: str = Field(min_length=1, description="Why the candidate differs from the oracle here.")
    link: str | None = Field(default=None, description="Where the difference is explained (changelog, issue).")

    @field_validator("outcome")
    @classmethod
    def _outcome(cls, value: Outcome) -> Outcome:
        if value not in DIVERGING:
            raise ValueError(f"outcome must be one of {', '.join(SIGNATURE_OUTCOMES)}")
        return value

    @field_validator("classes")
    @classmethod
    def _classes(cls, value: list[str]) -> list[str]:
        known = {c.value for c in MismatchClass}
        unknown = [c for c in value if c not in known]
        if unknown:
            raise ValueError(f"unknown mismatch class(es) {unknown}; known: {', '.join(sorted(known))}")
        return sorted(set(value))

    @property
    def surface(self) -> str:
        return self.id.split("::", 1)[0]

    @property
    def signature(self) -> Signature:
        return Signature(self.outcome, tuple(MismatchClass(c) for c in self.classes))


class ExpectationFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    candidate: str | None = Field(default=None, description="The candidate spec the file is written for.")
    oracle: str | None = Field(default=None, description="The oracle it was compared with.")
    divergences: list[KnownDivergence] = Field(default_factory=list)


class ExpectationError(ConfigurationError):
    """The expectation file cannot be used; the message names the file and line."""


def checked(path: Path) -> tuple[ExpectationFile | None, list[str]]:
    """The file's contents, or each of its problems as ``file:line: problem`` (the file, when there are none)."""
    try:
        text = path.read_text(encoding="utf-8")
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as e:
        return None, [f"{path}: cannot read: {e}"]
    except yaml.YAMLError as e:
        return None, [_bad_yaml(path, e)]
    # PyYAML keeps the last of two equal keys, and the round-trip writer refuses them: neither is what was meant.
    problems = [(line, f"key {key!r} given twice") for line, key in _repeated_keys(root)]
    lines = _entry_lines(root)
    parsed = None
    try:
        parsed = ExpectationFile.model_validate(data if data is not None else {})
    except ValidationError as e:
        for err in e.errors():
            loc = err["loc"]
            line, entry_id = 1, None
            if len(loc) >= 2 and loc[0] == "divergences" and isinstance(loc[1], int) and loc[1] < len(lines):
                line, entry_id = lines[loc[1]]
            named = f"[{entry_id}] " if entry_id else ""
            problems.append((line, named + f"{'.'.join(map(str, loc))}: {err['msg']}"))
    seen: dict[str, int] = {}
    for line, entry_id in lines:
        if entry_id is None:
            continue
        if entry_id in seen:
            problems.append((line, f"[{entry_id}] listed twice (first at line {seen[entry_id]})"))
        seen.setdefault(entry_id, line)
    if problems:
        return None, [f"{path}:{line}: {problem}" for line, problem in sorted(problems, key=lambda p: p[0])]
    return parsed, []


def load(path: Path) -> ExpectationFile:
    document, problems = checked(path)
    if document is None:
        raise ExpectationError("\n".join(problems))
    return document


def _bad_yaml(path: Path, error: yaml.YAMLError) -> str:
    """The parser's problem on one line, where it was found: a hook prints one line per problem."""
    if not isinstance(error, yaml.MarkedYAMLError):
        return f"{path}:1: bad YAML: {str(error).splitlines()[0]}"
    line = error.problem_mark.line + 1 if error.problem_mark else 1
    context = ""
    if error.context:
        context = f" ({error.context}" + (f" at line {error.context_mark.line + 1}" if error.context_mark else "") + ")"
    return f"{path}:{line}: bad YAML: {error.problem}{context}"


def _repeated_keys(node: yaml.Node | None) -> list[tuple[int, str]]:
    """(line, key) of each key a mapping of the document gives a second time."""
    found = []
    if isinstance(node, yaml.MappingNode):
        keys: set[str] = set()
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in keys:
                    found.append((key.start_mark.line + 1, key.value))
                keys.add(key.value)
            found += _repeated_keys(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            found += _repeated_keys(item)
    return found


def _entry_lines(root: yaml.Node | None) -> list[tuple[int, str | None]]:
    """(line, id) of each entry under ``divergences``."""
    if not isinstance(root, yaml.MappingNode):
        return []
    for key, value in root.value:
        if getattr(key, "value", None) == "divergences" and isinstance(value, yaml.SequenceNode):
            out = []
            for item in value.value:
                entry_id = None
                if isinstance(item, yaml.MappingNode):
                    entry_id = next((v.value for k, v in item.value
                                     if getattr(k, "value", None) == "id" and isinstance(v, yaml.ScalarNode)), None)
                out.append((item.start_mark.line + 1, entry_id))
            return out
    return []


@dataclass
class Expectations:
    """A loaded file applied to the records of one run."""

    path: Path
    entries: dict[str, KnownDivergence]
    seen: set[str] = field(default_factory=set)

    @classmethod
    def from_file(cls, path: Path) -> Expectations:
        return cls(path, {e.id: e for e in load(path).divergences})

    def apply(self, record: CaseLine) -> CaseLine:
        """The record as the file has it: a new line where an entry names it (the record itself otherwise)."""
        entry = self.entries.get(record.id)
        if entry is None:
            return record
        self.seen.add(record.id)
        got = record.signature
        if got is None:
            return record.amended(
                outcome=Outcome.XPASS,
                detail=(f"listed in {self.path.name} as a known divergence ({describe(entry.signature)}: "
                        f"{entry.reason}), but conforms: the entry is out of date"))
        if got == entry.signature:
            return record.amended(outcome=Outcome.XFAIL, expected_divergence=ExpectedDivergence(
                outcome=entry.outcome, classes=entry.signature.classes, reason=entry.reason, link=entry.link))
        note = f"known divergence in {self.path.name} is {describe(entry.signature)}, this one is {describe(got)}"
        return record.amended(detail=f"{note}\n{record.detail}" if record.detail else note)

    def stale(self, in_scope: Callable[[str], bool]) -> list[str]:
        """Entries within the run's scope that named no case of it."""
        return sorted(i for i in self.entries if i not in self.seen and in_scope(i))


def refreshed(records: Iterable[CaseLine], surfaces_run: set[str], previous: ExpectationFile | None,
              candidate: str | None, oracle: str | None) -> tuple[ExpectationFile, dict[str, list[str]]]:
    """The expectation file a report calls for, and what changed: added, updated, kept, dropped ids.

    Every divergence of the report is listed; an entry already in ``previous``
    keeps its reason and link. Entries of surfaces the report did not run are
    kept as they are; the others are dropped when the report shows no
    divergence for them.
    """
    old = {e.id: e for e in (previous.divergences if previous else [])}
    entries: dict[str, KnownDivergence] = {}
    changes: dict[str, list[str]] = {"added": [], "updated": [], "kept": [], "dropped": []}
    for record in records:
        sig = record.signature
        if sig is None:
            continue
        classes = [c.value for c in sig.classes]
        before = old.get(record.id)
        if before is None:
            reason = "not yet reviewed: " + record.first_difference()[:300]
            entries[record.id] = KnownDivergence(id=record.id, outcome=sig.outcome, classes=classes, reason=reason)
            changes["added"].append(record.id)
        else:
            entries[record.id] = before.model_copy(update={"outcome": sig.outcome, "classes": classes})
            changes["kept" if before.signature == sig else "updated"].append(record.id)
    for entry_id, entry in old.items():
        if entry_id in entries:
            continue
        if entry.surface in surfaces_run:
            changes["dropped"].append(entry_id)
        else:
            entries[entry_id] = entry
            changes["kept"].append(entry_id)
    ordered = [entries[i] for i in sorted(entries)]
    return ExpectationFile(candidate=candidate, oracle=oracle, divergences=ordered), changes
