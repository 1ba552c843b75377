"""The JSONL report's lines as typed values: one model per line type, told apart by ``type``.

A report is a ``header``, then ``case`` lines (a case, or a generated
divergence), ``generated`` lines (a surface's generator finished) and
``candidate`` lines (the candidate failed to start or to stop), then a
``footer``. Writers build these models; every reader validates each line
into them (:mod:`conformance.report.reader`), so nothing above this layer
looks a field up by a string key. The published JSON Schema of a line is
``conformance/schemas/report-line.json``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

from conformance.connection.protocol import Implementation
from conformance.connection.spec import harbor_release
from conformance.core.compare import Mismatch, MismatchClass, Result, UlpBucket
from conformance.core.features import Gate, falls_short
from conformance.core.outcomes import DIVERGING, Outcome, ProtocolError, ReplyKind, RunWarning
from conformance.kit import wire

REPORT_VERSION = 1
# What a report keeps of what an implementation said: a candidate is untrusted and its replies may be as long as
# a protocol line. Each string cut says how long it was; what is cut is never compared (comparing is done first).
MESSAGE_LIMIT = 2000  # characters of an exception message, an exception's class name, a mismatch's side
DETAIL_LIMIT = 64 * 1024  # characters of a detail: a skip reason, an error's message and traceback, a stderr tail
OUTPUT_LIMIT = 64 * 1024  # characters of a candidate's output (its wire form as JSON)
MISMATCH_LIMIT = 100  # mismatches a case line lists (and the first of each class not among them)
_CUT_NOTE = re.compile(r"… \(\d+ characters\)\Z")
_JSON = json.JSONEncoder(ensure_ascii=False)  # made once: json.dumps makes one per call with these options


def bounded(text: str | None, limit: int = MESSAGE_LIMIT) -> str | None:
    """``text`` as a report keeps it: at most ``limit`` characters, and the length it had when cut.

    A text already cut (a report read back) is left as it is.
    """
    if text is None or len(text) <= limit or (len(text) <= limit + 40 and _CUT_NOTE.search(text)):
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


def _bounded_json(value: Any, limit: int = MESSAGE_LIMIT) -> Any:
    """A JSON value with each string (dict keys included) cut to ``limit`` characters."""
    if isinstance(value, str):
        return bounded(value, limit)
    if isinstance(value, list):
        return [_bounded_json(item, limit) for item in value]
    if isinstance(value, dict):
        return {_bounded_json(key, limit): _bounded_json(item, limit) for key, item in value.items()}
    return value


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Line(_Model):
    """A line is a value: decided once, never changed (a changed line is a new one, e.g. ``CaseLine.amended``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str  # each line type narrows it to its literal

    # Case lines leave out what is at its default (no mismatches, no detail): there are many of them. They
    # hold wire values, where a null is a value: only defaults are left out, never a None that was given.
    compact: ClassVar[bool] = False

    def to_json(self) -> dict[str, Any]:
        if self.compact:
            data = self.model_dump(mode="json", exclude_defaults=True, exclude={"type"})
        else:
            data = self.model_dump(mode="json", exclude_none=True, exclude={"type"})
        return {"type": self.type, **data}


# -- header ------------------------------------------------------------------


class Party(_Model):
    """The oracle or the candidate: its spec as given, and what its handshake said (None: it never started).

    Each string of the handshake is cut as an exception's message is.
    """

    spec: str
    implementation: Implementation | None = None

    @field_validator("implementation")
    @classmethod
    def _bounded(cls, implementation: Implementation | None) -> Implementation | None:
        if implementation is None:
            return None
        data = implementation.model_dump(mode="json")
        kept = _bounded_json(data)
        return implementation if kept == data else Implementation.model_validate(kept)

    @property
    def harbor_release(self) -> str | None:
        """The harbor release its spec names (``harbor==VERSION``: a gate report's candidate); None otherwise."""
        return harbor_release(self.spec)

    @property
    def identity(self) -> Identity:
        """Who it is across versions and runs: its handshake's name and language, whatever spec started it (a
        path on the machine that ran it); its spec when it never started."""
        if self.implementation is None:
            return Identity(_shown(self.spec, SPEC_SHOWN), None)
        return Identity(_shown(self.implementation.name, NAME_SHOWN), _shown(self.implementation.language, NAME_SHOWN))

    @property
    def version(self) -> str | None:
        return _shown(self.implementation.version, NAME_SHOWN) if self.implementation is not None else None

    @property
    def display_name(self) -> str:
        """What every output calls it: name and version as its handshake says (``fastsum 1.2``); its spec, saying
        so, when it never started (``exec:./fastsum (never started)``)."""
        if self.version is None:
            return f"{self.identity.name} (never started)"
        return f"{self.identity.name} {self.version}"

    @property
    def described(self) -> str:
        """Its name with its spec beside it: ``fastsum 1.2 (exec:./fastsum)``."""
        if self.implementation is None:
            return self.display_name
        return f"{self.display_name} ({_shown(self.spec, SPEC_SHOWN)})"

    @property
    def file_stem(self) -> str:
        """Its name as a file name (a report's, by default): ``conformance-NAME-VERSION``, or
        ``conformance-never-started-SPEC``. One safe name whatever the candidate calls itself: ASCII letters,
        digits, ``.``, ``_`` and ``-`` only, never a path, at most 120 characters (a cut name ends with a hash of
        the whole, so two long names that begin alike stay two files)."""
        if self.implementation is None:
            return "conformance-never-started-" + _file_safe(self.spec, 80)
        return f"conformance-{_file_safe(self.implementation.name, 70)}-{_file_safe(self.implementation.version, 30)}"


# How much of an untrusted name an output shows: a line of a terminal, a heading.
NAME_SHOWN = 80
SPEC_SHOWN = 200


@dataclass(frozen=True)
class Identity:
    """A candidate as the site keeps its runs together: its name and language (None: it never started, the name
    is its spec)."""

    name: str
    language: str | None


_HIDDEN = re.compile(r"C|Z[lp]")  # the Unicode categories a name may not show as themselves


def _shown(text: str, limit: int) -> str:
    """An untrusted name as a line of text: every control, format or separator character (a newline, an escape
    sequence, a right-to-left override) shown as U+FFFD, and cut to ``limit`` characters."""
    kept = "".join("\ufffd" if _HIDDEN.match(unicodedata.category(c)) else c for c in text)
    return kept if len(kept) <= limit else f"{kept[:limit]}…"


def _file_safe(text: str, limit: int) -> str:
    """``text`` as part of a file name: runs of other characters as ``_``, one dot for a run of them (``..`` is
    harmless in a name, but reads as a way up), no leading dot, at most ``limit`` characters."""
    safe = re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9._-]+", "_", text)).strip("._-") or "unnamed"
    if len(safe) <= limit:
        return safe
    return f"{safe[:limit - 9]}_{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


