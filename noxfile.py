"""CI sessions: `nox -s tests`, `nox -s certify -- [SPEC]`, `nox -s lint`, `nox -s coverage`."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "tests", "certify"]
nox.options.reuse_existing_virtualenvs = True


@nox.session
def tests(session: nox.Session) -> None:
    """The suite's own tests, in parallel (the oracle environment is created on first use)."""
    session.install("-e", ".[test]")
    session.run("pytest", "-n", "auto", *session.posargs)


@nox.session
def certify(session: nox.Session) -> None:
    """Certify a candidate (default: the built-in reference) against harbor 0.13.1."""
    session.install("-e", ".")
    candidate = session.posargs[0] if session.posargs else "reference"
    session.run("conformance", "certify", "--candidate", candidate, *session.posargs[1:])


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, the case corpus check, and the published JSON Schemas being up to date."""
    session.install("-e", ".", "ruff")
    session.run("ruff", "check", "conformance", "oracles", "tests", "noxfile.py")
    session.run("conformance", "cases", "check")
    session.run("conformance", "schemas", "--check")


@nox.session
def coverage(session: nox.Session) -> None:
    """Line and branch coverage of harbor's scoring functions: from the cases alone, then the ci profile alone."""
    session.install("-e", ".")
    session.run("conformance", "coverage", "--json", "reports/oracle-coverage.json", *session.posargs)
