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

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from conformance.connection.protocol import Implementation
from conformance.core.compare import Mismatch, MismatchClass, Result
from conformance.core.outcomes import DIVERGING, Outcome, ProtocolError, ReplyKind
from conformance.kit import wire

REPORT_VERSION = 1
MESSAGE_LIMIT = 2000  # characters of an exception message a report keeps


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Line(_Model):
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
    """The oracle or the candidate: its spec as given, and what its handshake said (None: it never started)."""

    spec: str
    implementation: Implementation | None = None


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
    python: str
    argv: list[str]
    started_at: str


# -- case lines --------------------------------------------------------------


class OutputResult(_Model):
    output: Any = Field(description="The output as a wire value.")

    def to_result(self) -> Result:
        return Result.of_value(wire.decode(self.output), self.output)

    def text(self) -> str:
        return repr(wire.decode(self.output))


class RaisedResult(_Model):
    raised: str = Field(description="Class name of the exception raised.")
    reason_code: str | None = None
    message: str | None = Field(default=None, description=(
        f"The exception's message, its first {MESSAGE_LIMIT} characters (a longer one says how long it was). "
        "Shown, never compared."))

    def to_result(self) -> Result:
        return Result.of_raised(self.raised, self.reason_code, self.message)

    def text(self) -> str:
        code = f" (reason code {self.reason_code})" if self.reason_code else ""
        return f"raises {self.raised}{code}" + (f": {self.message}" if self.message else "")


ResultLine = OutputResult | RaisedResult


def bounded(text: str | None, limit: int = MESSAGE_LIMIT) -> str | None:
    """``text`` as a report keeps it: at most ``limit`` characters, and the length it had when cut."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


def result_line(result: Result) -> ResultLine:
    if result.raised is not None:
        return RaisedResult(raised=result.raised, reason_code=result.reason_code, message=bounded(result.message))
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


class CaseLine(_Line):
    """One case (or generated divergence) and its outcome."""

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
    protocol_error: ProtocolError | None = None
    recording: Literal["agrees", "stale", "missing"] | None = Field(
        default=None, description="With a live oracle: how it compares with the case's recorded result.")
    expected_divergence: ExpectedDivergence | None = None
    mismatches: list[Mismatch] = Field(default_factory=list)
    recording_mismatches: list[Mismatch] = Field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0

    @property
    def generated(self) -> bool:
        return self.origin == "generated"

    @property
    def conforms(self) -> bool:
        return self.outcome in (Outcome.PASS, Outcome.XFAIL)

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
        if self.mismatches:
            more = f" (+{len(self.mismatches) - 1} more)" if len(self.mismatches) > 1 else ""
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
    error: str | None = None


class CandidateLine(_Line):
    """The candidate failed to start or to stop."""

    type: Literal["candidate"] = "candidate"
    stage: Literal["start", "stop"]
    outcome: ReplyKind
    detail: str = ""
    protocol_error: ProtocolError | None = None

    def first_line(self, limit: int = 200) -> str:
        lines = self.detail.strip().splitlines()
        return lines[0][:limit] if lines else ""


# -- footer ------------------------------------------------------------------


class GeneratedSummary(_Model):
    inputs_run: int
    divergences: list[str] = Field(default_factory=list)
    error: str | None = None


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
    protocol_errors: dict[ProtocolError, int] = Field(default_factory=dict)
    candidate_problems: list[str] = Field(default_factory=list)
    batch_fallbacks: int = 0
    conforms: bool


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