class Generation(_Model):
    """How generated inputs were drawn: enough to draw them again."""

    profile: str
    seed: int
    max_examples: int
    target_ulps: bool = False
    hypothesis: str = ""
    base_seed: int | None = None  # the run's seed, when a shard derived its own from it


class ShardInfo(_Model):
    index: int
    count: int
    cases: list[str] = Field(description="The case ids this shard was given.")


class ResumedRun(_Model):
    started_at: str | None = None
    kept: int


class CombinedPart(_Model):
    shard: str
    report: str
    generation: Generation | None = None


class CampaignInfo(_Model):
    """What a campaign asked for, written before its first task runs."""

    budget_seconds: float = Field(description="The wall-clock time during which tasks were submitted.")
    task_examples: int = Field(description="Examples each task draws.")
    cluster: str = Field(description="'local' (an embedded cluster of worker processes) or the scheduler's address.")
    workers: int | None = Field(default=None, description="The cluster's worker processes when the campaign began.")
    example_database: str | None = Field(default=None, description="Where findings were saved and replayed from.")


def nan_policy_names(text: str) -> tuple[str | None, dict[str, str]]:
    """A header's ``nan_policy`` read: the run's one policy (``--nan-policy``), or None and each surface's own, as
    it lists them (``surface=policy, ...``): names, not yet looked up in the registry."""
    if "=" not in text:
        return text or None, {}
    pairs = (part.partition("=") for part in text.split(","))
    return None, {surface.strip(): name.strip() for surface, _, name in pairs}


