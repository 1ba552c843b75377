"""CI sessions: `nox -s tests`, `nox -s certify -- [SPEC]`, `nox -s lint`, `nox -s coverage`,
`nox -s upgrade-gate -- [VERSION]`, `nox -s harbor-changes`, `nox -s bench`, `nox -s explore-sharded`,
`nox -s offline` (the tests that need no oracle), `nox -s slow` (the slow end-to-end tests), `nox -s mutants`
(the suite's kill rate on one-bug mutants), `nox -s campaign` (a fuzzing campaign on a Dask cluster), `nox -s site`
(a static site of reports), `nox -s recordings` (harbor's answers and the ci inputs that ship with the suite)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "tests", "certify"]
nox.options.reuse_existing_virtualenvs = True


@nox.session
def tests(session: nox.Session) -> None:
    """The suite's own tests, in parallel (the oracle environment is created on first use), slow ones left out."""
    session.install("-e", ".[test]")
    session.run("pytest", "-n", "auto", *session.posargs)


@nox.session
def slow(session: nox.Session) -> None:
    """The slow end-to-end tests the default run leaves out (whole ci runs, mutants, campaigns, the wheel), and
    every property test at its whole count of examples (quick runs draw a quarter: tests/budget.py)."""
    session.install("-e", ".[test]")
    session.run("pytest", "-n", "auto", "-m", "slow or property", "--hypothesis-profile", "thorough", *session.posargs)


@nox.session
def offline(session: nox.Session) -> None:
    """The suite's own tests that start no oracle, slow ones left out: the quick tier, under a minute."""
    session.install("-e", ".[test]")
    session.run("pytest", "-m", "not oracle", "-n", "auto", *session.posargs)


