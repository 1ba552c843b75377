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
        first_seen: 2026-01-05
        last_seen: 2026-03-02
        expires: 2026-06-30

An entry whose id is ``SURFACE::gen-*`` names a behaviour, not an input:
every generated input of the surface that diverges with the entry's
signature. Generated inputs are a sample (a fresh seed, or a candidate
that answers a little differently, draws other inputs of the same bug), so
such an entry is never stale and never pruned: its ``last_seen`` says when
a run last met it, and ``expires`` ages it. A surface may have several,
one per signature; an entry naming the input itself comes first.

Applied to a run, a listed divergence seen as listed becomes ``xfail``; a
listed case that conforms becomes ``xpass`` (the entry is out of date); a
listed case that diverges some other way stays a ``fail`` (or whatever it
was) with the listed signature in its detail; and an entry naming no case of
the run is reported as stale. The last three fail the run. An entry whose
``expires`` date is before the run's date no longer applies: its case keeps
the outcome it has, and the run names the entry as expired.

A run's date is the day (UTC) of its header's ``started_at``. ``first_seen``
and ``last_seen`` are the dates of the first and the latest run that saw the
divergence, stamped by ``expectations update``; the file is a baseline with
its history. An entry only speaks for the runs that cover it (``Coverage``):
one of a surface a run did not take is unobserved, neither stale nor fixed.

``checked`` lists a file's problems by line (``expectations check``);
``refreshed`` is what a report calls for (``expectations update``), written
by ``conformance.run.expectation_writing``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from conformance.core.compare import MismatchClass
from conformance.core.outcomes import DIVERGING, Outcome
from conformance.corpus.cases import ID_PATTERN
from conformance.errors import ConfigurationError
from conformance.report.model import CaseLine, ExpectedDivergence, GeneratedLine, Header, Signature, describe
from conformance.run.shards import Shard

SIGNATURE_OUTCOMES = tuple(sorted(DIVERGING))
GENERATED_ANY = "gen-*"  # the slug of an entry that names every generated input of its surface
BEHAVIOUR_PATTERN = r"^[a-z][a-z0-9_.]*::gen-\*$"
ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
DATES = ("first_seen", "last_seen", "expires")


class _Loader(yaml.SafeLoader):
    """Safe YAML that reads a date as the text it is: the model checks it, per entry and line, where PyYAML's
    own date reading would fail on ``2026-13-01`` with no line at all."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


class KnownDivergence(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=f"{ID_PATTERN}|{BEHAVIOUR_PATTERN}", description=(
        "The case id (or generated input id) that diverges; `SURFACE::gen-*`: every generated input of the "
        "surface that diverges with this entry's signature."))
    outcome: Outcome = Field(default=Outcome.FAIL,
                             description="The outcome it has: " + ", ".join(SIGNATURE_OUTCOMES) + ".")
    classes: list[str] = Field(default_factory=list, description="With outcome fail: its set of mismatch classes.")
    reason: str = Field(min_length=1, description="Why the candidate differs from the oracle here.")
    link: str | None = Field(default=None, description="Where the difference is explained (changelog, issue).")
    first_seen: date | None = Field(default=None, description=(
        "The date (YYYY-MM-DD) of the first run that saw the divergence; `expectations update` writes it."))
    last_seen: date | None = Field(default=None, description=(
        "The date (YYYY-MM-DD) of the latest run that saw the divergence; `expectations update` stamps it."))
    expires: date | None = Field(default=None, description=(
        "A date (YYYY-MM-DD) after which the entry no longer applies: a run dated later counts the divergence as "
        "new and names the entry as expired. Written by hand, never by `expectations update`."))

    @field_validator(*DATES, mode="before")
    @classmethod
    def _iso_date(cls, value: Any) -> Any:
        # Pydantic alone would also take a number of seconds, or a date and time: neither is a day someone wrote.
        if isinstance(value, date) or value is None:
            return value
        if not isinstance(value, str) or not ISO_DATE.fullmatch(value):
            raise ValueError(f"a date is written YYYY-MM-DD, got {value!r}")
        return value

    @model_validator(mode="after")
    def _dates_in_order(self) -> KnownDivergence:
        if self.first_seen is not None:
            for name in ("last_seen", "expires"):
                later = getattr(self, name)
                if later is not None and later < self.first_seen:
                    raise ValueError(f"{name} {later} is before first_seen {self.first_seen}")
        return self

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
    def behaviour(self) -> bool:
        """Whether the entry names a behaviour of the surface's generated inputs, not one input."""
        return self.id.endswith("::" + GENERATED_ANY)

    @property
    def key(self) -> str:
        """What tells the entry apart in its file: its id, and for a behaviour its signature too."""
        return entry_key(self.id, self.outcome, self.classes)

    @property
    def signature(self) -> Signature:
        return Signature(self.outcome, tuple(MismatchClass(c) for c in self.classes))

    def expired_on(self, day: date) -> bool:
        """Whether the entry no longer applies to a run of ``day``: it applies up to its ``expires`` date."""
        return self.expires is not None and day > self.expires