class Header(_Line):
    type: Literal["header"] = "header"
    report_version: int = REPORT_VERSION
    suite: str
    suite_version: str
    protocol: int
    comparator: str
    nan_policy: str
    oracle: Party
    candidate: Party
    surfaces: list[str]
    cases_root: str
    generation: Generation | None = None
    expectations: str | None = Field(default=None, description="The expectation file applied, if any.")
    resumed: list[ResumedRun] | None = Field(default=None, description="The interrupted runs this one goes on from.")
    shard: ShardInfo | None = None
    case_globs: list[str] | None = Field(default=None, description="The --case globs that selected the cases, if any.")
    combined: list[CombinedPart] | None = Field(default=None, description="The shards a combined report merges.")
    campaign: CampaignInfo | None = Field(default=None, description="Set when a campaign wrote the report.")
    python: str
    argv: list[str]
    started_at: str

    def policy_named(self, surface: str) -> str | None:
        """The name of the NaN policy a case of ``surface`` was compared by; None where the header names none."""
        every, each = nan_policy_names(self.nan_policy)
        return every or each.get(surface) or None

    @property
    def started_on(self) -> date:
        """The run's date: the day (UTC, as written) it started. ValueError for a ``started_at`` that is no
        ISO date and time."""
        return datetime.fromisoformat(self.started_at).date()


# -- case lines --------------------------------------------------------------


class OutputResult(_Model):
    output: Any = Field(description="The output as a wire value; with `cut`, the start of its JSON, as a string.")
    cut: int | None = Field(default=None, description=(
        f"Set when a candidate's output was longer than {OUTPUT_LIMIT} characters as JSON: that length. "
        "`output` is then its first characters, not a wire value."))

    def to_result(self) -> Result:
        """The result (with ``cut``: the start of the output's JSON, a string: not the output)."""
        if self.cut is not None:
            return Result.of_value(self.output)
        return Result.of_value(wire.decode(self.output), self.output)

    def text(self) -> str:
        if self.cut is not None:
            return f"an output of {self.cut} characters as JSON, cut: {str(self.output)[:MESSAGE_LIMIT]}…"
        return repr(wire.decode(self.output))

    def within_limit(self) -> OutputResult:
        """The output as a report keeps a candidate's: whole up to ``OUTPUT_LIMIT`` characters, else cut."""
        if self.cut is not None:
            return self
        try:
            text = _JSON.encode(self.output)
        except (TypeError, ValueError):  # no JSON form (a test's own object): nothing to measure
            return self
        if len(text) <= OUTPUT_LIMIT:
            return self
        return OutputResult(output=text[:OUTPUT_LIMIT], cut=len(text))


class RaisedResult(_Model):
    raised: str = Field(description="Class name of the exception raised.")
    reason_code: str | None = None
    message: str | None = Field(default=None, description=(
        f"The exception's message, its first {MESSAGE_LIMIT} characters (a longer one says how long it was). "
        "Shown, never compared."))

    @field_validator("raised", "reason_code", "message")
    @classmethod
    def _bounded(cls, text: str | None) -> str | None:
        return bounded(text)

    def to_result(self) -> Result:
        return Result.of_raised(self.raised, self.reason_code, self.message)

    def text(self) -> str:
        code = f" (reason code {self.reason_code})" if self.reason_code else ""
        return f"raises {self.raised}{code}" + (f": {self.message}" if self.message else "")


ResultLine = OutputResult | RaisedResult


def result_line(result: Result) -> ResultLine:
    if result.raised is not None:
        return RaisedResult(raised=result.raised, reason_code=result.reason_code, message=result.message)
    return OutputResult(output=result.wire_form())


def result_text(result: ResultLine | None) -> str:
    """An oracle or candidate result, as Python would show it."""
    return "(no result)" if result is None else result.text()


@dataclass(frozen=True)
class Signature:
    """What a divergence is: its outcome, and for a ``fail`` its set of mismatch classes."""

    outcome: Outcome
    classes: tuple[MismatchClass, ...] = ()

    def __str__(self) -> str:
        return f"{self.outcome} [{', '.join(c.value for c in self.classes)}]" if self.classes else str(self.outcome)


def describe(signature: Signature | None) -> str:
    return "pass" if signature is None else str(signature)


class ExpectedDivergence(_Model):
    """The expectation-file entry an ``xfail`` matched."""

    outcome: Outcome
    classes: list[MismatchClass] = Field(default_factory=list)
    reason: str
    link: str | None = None

    @property
    def signature(self) -> Signature:
        return Signature(self.outcome, tuple(sorted(set(self.classes), key=lambda c: c.value)))


