"""Each run option declared once: its name, its help, its bounds, what its default is in words.

The front ends spell them from here: the ``conformance`` command's options
(``--NAME``; :mod:`conformance.cli.options`), the pytest plugin's
(``--conformance-NAME``, ini ``conformance_NAME``;
:mod:`conformance.pytest_plugin.options`) and the campaign command's, so
an option's help says the same thing wherever it is given; the values they
read become :class:`conformance.run.plan.Options`, typed. A front end may
have its own default (the plugin's profile is ci, a campaign's explore):
each shows its own.

Standard library only: the pytest plugin declares its options from here in
every pytest run, before it knows whether it is on.
"""

from __future__ import annotations

from dataclasses import dataclass

# The connector kinds, as a candidate is written (conformance.connection.connectors; its table's usages are
# checked against this by tests/test_options.py).
CANDIDATE_KINDS = "reference, module:attr, exec:COMMAND, harbor==VERSION, evsys:NAME, or a registered NAME"


@dataclass(frozen=True)
class Flag:
    """One option: ``--NAME`` on the command line."""

    name: str
    help: str  # a sentence or two, the same in every front end
    short: str | None = None  # the command line's one-letter name (-c)
    metavar: str | None = None  # what the value is called; None: a switch, without a value
    minimum: float | None = None  # the least value a number may take
    above: bool = False  # the number must be more than ``minimum``
    default: str | None = None  # the default in words, where no value says it

    @property
    def names(self) -> list[str]:
        return [f"--{self.name}", *([self.short] if self.short else [])]

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    def out_of_bounds(self, value: float) -> str | None:
        """Why a number given for this option cannot be used (None: it can)."""
        if self.minimum is None or (value > self.minimum or (value == self.minimum and not self.above)):
            return None
        return f"expected a number {'above' if self.above else 'at least'} {self.minimum:g}, got {value!r}"


FLAGS = {flag.name: flag for flag in (
    Flag("candidate", f"The candidate: {CANDIDATE_KINDS} (an entry point in the harbor_conformance.candidates "
                      "group).", short="-c", metavar="SPEC"),
    Flag("oracle", "The oracle: harbor==VERSION (live), or 'recorded' for the corpus's recorded results.",
         metavar="SPEC"),
    Flag("surface", "Only these surfaces (repeatable).", short="-s", metavar="SURFACE"),
    Flag("timeout", "Seconds a candidate may take per request.", metavar="SECONDS", minimum=0, above=True),
    Flag("timeout-multiplier", "Scale the candidate's request, start and stop timeouts (a slow runtime, a loaded "
                               "machine).", metavar="X", minimum=0.01),
    Flag("broken-after", "Declare the candidate broken after this many consecutive crashes, timeouts or protocol "
                         "errors: what is left to run is then broken, without being run.", metavar="N", minimum=1),
    Flag("validate-protocol", "Check every candidate message against the published JSON Schemas."),
    Flag("nan-policy", "Override every surface's NaN policy: any-nan-equal, bitwise, or a registered one.",
         metavar="NAME"),
    Flag("expectations", "The candidate's known divergences: listed ones become xfail.", metavar="FILE"),
    Flag("profile", "Generated inputs: ci (a fixed seed and budget), dev, explore.", metavar="NAME"),
    Flag("seed", "The generators' seed: a shard's, or a campaign task's, is derived from it.", metavar="N",
         minimum=0, default="the profile's, or a fresh one"),
    Flag("max-examples", "Generated inputs per surface.", metavar="N", minimum=1, default="the profile's"),
    Flag("example-database", "A Hypothesis example database (a directory, or redis://HOST:PORT): the generators "
                             "replay what it holds first and save their findings there.", metavar="DB"),
    Flag("no-oracle-cache", "Ask the oracle every input: no answer from the oracle answer cache, none stored "
                            "(`conformance cache`)."),
    Flag("no-cases", "Skip the declared cases; generated inputs only."),
    Flag("no-generate", "Skip the generated inputs; declared cases only."),
    Flag("report", "Where to write the JSONL report.", metavar="PATH"),
)}