def entry_key(entry_id: str, outcome: str, classes: Iterable[str]) -> str:
    """An entry's :attr:`KnownDivergence.key` from its parts as written (a behaviour has one per signature)."""
    if not entry_id.endswith("::" + GENERATED_ANY):
        return entry_id
    return f"{entry_id} {describe(Signature(Outcome(outcome), tuple(MismatchClass(c) for c in sorted(set(classes)))))}"


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
        root = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)  # safe: a SafeLoader, dates left as text
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
            return [(item.start_mark.line + 1, _node_key(item)) for item in value.value]
    return []


def _node_key(item: yaml.Node) -> str | None:
    """The key of an entry as written (:func:`entry_key`), or its id alone when its signature is unreadable."""
    if not isinstance(item, yaml.MappingNode):
        return None
    keys = {getattr(k, "value", None): v for k, v in item.value}
    node = keys.get("id")
    if not isinstance(node, yaml.ScalarNode):
        return None
    outcome, classes = keys.get("outcome"), keys.get("classes")
    try:
        return entry_key(node.value, outcome.value if isinstance(outcome, yaml.ScalarNode) else Outcome.FAIL.value,
                         [c.value for c in classes.value] if isinstance(classes, yaml.SequenceNode) else [])
    except (ValueError, AttributeError):  # the model names the bad outcome or class
        return str(node.value)


def entry_lines(path: Path) -> dict[str, int]:
    """The line of each entry of a file ``checked`` found sound, by key (:attr:`KnownDivergence.key`)."""
    root = yaml.compose(path.read_text(encoding="utf-8"), Loader=_Loader)
    return {entry_id: line for line, entry_id in _entry_lines(root) if entry_id is not None}


@dataclass(frozen=True)
class Coverage:
    """Which entries a run speaks for: a generated input's id when its surface's generator ran; a case id when
    cases of its surface ran, it matches the --case globs, if any, and it falls to the run's shard, if any.

    Within it, an entry that names nothing the run saw is stale (the run fails) or fixed (``expectations update``
    prunes it); outside it, the entry is unobserved, and kept as it is.
    """

    case_surfaces: frozenset[str]
    generators: frozenset[str]
    case_globs: tuple[str, ...] = ()
    shard: Shard | None = None
    only: frozenset[str] | None = None  # a run cut short speaks only for the ids it got to

    def covers(self, entry_id: str) -> bool:
        if self.only is not None and entry_id not in self.only:
            return False
        surface, _, slug = entry_id.partition("::")
        if slug.startswith("gen-"):
            return surface in self.generators
        patterns = [re.compile(re.escape(glob).replace(r"\*", ".*")) for glob in self.case_globs]
        return (surface in self.case_surfaces and (not patterns or any(p.fullmatch(entry_id) for p in patterns))
                and (self.shard is None or self.shard.takes(entry_id)))

    @classmethod
    def of_report(cls, header: Header, records: Iterable[CaseLine], generated: Iterable[GeneratedLine],
                  finished: bool) -> Coverage:
        """What a report's run covered: the surfaces of its header whose cases it ran (or whose generator)."""
        records = list(records)
        ran = {r.surface for r in records if not r.generated}
        return cls(
            case_surfaces=frozenset(s for s in header.surfaces if s in ran),
            generators=frozenset(g.surface for g in generated if g.surface in header.surfaces),
            case_globs=tuple(header.case_globs or ()),
            shard=Shard(header.shard.index, header.shard.count) if header.shard else None,
            only=None if finished else frozenset(r.id for r in records))