def _bounded_mismatch(mismatch: Mismatch) -> Mismatch:
    path, expected, actual = (bounded(text) or "" for text in (mismatch.path, mismatch.expected, mismatch.actual))
    if (path, expected, actual) == (mismatch.path, mismatch.expected, mismatch.actual):
        return mismatch
    return dataclasses.replace(mismatch, path=path, expected=expected, actual=actual)


def _listed(mismatches: list[Mismatch]) -> tuple[list[Mismatch], int]:
    """The mismatches a case line lists (the first ``MISMATCH_LIMIT``, then the first of each other class), and
    how many it leaves out."""
    if len(mismatches) <= MISMATCH_LIMIT:
        return mismatches, 0
    kept = mismatches[:MISMATCH_LIMIT]
    classes = {m.cls for m in kept}
    for mismatch in mismatches[MISMATCH_LIMIT:]:
        if mismatch.cls not in classes:
            classes.add(mismatch.cls)
            kept.append(mismatch)
    return sorted(kept, key=lambda m: (m.path, m.cls.value)), len(mismatches) - len(kept)


class CaseLine(_Line):
    """One case (or generated divergence) and its outcome.

    What the candidate said is kept within the report's limits (its output,
    a detail, each mismatch's sides, how many mismatches are listed); a cut
    string says how long it was. Every mismatch class found stays listed.
    """

    compact: ClassVar[bool] = True
    type: Literal["case"] = "case"
    id: str
    surface: str
    outcome: Outcome
    origin: Literal["case", "generated"] = "case"
    input: Any = Field(default=None, description="The input, as a wire value: a generated one's always, a case's "
                                                 "when it did not pass (the corpus holds them all).")
    oracle: ResultLine | None = None
    candidate: ResultLine | None = None
    candidate_again: ResultLine | None = Field(default=None, description=(
        "With outcome flaky: the candidate's second answer to the input, unlike its first (`candidate`). A second "
        "reply that was no result (errored, crashed) is told in `detail` instead."))
    protocol_error: ProtocolError | None = None
    recording: Literal["agrees", "stale", "missing"] | None = Field(
        default=None, description="With a live oracle: how it compares with the case's recorded result.")
    expected_divergence: ExpectedDivergence | None = None
    mismatches: list[Mismatch] = Field(default_factory=list)
    more_mismatches: int = Field(default=0, description=(
        f"Mismatches found but not listed: a line lists the first {MISMATCH_LIMIT}, and the first of each class "
        "not among them."))
    recording_mismatches: list[Mismatch] = Field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0

    @field_validator("candidate", "candidate_again")
    @classmethod
    def _bounded_candidate(cls, result: ResultLine | None) -> ResultLine | None:
        return result.within_limit() if isinstance(result, OutputResult) else result

    @field_validator("detail")
    @classmethod
    def _bounded_detail(cls, detail: str) -> str:
        return bounded(detail, DETAIL_LIMIT) or ""

    @field_validator("mismatches", "recording_mismatches")
    @classmethod
    def _bounded_mismatches(cls, mismatches: list[Mismatch]) -> list[Mismatch]:
        return [_bounded_mismatch(m) for m in mismatches]

    @model_validator(mode="after")
    def _listed_mismatches(self) -> CaseLine:
        listed, more = _listed(self.mismatches)
        if more:
            self.__dict__.update(mismatches=listed, more_mismatches=self.more_mismatches + more)
        return self

    def amended(self, **changes: Any) -> CaseLine:
        """A new line: this one with ``changes``, each kept within the report's limits as the validators above
        keep it (without validating the whole line again: what it holds is within them already). The limits'
        constants are OUTPUT_LIMIT, DETAIL_LIMIT, MESSAGE_LIMIT and MISMATCH_LIMIT."""
        for name in ("candidate", "candidate_again"):
            if name in changes:
                changes[name] = self._bounded_candidate(changes[name])
        if "detail" in changes:
            changes["detail"] = self._bounded_detail(changes["detail"])
        if "recording_mismatches" in changes:
            changes["recording_mismatches"] = self._bounded_mismatches(changes["recording_mismatches"])
        if "mismatches" in changes:
            listed, more = _listed(self._bounded_mismatches(changes["mismatches"]))
            changes["mismatches"] = listed
            changes["more_mismatches"] = changes.get("more_mismatches", self.more_mismatches) + more
        return self.model_copy(update=changes)

    @property
    def generated(self) -> bool:
        return self.origin == "generated"

    @property
    def conforms(self) -> bool:
        return self.outcome in (Outcome.PASS, Outcome.XFAIL)

    @property
    def declined(self) -> bool:
        """Whether the candidate declined the input: a skip, or a skip the expectation file lists."""
        if self.outcome is Outcome.XFAIL and self.expected_divergence is not None:
            return self.expected_divergence.outcome is Outcome.SKIP
        return self.outcome is Outcome.SKIP

    @property
    def reproducible(self) -> bool:
        """Whether the line's account shows its repro command: it does not conform, and the candidate was asked
        (a ``broken`` line was never sent: the candidate had been given up on, or never started)."""
        return not self.conforms and self.outcome is not Outcome.BROKEN

    @property
    def stale(self) -> bool:
        return self.recording == "stale"

    @property
    def decoded_input(self) -> Any:
        return wire.decode(self.input)

    @property
    def signature(self) -> Signature | None:
        """(outcome, mismatch classes) of the divergence; None when it conforms. An ``xfail`` keeps the
        signature it was expected with."""
        if self.outcome is Outcome.XFAIL and self.expected_divergence is not None:
            return self.expected_divergence.signature
        if self.outcome not in DIVERGING:
            return None
        return Signature(self.outcome, tuple(sorted({m.cls for m in self.mismatches}, key=lambda c: c.value)))

    def first_difference(self) -> str:
        """One line saying how the case went wrong: its first mismatch, or its detail."""
        if self.outcome is Outcome.FLAKY:  # the first answer's difference; the second is shown beside it
            first = self.mismatches[0].describe(bits=False) if self.mismatches else (self.detail or "").strip()
            return f"answered two ways; first: {first.splitlines()[0] if first else self.outcome}"
        if self.mismatches:
            others = len(self.mismatches) - 1 + self.more_mismatches
            more = f" (+{others} more)" if others else ""
            return self.mismatches[0].describe(bits=False) + more
        if self.stale:
            return "the live oracle disagrees with the case's recorded result"
        return (self.detail or self.outcome).strip()


