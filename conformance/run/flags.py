"""Each run option declared once: its name, its help, its bounds, what its default is in words.

The front ends spell them from here: the ``conformance`` command's options
(``--NAME``; :mod:`conformance.cli.options`), the pytest plugin's
(``--conformance-NAME``, ini ``conformance_NAME``;
:mod:`conformance.pytest_plugin.options`), the campaign command's and the
config file's keys (``NAME = VALUE``; :mod:`conformance.run.config`), so
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
    kind: type[str] | type[int] | type[float] = str  # a value's type (a switch, without metavar, is a bool)
    repeatable: bool = False  # given once per value: a list in the config file
    path: bool = False  # a file or folder: in the config file, relative to the file's folder
    choices: tuple[str, ...] = ()  # the values it takes, where they are a fixed few
    in_file: bool = True  # False: an action of one run, which a config file does not take

    @property
    def switch(self) -> bool:
        return self.metavar is None

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
    Flag("surface", "Only these surfaces (repeatable).", short="-s", metavar="SURFACE", repeatable=True),
    Flag("case", "Only case ids matching this glob (repeatable).", short="-k", metavar="GLOB", repeatable=True),
    Flag("cases", "The case corpus folder.", metavar="DIR", path=True),
    Flag("timeout", "Seconds a candidate may take per request.", metavar="SECONDS", minimum=0, above=True,
         kind=float),
    Flag("timeout-multiplier", "Scale the candidate's request, start and stop timeouts (a slow runtime, a loaded "
                               "machine).", metavar="X", minimum=0.01, kind=float),
    Flag("broken-after", "Declare the candidate broken after this many consecutive crashes, timeouts or protocol "
                         "errors: what is left to run is then broken, without being run.", metavar="N", minimum=1,
         kind=int),
    Flag("validate-protocol", "Check every candidate message against the published JSON Schemas."),
    Flag("nan-policy", "Override every surface's NaN policy: any-nan-equal, bitwise, or a registered one.",
         metavar="NAME"),
    Flag("expectations", "The candidate's known divergences: listed ones become xfail.", metavar="FILE", path=True),
    Flag("profile", "Generated inputs: ci (a fixed seed and budget), dev, explore.", metavar="NAME"),
    Flag("seed", "The generators' seed: a shard's, or a campaign task's, is derived from it.", metavar="N",
         minimum=0, default="the profile's, or a fresh one", kind=int),
    Flag("max-examples", "Generated inputs per surface.", metavar="N", minimum=1, default="the profile's", kind=int),
    Flag("example-database", "A Hypothesis example database (a directory, or redis://HOST:PORT): the generators "
                             "replay what it holds first and save their findings there.", metavar="DB", path=True),
    Flag("observations", "Write Hypothesis's observations of the generated inputs to this folder, one JSONL file per "
                         "surface that Tyche reads, each input's features among them.", metavar="DIR", path=True),
    Flag("no-oracle-cache", "Ask the oracle every input: no answer from the oracle answer cache, none stored "
                            "(`conformance cache`)."),
    Flag("no-input-cache", "Draw every generated input: none sent from the inputs an earlier run with the same "
                           "seed stored, none stored (`conformance cache`)."),
    Flag("strict-warnings", "Fail (exit 1) a run that conforms with warnings: nothing diverged, but the run is no "
                            "evidence of conformance (most inputs skipped, all rejected before scoring, nothing "
                            "generated or run; docs/warnings.md)."),
    Flag("no-cases", "Skip the declared cases; generated inputs only."),
    Flag("no-generate", "Skip the generated inputs; declared cases only."),
    Flag("oracle-processes", "Oracle processes that run whole-job cases at once; the extra ones start when such "
                             "cases come.", metavar="N", minimum=1, kind=int),
    Flag("progress", "On stderr while it runs, with each problem as it happens: a live display (live), plain lines "
                     "(lines), or nothing; auto is live on a terminal, lines otherwise.", metavar="MODE",
         choices=("auto", "live", "lines", "none")),
    Flag("report", "Where to write the JSONL report.", metavar="PATH", path=True),
    Flag("markdown", "Also write a Markdown summary here ('-': stdout).", metavar="PATH", path=True),
    Flag("junit", "Also write JUnit XML here.", metavar="PATH", path=True),
    Flag("badge", "Also write a shields.io endpoint badge (JSON) here.", metavar="PATH", path=True),
    # Actions of one run, and the choice of the file itself: on the command line only.
    Flag("resume", "Go on from the report of an interrupted run (at --report), keeping the cases it finished.",
         in_file=False),
    Flag("shard", "Run part I of N (e.g. 2/4): the cases that hash to it, and the generators from a seed of its own "
                  "with 1/N of the budget; `conformance combine` merges the parts.", metavar="I/N", in_file=False),
    Flag("config", "The config file to read (conformance.toml, or a pyproject.toml with [tool.conformance]); "
                   "default: the first found from the current folder up to the repository's top.", metavar="FILE",
         path=True, in_file=False),
    Flag("no-config", "Read no config file.", in_file=False),
)}