@dataclass
class Expectations:
    """A loaded file applied to the records of one run, on the run's date (``on``: entries expire by it).

    ``entries`` are those naming a case or an input, by id; ``behaviours`` those naming every generated input of a
    surface with a signature (``SURFACE::gen-*``), consulted for a generated input no entry names.
    """

    path: Path
    entries: dict[str, KnownDivergence]
    on: date | None = None
    seen: set[str] = field(default_factory=set)
    behaviours: list[KnownDivergence] = field(default_factory=list)
    met_expired: set[str] = field(default_factory=set)  # keys of behaviours a run met after they expired

    @classmethod
    def from_file(cls, path: Path, on: date | None = None) -> Expectations:
        divergences = load(path).divergences
        return cls(path, {e.id: e for e in divergences if not e.behaviour}, on,
                   behaviours=[e for e in divergences if e.behaviour])

    def dated(self, on: date) -> Expectations:
        """The file as it applies to a run of ``on`` (nothing applied yet)."""
        return dataclasses.replace(self, on=on, seen=set(), met_expired=set())

    def _applies(self, entry: KnownDivergence) -> bool:
        return self.on is None or not entry.expired_on(self.on)

    def apply(self, record: CaseLine) -> CaseLine:
        """The record as the file has it: a new line where an entry names it (the record itself otherwise)."""
        entry = self.entries.get(record.id)
        if entry is None:
            return self._as_behaviour(record)
        self.seen.add(record.id)
        got = record.signature
        if not self._applies(entry):
            if got is None:
                return record
            return self._expired(record, entry)
        if got is None:
            return record.amended(
                outcome=Outcome.XPASS,
                detail=(f"listed in {self.path.name} as a known divergence ({describe(entry.signature)}: "
                        f"{entry.reason}), but conforms: the entry is out of date"))
        if got == entry.signature:
            return _expected(record, entry)
        note = f"known divergence in {self.path.name} is {describe(entry.signature)}, this one is {describe(got)}"
        return record.amended(detail=f"{note}\n{record.detail}" if record.detail else note)

    def _as_behaviour(self, record: CaseLine) -> CaseLine:
        """A generated input no entry names, as a behaviour entry of its surface and signature has it."""
        got = record.signature
        if not record.generated or got is None:
            return record
        entry = next((b for b in self.behaviours if b.surface == record.surface and b.signature == got), None)
        if entry is None:
            return record
        if not self._applies(entry):
            self.met_expired.add(entry.key)
            return self._expired(record, entry)
        return _expected(record, entry)

    def _expired(self, record: CaseLine, entry: KnownDivergence) -> CaseLine:
        note = f"known divergence in {self.path.name} expired on {entry.expires}: it counts as new"
        return record.amended(detail=f"{note}\n{record.detail}" if record.detail else note)

    def stale(self, coverage: Coverage) -> list[str]:
        """Entries within the run's coverage that named no case of it."""
        return sorted(i for i in self.entries if i not in self.seen and coverage.covers(i))

    def expired(self, ids: Iterable[str]) -> list[str]:
        """The entries naming one of ``ids`` (the run's cases and findings) that no longer apply on its date, and
        the behaviours (by key) a finding of the run met after they expired."""
        named = {i for i in ids if i in self.entries and not self._applies(self.entries[i])}
        return sorted(named | self.met_expired)