class GeneratedLine(_Line):
    """A surface's generator finished (its divergences are case lines of their own)."""

    type: Literal["generated"] = "generated"
    surface: str
    profile: str
    seed: int | list[int] = Field(description="The seed; a combined report lists each shard's.")
    max_examples: int
    inputs_run: int
    divergences: list[str] = Field(default_factory=list)
    skipped: int = Field(default=0, description="Generated inputs the candidate declined: no divergence, but they "
                                                "count against conformance, as a skipped case does.")
    skip_reason: str | None = Field(default=None, description="The first of those inputs' skip reasons.")
    rejected: int = Field(default=0, description="Generated inputs the oracle turned away before any scoring (an "
                                                 "exception among the surface's declared rejections).")
    error: str | None = None
    drawn: int = Field(default=0, description=(
        "The inputs its features were counted over: those each round drew up to its first new finding (the "
        "shrinking that follows, a finding's replays and the findings replayed from an example database are "
        "left out)."))
    features: dict[str, int] = Field(default_factory=dict, description=(
        "Each of the surface's features (conformance/surfaces/<surface>/features.py): how many of the drawn "
        "inputs have it."))
    feature_minimums: dict[str, float] = Field(default_factory=dict, description=(
        "The least share of the drawn inputs each feature must reach under the run's profile."))
    feature_gate: Gate = Field(default=Gate.WARN, description=(
        "What a share below its minimum does: `fail` (the run does not conform) or `warn`."))
    unanswered: int = Field(default=0, description=(
        "Generated inputs the oracle gave no answer to (it could not start, or failed on them): left out, neither "
        "passing nor a divergence; a finding may then be unshrunk."))
    unanswered_reason: str | None = Field(default=None, description="The first of those inputs' reasons.")
    replayed: int = Field(default=0, description=(
        "Inputs sent from the stored inputs of an earlier run with the same key (profile, seed, budget, strategy "
        "code, Hypothesis's version), not drawn: all of them when the candidate conformed on each."))

    @field_validator("error", "skip_reason", "unanswered_reason")
    @classmethod
    def _bounded_error(cls, error: str | None) -> str | None:
        return bounded(error, DETAIL_LIMIT)

    def shortfalls(self) -> list[FeatureShortfall]:
        """The features the drawn inputs fall short on (a generator that ran only): under a failing gate, a share
        below the minimum; under a warning gate, one that a strategy at its minimum would seldom draw
        (:func:`conformance.core.features.falls_short`).

        A generator that ended in an error is judged by its error, not by what it drew before it.
        """
        if self.error is not None:
            return []
        found = []
        for name, minimum in sorted(self.feature_minimums.items()):
            count = self.features.get(name, 0)
            short, chance = falls_short(count, self.drawn, minimum, self.feature_gate)
            if short:
                found.append(FeatureShortfall(surface=self.surface, feature=name, count=count, drawn=self.drawn,
                                              share=count / self.drawn if self.drawn else 0.0, minimum=minimum,
                                              gate=self.feature_gate, chance=chance))
        return found


