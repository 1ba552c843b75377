"""The harness's exceptions: one root, usage errors told apart from run failures.

    HarnessError            the root: nothing the harness raises on purpose is outside it
      UsageError            the run cannot start as asked: a bad option, spec, case file,
                            report or oracle set-up (exit status 2); ``details`` lists
                            the individual problems, each on a line of its own
      RunFailure            a run that started could not finish its work for a reason
                            that is no candidate's outcome (exit status 1)

A candidate's misbehaviour is never an exception of the harness: it is an
outcome in the report. The candidate kit (``conformance.kit``) has its own
errors, because it runs where the harness is absent.
"""

from __future__ import annotations


class HarnessError(Exception):
    """Root of every error the harness raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.details = list(details or [])


class UsageError(HarnessError):
    """The run cannot start as asked (exit status 2); the message says why."""

    exit_code = 2


class RunFailure(HarnessError):
    """A started run could not finish for a reason that is not the candidate's outcome (exit status 1)."""

    exit_code = 1
