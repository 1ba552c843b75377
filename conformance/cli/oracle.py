"""Commands about harbor itself: ``oracle`` (its environment), ``lock``, ``gate`` (the upgrade gate), ``coverage``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from conformance import ORACLE_RELEASE, shipped
from conformance.cli import options as opt
from conformance.cli.console import log, out
from conformance.cli.progress import ProgressMode, watcher_for
from conformance.connection.base import Connection
from conformance.connection.connectors import connect
from conformance.core import surfaces
from conformance.core.outcomes import Outcome
from conformance.corpus import cases as case_corpus
from conformance.errors import HarnessError, UsageError
from conformance.kit import wire
from conformance.oracle import environments, releases
from conformance.oracle.coverage import table, targets, unreachable_notes
from conformance.run import gate as upgrade_gate
from conformance.run import generate as generation
from conformance.run.coverage import measure
from conformance.run.plan import load_corpus
from conformance.run.runner import Oracle


def oracle(harbor: opt.HarborRelease = ORACLE_RELEASE) -> None:
    """Create (or find) the cached virtualenv of a harbor release and print where it is."""
    env = environments.ensure(harbor, log=log)
    out.print(str(env.root), highlight=False)


def lock(
    versions: Annotated[list[str], typer.Argument(help="harbor releases.")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Where the locks go.", show_default="oracles/locks/ of the installed suite")] = None,
    override: Annotated[list[str] | None, typer.Option(
        help="A requirement that replaces harbor's own (repeatable); written into the lock.")] = None,
) -> None:
    """Resolve and write the pinned lock (every dependency, with hashes) of harbor releases."""
    folder = out_dir or shipped.oracle_file("locks")
    for version in versions:
        path = environments.resolve_lock(version, folder / f"harbor-{version}.lock", override or [])
        out.print(f"wrote {path}", highlight=False)


def gate(
    versions: Annotated[list[str] | None, typer.Argument(
        help="harbor releases to gate.", show_default="the newest")] = None,
    since: Annotated[str | None, typer.Option(help="Every final release from this one to the newest.")] = None,
    baseline: Annotated[str, typer.Option(help="The oracle's release.")] = ORACLE_RELEASE,
    expectations: Annotated[Path | None, typer.Option(
        help="Expectation file; only with one release.", callback=opt.existing("expectations"),
        show_default="oracles/expectations/harbor-VERSION.yaml")] = None,
    out_dir: Annotated[Path, typer.Option(
        "--out", help="Where the reports (JSONL and Markdown) go.")] = Path("reports/gate"),
    no_generate: Annotated[bool, typer.Option("--no-generate", help="Cases only, no generated inputs.")] = False,
    cases_root: opt.CasesRoot = None,
    surface: opt.Surfaces = None,
    doc: Annotated[Path | None, typer.Option(help="Also write one document for all the releases gated here.")] = None,
    no_oracle_cache: opt.NoOracleCache = False,
) -> None:
    """The upgrade gate: harbor BASELINE as the oracle against each release; what changed, in Markdown.

    Exit status 1 when a release changes a behaviour its expectation file does not list.
    """
    if versions and since:
        raise UsageError("give releases or --since, not both")
    chosen = [v for v in releases.releases(since=since) if v != baseline] if since else (
        versions or [releases.newest()])
    if expectations is not None and len(chosen) != 1:
        raise UsageError("--expectations names the file of one release; with several, each uses its own")
    lookup = upgrade_gate.corpus_lookup(cases_root or case_corpus.default_root())
    results = []
    for version in chosen:
        log(f"gate: harbor {version} against harbor {baseline}")
        try:
            result = upgrade_gate.run(version, out_dir=out_dir, baseline=baseline, expectations=expectations,
                                      no_generate=no_generate, cases_root=cases_root, surfaces=surface,
                                      lookup=lookup, log=log, watcher=watcher_for(ProgressMode.AUTO),
                                      oracle_cache=not no_oracle_cache)
        except HarnessError as e:
            raise e.within(f"harbor {version}") from None
        results.append(result)
        tally = result.run.tally
        changed = tally.outcomes[Outcome.XFAIL] + len(tally.expected_findings)
        unexpected = tally.total - tally.conforming + len(tally.findings)
        verdict = "[green]passed[/green]" if result.passed else "[red]FAILED[/red]"
        out.print(f"harbor {version}: gate {verdict}: {changed} known change(s), {unexpected} not listed; "
                  f"{result.markdown}")
    if doc is not None:
        doc.parent.mkdir(parents=True, exist_ok=True)
        doc.write_text(upgrade_gate.changes_document(results, baseline=baseline, lookup=lookup), encoding="utf-8")
        out.print(f"wrote {doc}", highlight=False)
    raise typer.Exit(0 if all(r.passed for r in results) else 1)


def coverage(
    source: Annotated[list[str] | None, typer.Option(
        "--from", help="cases, ci (the ci profile's generated inputs), or both.",
        show_default="both, measured separately")] = None,
    harbor: opt.HarborRelease = ORACLE_RELEASE,
    cases_root: opt.CasesRoot = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the figures as JSON here.")] = None,
) -> None:
    """Line and branch coverage of harbor's scoring functions, reached by the cases and by the ci profile."""
    sources = source or ["cases", "ci"]
    for name in sources:
        if name not in ("cases", "ci"):
            raise UsageError(f"unknown source {name!r}; use cases or ci")
    # Only the surfaces whose oracle is harbor's code (the downstream ones are transcriptions).
    measured = list(targets())
    corpus = case_corpus.select(load_corpus(cases_root or case_corpus.default_root()), measured, harbor)
    ci = generation.PROFILES["ci"]
    seed = ci.fixed_seed if ci.fixed_seed is not None else 0

    def from_cases(conn: Connection) -> None:
        for seq, item in enumerate(corpus, 1):
            conn.run(seq, item.case.surface, wire.encode(item.case.input))

    def from_ci(conn: Connection) -> None:
        # The candidate only decides when shrinking starts; the reference agrees with the oracle.
        with connect("reference") as reference:
            for name in surfaces.with_generators(measured):
                generation.generate(name, reference, Oracle(conn), profile=ci, seed=seed)

    results, complete = {}, True
    for name in sources:
        log(f"measuring harbor {harbor} under coverage.py: {name}")
        result = measure(from_cases if name == "cases" else from_ci, harbor_version=harbor, log=log)
        label = f"{len(corpus)} cases" if name == "cases" else (
            f"ci profile (seed {ci.fixed_seed}, {ci.max_examples} per surface)")
        out.print(table(result, f"harbor {harbor}: reached by the {label}"))
        for note in unreachable_notes(result):
            out.print(f"  unreachable {note}", highlight=False, markup=False)
        results[name] = result.to_json()
        complete = complete and result.complete
        verdict = "every reachable line and branch" if result.complete else "[red]not everything reachable[/red]"
        out.print(f"{name}: {verdict}")
    if json_out is not None:
        json_out.write_text(json.dumps(results, indent=2) + "\n")
    raise typer.Exit(0 if complete else 1)