class CandidateLine(_Line):
    """The candidate failed to start or to stop."""

    type: Literal["candidate"] = "candidate"
    stage: Literal["start", "stop"]
    outcome: ReplyKind
    detail: str = ""
    protocol_error: ProtocolError | None = None

    @field_validator("detail")
    @classmethod
    def _bounded_detail(cls, detail: str) -> str:
        return bounded(detail, DETAIL_LIMIT) or ""

    def first_line(self, limit: int = 200) -> str:
        lines = self.detail.strip().splitlines()
        return lines[0][:limit] if lines else ""


# -- footer ------------------------------------------------------------------


class GeneratedSummary(_Model):
    inputs_run: int
    divergences: list[str] = Field(default_factory=list)
    error: str | None = None
    drawn: int = Field(default=0, description="The inputs its features were counted over (see the generated line).")
    features: dict[str, int] = Field(default_factory=dict, description="Drawn inputs with each feature.")


class FeatureShortfall(_Model):
    """A feature of a surface that the run's drawn inputs had less often than its minimum share."""

    surface: str
    feature: str
    count: int = Field(description="Drawn inputs that have the feature.")
    drawn: int = Field(description="Inputs drawn (the share's denominator).")
    share: float = Field(description="count / drawn (0 when none was drawn).")
    minimum: float = Field(description="The least share the run's profile asks for.")
    gate: Gate = Field(description="`fail`: the run does not conform for it; `warn`: it is only said.")
    chance: float | None = Field(default=None, description=(
        "Under a `warn` gate: how likely a strategy that reaches the feature at exactly its minimum share draws it "
        "this rarely or less in as many inputs (a warning is said below 0.01). None under a `fail` gate, which "
        "judges the share itself."))

    def describe(self) -> str:
        """One line: the surface, the feature, the share it reached and its minimum (and, for a warning, how
        unlikely that share is for a strategy at its minimum)."""
        odds = "" if self.chance is None else f" (a strategy at its minimum draws this few {_odds(self.chance)})"
        return (f"{self.surface}: feature {self.feature!r} in {self.share:.1%} of {self.drawn} drawn inputs "
                f"({self.count}), below its minimum {self.minimum:.1%}{odds}")


def _odds(chance: float) -> str:
    """A small chance in words: ``1 time in 430``; ``less than 1 time in a million`` below that."""
    if chance < 1e-6:
        return "less than 1 time in a million"
    return f"1 time in {1 / chance:,.0f}"


class Warned(_Model):
    """A warning a run's lines give (:class:`~conformance.core.outcomes.RunWarning`): on a surface, or on the whole
    run (``surface`` None), with what was counted."""

    name: RunWarning
    surface: str | None = None
    detail: str

    def text(self) -> str:
        return f"{self.name}" + (f" ({self.surface})" if self.surface else "") + f": {self.detail}"


def warning_names(warnings: list[Warned]) -> list[RunWarning]:
    """The names among ``warnings``, each once, in the catalogue's order."""
    given = {w.name for w in warnings}
    return [name for name in RunWarning if name in given]


def verdict(conforms: bool, warnings: list[Warned]) -> str:
    """A run's verdict in words, as every output says it: ``does not conform``, ``conforms``, or ``conforms, with
    warnings: NAME, ...`` (nothing diverged, yet the run is no evidence of conformance)."""
    if not conforms:
        return "does not conform"
    if not warnings:
        return "conforms"
    return "conforms, with warnings: " + ", ".join(warning_names(warnings))