@nox.session
def certify(session: nox.Session) -> None:
    """Certify a candidate (default: the built-in reference) against harbor 0.13.1."""
    session.install("-e", ".")
    candidate = session.posargs[0] if session.posargs else "reference"
    session.run("conformance", "certify", "--candidate", candidate, *session.posargs[1:])


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy (strict on the harness, and on the oracle's side against harbor itself), the corpus and
    expectation file checks, the JSON Schemas up to date."""
    session.install("-e", ".[dev]")
    session.run("ruff", "check", "conformance", "oracles", "tests", "noxfile.py", ".github/action")
    session.run("mypy", "conformance")
    # The oracle's side (oracles/*.py, the kit, each surface's harbor.py and what it loads), which the run above
    # leaves out: strict mypy with harbor 0.13.1's virtualenv as the Python it checks against (created if need be).
    session.run("python", "-m", "conformance.oracle.typecheck")
    session.run("conformance", "cases", "check")
    session.run("conformance", "expectations", "check", *sorted(map(str, Path("oracles/expectations").glob("*.yaml"))))
    session.run("conformance", "schemas", "--check")
    session.run("conformance", "recordings", "check")


@nox.session
def recordings(session: nox.Session) -> None:
    """harbor 0.13.1's answers to every case and to the ci profile's inputs, with those inputs, written anew into
    oracles/recordings/ (after a change to the corpus, a strategy, the oracle's adapter or its lock)."""
    session.install("-e", ".[pinned]")
    session.run("conformance", "recordings", "write", *session.posargs)


@nox.session
def coverage(session: nox.Session) -> None:
    """Line and branch coverage of harbor's scoring functions: from the cases alone, then the ci profile alone."""
    session.install("-e", ".")
    session.run("conformance", "coverage", "--json", "reports/oracle-coverage.json", *session.posargs)


@nox.session(name="upgrade-gate")
def upgrade_gate(session: nox.Session) -> None:
    """harbor 0.13.1 against another release (default: the newest): what changes, in reports/gate/harbor-VERSION.md.

    Fails on any change the release's expectation file (oracles/expectations/harbor-VERSION.yaml) does not list.
    """
    session.install("-e", ".")
    session.run("conformance", "gate", *session.posargs)


@nox.session(name="harbor-changes")
def harbor_changes(session: nox.Session) -> None:
    """The gate for every release from 0.13.0 to the newest, written as docs/harbor-changes.md."""
    session.install("-e", ".")
    session.run("conformance", "gate", "--since", "0.13.0", "--doc", "docs/harbor-changes.md", *session.posargs)


@nox.session
def site(session: nox.Session) -> None:
    """A static site of reports, to open without a server: `nox -s site -- REPORT... [--out DIR]`.

    Without reports: every report under reports/ (certify's default folder) and reports/gate/ (the gate's).
    The site goes to reports/site/ unless --out says otherwise (see docs/site.md).
    """
    session.install("-e", ".")
    args = list(session.posargs)
    valued = {"--out", "-o", "--cases"}  # options whose value is the next word, not a report
    if not [arg for i, arg in enumerate(args) if not arg.startswith("-") and (i == 0 or args[i - 1] not in valued)]:
        found = [str(path) for folder in ("reports", "reports/gate") for path in sorted(Path(folder).glob("*.jsonl"))]
        if not found:
            session.error("no reports under reports/: run `nox -s certify` (or the gate) first, or name reports")
        args += found
    if not any(arg in ("--out", "-o") or arg.startswith("--out=") for arg in args):
        args += ["--out", "reports/site"]
    session.run("conformance", "site", *args)


@nox.session
def mutants(session: nox.Session) -> None:
    """Every one-bug mutant of the reference, by the cases and by the ci generators; writes docs/mutants.md."""
    session.install("-e", ".")
    session.run("conformance", "mutants", "--markdown", "docs/mutants.md", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """What a run costs on this machine: rates per surface, examples per second, whole runs, memory, the test
    suite's time (a table)."""
    session.install("-e", ".[fast,test]")
    session.run("python", "-m", "conformance.bench", *session.posargs)


@nox.session
def campaign(session: nox.Session) -> None:
    """A short fuzzing campaign against the reference on a local Dask cluster, every core a worker.

    Options are passed through and override the defaults: `nox -s campaign -- --budget 2h -c SPEC`,
    `-- --scheduler tcp://HOST:8786` for a running cluster (see docs/campaigns.md).
    """
    session.install("-e", ".[campaign]")
    given = set(session.posargs)
    defaults = [*([] if given & {"--candidate", "-c"} else ["--candidate", "reference"]),
                *([] if "--budget" in given else ["--budget", "2m"])]
    session.run("conformance", "campaign", *defaults, *session.posargs)


@nox.session(name="explore-sharded")
def explore_sharded(session: nox.Session) -> None:
    """An explore run split in shards that run at once (as CI matrix jobs would), then combined into one report.

    `nox -s explore-sharded -- [SHARDS] [SEED] [MAX_EXAMPLES]` (default 2 shards, seed 1, the profile's 5000
    inputs per surface).
    """
    session.install("-e", ".")
    count = int(session.posargs[0]) if session.posargs else 2
    seed = session.posargs[1] if len(session.posargs) > 1 else "1"
    budget = ["--max-examples", session.posargs[2]] if len(session.posargs) > 2 else []
    conformance = str(session.bin) + "/conformance"
    reports = [f"reports/explore/shard-{i}-of-{count}.jsonl" for i in range(1, count + 1)]
    runs = [subprocess.Popen([conformance, "certify", "--candidate", "reference", "--no-cases", "--profile",
                              "explore", "--seed", seed, *budget, "--shard", f"{i}/{count}",
                              "--report", reports[i - 1]])
            for i in range(1, count + 1)]
    failed = [i for i, run in enumerate(runs, 1) if run.wait() not in (0, 1)]  # 1: a divergence, still a report
    if failed:
        session.error(f"shard(s) {failed} did not run")
    session.run("conformance", "combine", *reports, "--out", "reports/explore/combined.jsonl",
                "--markdown", "reports/explore/combined.md")
