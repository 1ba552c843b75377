"""The suite's vocabularies: what a candidate's reply is, what went wrong with it, what a case's outcome is.

They are string enums: each member is its own name in reports and on the
command line, and compares equal to it.
"""

from __future__ import annotations

from enum import StrEnum


class ReplyKind(StrEnum):
    """What one answer to one request was, as the runner sees it."""

    OUTPUT = "output"
    RAISED = "raised"
    SKIPPED = "skipped"
    ERRORED = "errored"
    CRASH = "crash"
    TIMEOUT = "timeout"
    PROTOCOL_ERROR = "protocol-error"
    BROKEN = "broken"  # not asked: the candidate had been given up on


# Replies after which the candidate process is gone or out of step.
LOST = frozenset({ReplyKind.CRASH, ReplyKind.TIMEOUT, ReplyKind.PROTOCOL_ERROR})


class ProtocolError(StrEnum):
    """Every way a candidate's message can break the protocol, by name (docs/protocol.md)."""

    MALFORMED_JSON = "malformed-json"  # a line that is not JSON (or uses NaN/Infinity tokens)
    SPLIT_REPLY = "split-reply"  # a line holding the start of a JSON object: a reply broken over lines
    NOT_PROTOCOL = "not-protocol"  # not a message at all: a log line, a blank line, a bare value
    OVERSIZED_LINE = "oversized-line"  # a line longer than the harness accepts
    TOO_DEEP = "too-deep"  # a line (or an in-process output) nesting arrays and objects past the limit
    NUMBER_TOO_LARGE = "number-too-large"  # a JSON number token longer than the limit
    WRONG_SEQ = "wrong-seq"  # a reply whose seq is not the request's
    UNSOLICITED_REPLY = "unsolicited-reply"  # a second reply, or a line while no request is outstanding
    INVALID_REPLY = "invalid-reply"  # a JSON object of the wrong shape, or an output that is no wire value
    UNDECLARED_SURFACE = "undeclared-surface"  # an answer for a surface the handshake does not list
    SCHEMA_VIOLATION = "schema-violation"  # (--validate-protocol) refused by the published JSON Schema
    BAD_HANDSHAKE = "bad-handshake"  # (on a restart) the reply to start is not a valid handshake


class Outcome(StrEnum):
    """What became of one case (or generated input)."""

    PASS = "pass"  # the candidate's result conforms to the oracle's
    FAIL = "fail"  # it does not (the record lists every mismatch)
    FLAKY = "flaky"  # it diverged, and asked the same input again it answered otherwise (both answers kept)
    ERROR = "error"  # the candidate answered `errored` (or the oracle could not answer)
    CRASH = "crash"  # the candidate process died (it is restarted for the next case)
    TIMEOUT = "timeout"  # no reply in time (the process is killed and restarted)
    PROTOCOL_ERROR = "protocol-error"  # the reply broke the protocol (`protocol_error` names the rule)
    BROKEN = "broken"  # not run: the candidate had been declared broken
    SKIP = "skip"  # the candidate declined the surface; counts against conformance
    XFAIL = "xfail"  # a divergence listed, as it is, in the candidate's expectation file
    XPASS = "xpass"  # a case listed there that conforms: the entry is out of date (fails the run)


CONFORMING = frozenset({Outcome.PASS, Outcome.XFAIL})
# The outcomes of a divergence: what an expectation file can list.
DIVERGING = frozenset({Outcome.FAIL, Outcome.FLAKY, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT,
                       Outcome.PROTOCOL_ERROR, Outcome.BROKEN, Outcome.SKIP})


def outcome_of(kind: ReplyKind) -> Outcome:
    """The outcome of a case whose candidate reply was not a result (an output or an exception)."""
    return {ReplyKind.ERRORED: Outcome.ERROR, ReplyKind.SKIPPED: Outcome.SKIP, ReplyKind.CRASH: Outcome.CRASH,
            ReplyKind.TIMEOUT: Outcome.TIMEOUT, ReplyKind.PROTOCOL_ERROR: Outcome.PROTOCOL_ERROR,
            ReplyKind.BROKEN: Outcome.BROKEN}[kind]


class RunWarning(StrEnum):
    """A run with no divergence that is still no evidence of conformance: an empty pass, by name (docs/warnings.md).

    Each is read from a report's lines alone, so every reader of a report (``summary``, ``combine``, the site)
    finds the same ones; a run with one and no divergence "conforms, with warnings".
    """

    MOSTLY_SKIPPED = "mostly-skipped"
    REJECTED_BEFORE_SCORING = "rejected-before-scoring"
    NOTHING_GENERATED = "nothing-generated"
    NOTHING_RAN = "nothing-ran"
    ORACLE_UNANSWERED = "oracle-unanswered"

    @property
    def meaning(self) -> str:
        return _WARNINGS[self][0]

    @property
    def hint(self) -> str:
        return _WARNINGS[self][1]


_WARNINGS = {
    RunWarning.MOSTLY_SKIPPED: (
        "the candidate declined more than half of a surface's inputs (skipped, or skips listed as known)",
        "answer the surface, or leave it out: list only the surfaces you serve in the handshake, or claim a scope"),
    RunWarning.REJECTED_BEFORE_SCORING: (
        "every input of a surface that ran was turned away by the oracle before any scoring (its surface's "
        "rejections)",
        "claim a scope that holds inputs the oracle scores, or run the surface's whole corpus and generator"),
    RunWarning.NOTHING_GENERATED: (
        "a surface's generator ran and sent no input at all (each one drawn was out of scope, or none could be)",
        "see the generator's error; claim a scope its strategy can draw, or run with --no-generate on purpose"),
    RunWarning.NOTHING_RAN: (
        "no case and no generated input ran",
        "check --surface, --case, the candidate's scope and --no-cases / --no-generate"),
    RunWarning.ORACLE_UNANSWERED: (
        "generated inputs the oracle gave no answer to were left out (its environment could not be made, or it "
        "failed on them): a divergence found may be unshrunk, and others unseen",
        "do what the reason says (install a CPython 3.12, or point HARBOR_CONFORMANCE_PYTHON at one) and run again"),
}
assert set(_WARNINGS) == set(RunWarning), "every warning needs a meaning and a hint"