class WorstFloat(_Model):
    """A surface's float mismatch furthest apart: any in the ``far`` bucket before the rest, then the larger
    distance, then the first by case id and path."""

    id: str = Field(description="The case (or generated finding) it is in.")
    path: str = Field(description="Where in the output, as the mismatch names it (`$['mean']`).")
    ulps: int = Field(description="Its ULP distance, as the comparator counts it (through zero).")
    bucket: UlpBucket

    def text(self) -> str:
        """``ID at PATH: N ULPs``, and ``(far)`` for a far one (of different signs, it can be few ULPs)."""
        far = " (far)" if self.bucket is UlpBucket.FAR else ""
        return f"{self.id} at {self.path}: {self.ulps} ULP{'' if self.ulps == 1 else 's'}{far}"


class UlpDistances(_Model):
    """One surface's float mismatches (classes `ulp` and `float-far`: the two that have a distance) by ULP
    distance: every mismatch a case line lists, whatever the line's outcome (an xfail's too)."""

    buckets: dict[UlpBucket, int] = Field(description=(
        "Mismatches per bucket, every bucket present: `1`, `2-4`, `5-16`, `17-2^10` (17 to 1024), `2^10-2^20` "
        "(1025 to 2^20), `far` (class float-far: different signs, or more than 2^20 apart)."))
    worst: WorstFloat


class Footer(_Line):
    type: Literal["footer"] = "footer"
    finished_at: str
    total: int
    outcomes: dict[Outcome, int]
    by_surface: dict[str, dict[Outcome, int]]
    stale_recordings: list[str] = Field(default_factory=list)
    generated: dict[str, GeneratedSummary] = Field(default_factory=dict)
    findings: int = 0
    expected_findings: int = 0
    stale_expectations: list[str] = Field(default_factory=list)
    expired_expectations: list[str] = Field(default_factory=list, description=(
        "Expectation entries past their `expires` date on the run's date, naming a case of the run: their "
        "divergences counted as new."))
    protocol_errors: dict[ProtocolError, int] = Field(default_factory=dict)
    candidate_problems: list[str] = Field(default_factory=list)
    batch_fallbacks: int = 0
    cached_answers: int = Field(default=0, description="Oracle answers taken from the oracle answer cache, not "
                                                       "asked of the oracle (a run with --no-oracle-cache: 0).")
    recorded_answers: int = Field(default=0, description=(
        "Oracle answers taken from the answers that ship with the suite (oracles/recordings/), looked up before the "
        "cache: neither these nor the cached ones were asked of the oracle (a run with --no-oracle-cache: 0)."))
    recorded_inputs: int = Field(default=0, description=(
        "Generators whose inputs were the suite's recorded ones for the run's key, sent without drawing."))
    ulp_distances: dict[str, UlpDistances] = Field(default_factory=dict, description=(
        "Per surface with a float mismatch: their ULP distances in buckets, and the worst one. Counted from the "
        "case lines, as the outcomes are."))
    feature_shortfalls: list[FeatureShortfall] = Field(default_factory=list, description=(
        "Features the generators reached less often than their minimum share; one whose gate is `fail` makes "
        "the run not conform."))
    conforms: bool
    warnings: list[Warned] = Field(default_factory=list, description=(
        "What makes the run no evidence of conformance although nothing diverged (docs/warnings.md): a reader "
        "finds them again from the report's lines."))

    def passes(self, strict_warnings: bool = False) -> bool:
        """Whether the run exits 0: it conforms, and with ``strict_warnings`` has no warning."""
        return self.conforms and not (strict_warnings and self.warnings)


Line = Annotated[Header | CaseLine | GeneratedLine | CandidateLine | Footer, Field(discriminator="type")]
LINE_ADAPTER: TypeAdapter[Header | CaseLine | GeneratedLine | CandidateLine | Footer] = TypeAdapter(Line)


def schema() -> dict[str, Any]:
    """The JSON Schema of one report line."""
    out = LINE_ADAPTER.json_schema()
    out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    out["title"] = f"harbor-conformance report {REPORT_VERSION}: a line"
    out["description"] = ("A JSONL report is a header line, case / generated / candidate lines, and a footer line "
                          "(absent when the run did not finish).")
    return out
