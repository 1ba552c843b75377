"""The harness's exceptions: one root, usage errors told apart from run failures.

    HarnessError            the root: nothing the harness raises on purpose is outside it
      UsageError            the run cannot start as asked: a bad option, spec or report (exit
                            status 2); ``details`` lists the individual problems, each on a
                            line of its own
        OptionError         a run option's value that cannot be used; ``option`` names it, as
                            each front end spells it (``--NAME``, ``--conformance-NAME``)
        ConfigurationError  a usage error in a file or set-up the run reads: a case file,
                            an expectation file, the mutant catalogue, an oracle environment
      RunFailure            a run that started could not finish its work for a reason
                            that is no candidate's outcome (exit status 1)

An error is raised where the mistake is found, as the kind it is, with the
message the user reads: nothing crosses a layer as a ``ValueError`` to be
translated later, and only the command's entry point prints one (its
details, then ``error: MESSAGE``) and exits with its ``exit_code``.

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

    def within(self, context: str) -> HarnessError:
        """The same kind of error, said of ``context`` (a release, an option, an oracle): ``CONTEXT: MESSAGE``."""
        kind = next(k for k in (ConfigurationError, UsageError, RunFailure, HarnessError) if isinstance(self, k))
        return kind(f"{context}: {self}", self.details)


class UsageError(HarnessError):
    """The run cannot start as asked (exit status 2); the message says why."""

    exit_code = 2


class OptionError(UsageError):
    """A run option's value that cannot be used (exit status 2): ``option`` is its name in
    conformance.run.flags, which each front end prints as it spells the option."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


class ConfigurationError(UsageError):
    """A file or set-up the run reads is wrong (exit status 2): the message names it and what is wrong."""


class RunFailure(HarnessError):
    """A started run could not finish for a reason that is not the candidate's outcome (exit status 1)."""

    exit_code = 1