def _expected(record: CaseLine, entry: KnownDivergence) -> CaseLine:
    return record.amended(outcome=Outcome.XFAIL, expected_divergence=ExpectedDivergence(
        outcome=entry.outcome, classes=entry.signature.classes, reason=entry.reason, link=entry.link))


@dataclass
class Refresh:
    """What ``refreshed`` did to each entry, by id. ``kept`` are the file's entries that stay: those the run saw
    (``stamped``, some ``updated`` to the divergence seen) and those it did not cover, or behaviours no finding
    met (``unobserved``);
    ``pruned`` are those it covered and did not see (fixed); ``expired`` those of the new file that no longer
    apply on the run's date."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    stamped: list[str] = field(default_factory=list)
    unobserved: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)

    @property
    def kept(self) -> list[str]:
        return sorted(self.stamped + self.unobserved)


def refreshed(records: Iterable[CaseLine], coverage: Coverage, on: date, previous: ExpectationFile | None,
              candidate: str | None, oracle: str | None) -> tuple[ExpectationFile, Refresh]:
    """The expectation file a report of a run of ``on`` calls for, and what changed.

    Every divergence of the report is listed; an entry already in ``previous``
    keeps its reason, link, ``first_seen`` and ``expires``, and its
    ``last_seen`` becomes the run's date (never an earlier one: an older
    report does not take it back). A new one is first and last seen on the
    run's date. Entries the run does not cover are kept as they are
    (unobserved); the others are pruned when the report shows no divergence
    for them, except a behaviour (``SURFACE::gen-*``): a generated input the
    file does not name, diverging as one of its behaviours, stamps that
    behaviour and adds nothing, and a behaviour no finding met is kept.
    """
    old = {e.key: e for e in (previous.divergences if previous else [])}
    behaviours = [e for e in old.values() if e.behaviour]
    entries: dict[str, KnownDivergence] = {}
    changes = Refresh()
    for record in records:
        sig = record.signature
        if sig is None:
            continue
        before = old.get(record.id)
        if before is None and record.generated:
            before = next((b for b in behaviours if b.surface == record.surface and b.signature == sig), None)
            if before is not None:  # the behaviour it is: stamped once, however many inputs met it
                if before.key not in entries:
                    entries[before.key] = _stamped(before, on)
                    changes.stamped.append(before.key)
                continue
        classes = [c.value for c in sig.classes]
        if before is None:
            reason = "not yet reviewed: " + record.first_difference()[:300]
            entries[record.id] = KnownDivergence(id=record.id, outcome=sig.outcome, classes=classes, reason=reason,
                                                 first_seen=on, last_seen=on)
            changes.added.append(record.id)
        else:
            entries[record.id] = _stamped(before, on).model_copy(update={"outcome": sig.outcome, "classes": classes})
            changes.stamped.append(record.id)
            if before.signature != sig:
                changes.updated.append(record.id)
    for key, entry in old.items():
        if key in entries:
            continue
        if coverage.covers(entry.id) and not entry.behaviour:  # a behaviour unmet is a sample's chance
            changes.pruned.append(key)
        else:
            entries[key] = entry
            changes.unobserved.append(key)
    ordered = [entries[i] for i in sorted(entries)]
    changes.expired = [e.key for e in ordered if e.expired_on(on)]
    return ExpectationFile(candidate=candidate, oracle=oracle, divergences=ordered), changes


def _stamped(entry: KnownDivergence, on: date) -> KnownDivergence:
    """The entry seen by a run of ``on``: its ``last_seen`` that date, never an earlier one (an older report does
    not take it back)."""
    return entry.model_copy(update={"last_seen": max(on, entry.last_seen) if entry.last_seen else on})
