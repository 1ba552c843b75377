"""The ``conformance`` command.

Exit status: 0 everything conforms, 1 something diverges, 2 a usage or
configuration error (bad spec, broken corpus, no oracle environment).
"""

from __future__ import annotations

import json
import signal
import sys
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from conformance import ORACLE_RELEASE
from conformance.connection.base import DEFAULT_TIMEOUT, ConnectError
from conformance.connection.breaker import DEFAULT_LIMIT
from conformance.connection.connectors import connect, parse
from conformance.core import surfaces
from conformance.core.outcomes import Outcome
from conformance.corpus import cases as case_corpus
from conformance.corpus.cases import first_inputs
from conformance.errors import HarnessError
from conformance.oracle.environments import OracleSetupError
from conformance.report.markdown import shown_outcomes
from conformance.report.model import CaseLine
from conformance.report.reader import ReportError, read
from conformance.report.writer import Tally, dumps
from conformance.run import certification
from conformance.run import generate as generation
from conformance.run.plan import DEFAULT_ORACLE

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__.splitlines()[0])
cases_app = typer.Typer(no_args_is_help=True, help="Inspect and check the case corpus.")
app.add_typer(cases_app, name="cases")
expectations_app = typer.Typer(no_args_is_help=True, help="Expectation files: a candidate's known divergences.")
app.add_typer(expectations_app, name="expectations")
console = Console(stderr=True, soft_wrap=True)
out = Console(soft_wrap=True)


def _fail(message: str, code: int = 2) -> typer.Exit:
    console.print(f"[red]error:[/red] {escape(message)}", markup=True, highlight=False)
    return typer.Exit(code)


def _refused(error: HarnessError, prefix: str = "") -> typer.Exit:
    """A run that cannot start: its details (e.g. each corpus problem), then the reason; exit 2."""
    for line in error.details:
        console.print(line, markup=False, highlight=False)
    return _fail(prefix + str(error))


def _load(root: Path):
    try:
        return certification.load_corpus(root)
    except HarnessError as e:
        raise _refused(e) from None


def _table(tally: Tally, title: str) -> Table:
    # pass, and every other outcome some case has: the whole set would not fit a terminal
    shown = shown_outcomes(tally)
    table = Table(title=title)
    table.add_column("surface", no_wrap=True, min_width=14)
    for name in ("cases", *shown):
        table.add_column(name.replace("protocol-error", "protocol"), justify="right", no_wrap=True)
    for surface, counts in sorted(tally.by_surface.items()):
        total = sum(counts.values())
        table.add_row(surface, str(total), *(str(counts.get(n, 0)) for n in shown))
    table.add_row("[b]all[/b]", str(tally.total), *(str(tally.outcomes.get(n, 0)) for n in shown))
    return table


def _generated_table(tally: Tally) -> Table:
    table = Table(title="generated inputs")
    for name in ("surface", "profile", "seed", "inputs run", "divergences"):
        table.add_column(name, justify="left" if name in ("surface", "profile") else "right", no_wrap=True)
    for surface, line in sorted(tally.generated.items()):
        found = str(len(line.divergences)) + (" + error" if line.error else "")
        seed = ", ".join(map(str, line.seed)) if isinstance(line.seed, list) else str(line.seed)
        table.add_row(surface, line.profile, seed, str(line.inputs_run), found)
    return table


def _print_problems(records: list[CaseLine], limit: int = 40) -> None:
    shown = 0
    for record in records:
        if record.conforms and not record.stale:
            continue
        shown += 1
        if shown > limit:
            out.print("... and more; see the report", highlight=False)
            break
        named = f" ({record.protocol_error})" if record.protocol_error else ""
        out.print(f"[b]{record.outcome.upper()}[/b] {escape(record.id)}{named}", highlight=False)
        if record.generated:
            out.print(f"    input: {_input_repr(record)}", highlight=False, markup=False)
        for m in record.mismatches:
            out.print(f"    {m.describe()}", highlight=False, markup=False)
        if record.stale:
            out.print("    the live oracle disagrees with the case's recorded result:", highlight=False)
            for m in record.recording_mismatches:
                out.print(f"    {m.describe('recorded', 'oracle')}", highlight=False, markup=False)
        if record.detail:
            out.print("    " + record.detail.strip().replace("\n", "\n    ")[:2000], highlight=False, markup=False)


def _input_repr(record: CaseLine, limit: int = 300) -> str:
    text = repr(record.decoded_input)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


@app.command()
def certify(
    candidate: Annotated[str, typer.Option("--candidate", "-c", help="reference, module:attr, exec:COMMAND, harbor==X or an entry-point name.")] = "reference",
    oracle: Annotated[str, typer.Option(help="harbor==VERSION (live), or 'recorded' to use the corpus's recordings.")] = DEFAULT_ORACLE,
    surface: Annotated[list[str] | None, typer.Option("--surface", "-s", help="Only these surfaces (repeatable).")] = None,
    case: Annotated[list[str] | None, typer.Option("--case", "-k", help="Only case ids matching this glob (repeatable).")] = None,
    report: Annotated[Path | None, typer.Option(help="Where to write the JSONL report [default: reports/<candidate>.jsonl].")] = None,
    cases_root: Annotated[Path | None, typer.Option("--cases", help="The case corpus folder.")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds a candidate may take per request.")] = DEFAULT_TIMEOUT,
    nan_policy_name: Annotated[str | None, typer.Option("--nan-policy", help="Override every surface's NaN policy: any-nan-equal, bitwise, or a registered one.")] = None,
    profile: Annotated[str, typer.Option(help="Generated inputs: ci (fixed seed and budget), dev, explore.")] = generation.DEFAULT_PROFILE,
    seed: Annotated[int | None, typer.Option(help="The generators' seed [default: the profile's, or a fresh one].")] = None,
    max_examples: Annotated[int | None, typer.Option(min=1, help="Generated inputs per surface [default: the profile's].")] = None,
    no_cases: Annotated[bool, typer.Option("--no-cases", help="Skip the declared cases; generated inputs only.")] = False,
    no_generate: Annotated[bool, typer.Option("--no-generate", help="Skip the generated inputs; declared cases only.")] = False,
    expectations: Annotated[Path | None, typer.Option(help="The candidate's known divergences: listed ones become xfail.")] = None,
    markdown_out: Annotated[Path | None, typer.Option("--markdown", help="Also write a Markdown summary here ('-': stdout).")] = None,
    junit_out: Annotated[Path | None, typer.Option("--junit", help="Also write JUnit XML here.")] = None,
    badge_out: Annotated[Path | None, typer.Option("--badge", help="Also write a shields.io endpoint badge (JSON) here.")] = None,
    timeout_multiplier: Annotated[float, typer.Option(min=0.01, help="Scale the candidate's request, start and stop timeouts (a slow runtime, a loaded machine).")] = 1.0,
    validate_protocol: Annotated[bool, typer.Option("--validate-protocol", help="Check every candidate message against the published JSON Schemas.")] = False,
    broken_after: Annotated[int, typer.Option(min=1, help="Declare the candidate broken after this many consecutive crashes, timeouts or protocol errors; the remaining cases are recorded as broken.")] = DEFAULT_LIMIT,
    resume: Annotated[bool, typer.Option("--resume", help="Go on from the report of an interrupted run (at --report), keeping the cases it finished.")] = False,
    shard: Annotated[str | None, typer.Option(help="Run part I of N (e.g. 2/4): the cases that hash to it, and the generators from a seed of its own with 1/N of the budget; `conformance combine` merges the parts.")] = None,
) -> None:
    """Certify a candidate against the oracle: the declared cases, then generated inputs."""
    options = certification.Options(
        candidate=candidate, oracle=oracle, surfaces=surface, case_globs=case, cases_root=cases_root,
        timeout=timeout, nan_policy=nan_policy_name, profile=profile, seed=seed, max_examples=max_examples,
        no_cases=no_cases, no_generate=no_generate, expectations=expectations,
        timeout_multiplier=timeout_multiplier, validate_protocol=validate_protocol, broken_after=broken_after,
        resume=resume, shard=_shard(shard))
    slug = options.candidate_spec.report_id
    default = f"{slug}.shard-{options.shard.index}-of-{options.shard.count}" if options.shard else slug
    path = report if report is not None else Path("reports") / f"{default}.jsonl"
    run = _certify(options, path)
    _print_problems(run.records)
    impl = run.candidate_implementation
    name = f"{impl.name} {impl.version}" if impl else candidate
    _print_tables(run.tally, f"{name} vs {run.oracle_spec}")
    _print_verdict(candidate, run.tally, run.conforms, path)
    _write_outputs(path, markdown_out, junit_out, badge_out)
    raise typer.Exit(0 if run.conforms else 1)


def _shard(text: str | None):
    from conformance.run.shards import Shard

    if text is None:
        return None
    try:
        return Shard.parse(text)
    except ValueError as e:
        raise _fail(str(e)) from None


def _certify(options: certification.Options, path: Path) -> certification.Run:
    try:
        return certification.certify(options, path, log=lambda m: console.print(m, highlight=False))
    except HarnessError as e:
        raise _refused(e) from None
    except KeyboardInterrupt:
        console.print(f"interrupted: the report so far is in {path} (no footer); the same command with "
                      "--resume goes on from it", highlight=False)
        raise typer.Exit(130) from None


def _print_verdict(candidate: str, tally: Tally, conforms: bool, path: Path) -> None:
    verdict = "[green]conforms[/green]" if conforms else "[red]does not conform[/red]"
    counts = [f"{tally.outcomes[Outcome.PASS]}/{tally.total} cases pass"] if tally.total else []
    if tally.outcomes[Outcome.XFAIL]:
        counts.append(f"{tally.outcomes[Outcome.XFAIL]} known divergence(s)")
    if tally.generated:
        counts.append(f"{len(tally.findings)} generated divergence(s)")
    if tally.stale_expectations:
        counts.append(f"{len(tally.stale_expectations)} stale expectation(s): {', '.join(tally.stale_expectations)}")
    if tally.protocol_errors:
        counts.append("protocol errors: " + ", ".join(f"{n} {name}" for name, n in sorted(tally.protocol_errors.items())))
    for problem in tally.candidate_problems:
        counts.append(f"the candidate failed to {problem.stage} ({problem.outcome})")
    out.print(f"{candidate}: {verdict} ({', '.join(counts)}); report: {path}")
    if tally.findings:
        out.print(f"make them cases with: conformance promote {path}", highlight=False)


def _write_outputs(path: Path, markdown_out: Path | None, junit_out: Path | None, badge_out: Path | None) -> None:
    """The derived formats, read back from the report on disk."""
    if not (markdown_out or junit_out or badge_out):
        return
    from conformance.report import badge, junit, markdown

    data = read(path)
    if markdown_out is not None:
        text = markdown.summary(data)
        if str(markdown_out) == "-":
            out.print(text, markup=False, highlight=False)
        else:
            markdown_out.parent.mkdir(parents=True, exist_ok=True)
            markdown_out.write_text(text, encoding="utf-8")
    if junit_out is not None:
        junit_out.parent.mkdir(parents=True, exist_ok=True)
        junit_out.write_text(junit.render(data), encoding="utf-8")
    if badge_out is not None:
        badge_out.parent.mkdir(parents=True, exist_ok=True)
        badge_out.write_text(json.dumps(badge.render(data), indent=2) + "\n", encoding="utf-8")


def _print_tables(tally: Tally, title: str) -> None:
    if tally.total:
        out.print(_table(tally, title))
    if tally.generated:
        out.print(_generated_table(tally))
    for error in tally.generator_errors:
        out.print(f"[red]generator error[/red] {error}", highlight=False)


@app.command()
def summary(
    report: Path,
    markdown_out: Annotated[Path | None, typer.Option("--markdown", help="Write a Markdown summary here ('-': stdout).")] = None,
    junit_out: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML here.")] = None,
    badge_out: Annotated[Path | None, typer.Option("--badge", help="Write a shields.io endpoint badge (JSON) here.")] = None,
) -> None:
    """Summarise a JSONL report (even one cut short by a killed run), and derive its other formats."""
    try:
        data = read(report)
    except HarnessError as e:
        raise _fail(str(e)) from None
    tally = data.tally()
    _print_problems(data.records)
    _print_tables(tally, f"{data.candidate_spec} vs {data.oracle_spec}")
    if data.footer is None:
        out.print("[yellow]the report has no footer: the run did not finish[/yellow] (the same `certify` "
                  f"command with `--resume --report {escape(str(report))}` goes on from it)")
    _write_outputs(report, markdown_out, junit_out, badge_out)
    raise typer.Exit(0 if tally.conforms and data.footer is not None else 1)


@app.command()
def combine(
    reports: Annotated[list[Path], typer.Argument(help="The shards' reports (certify --shard I/N), one per shard.")],
    out_path: Annotated[Path, typer.Option("--out", "-o", help="Where to write the combined report.")],
    markdown_out: Annotated[Path | None, typer.Option("--markdown", help="Also write a Markdown summary here ('-': stdout).")] = None,
    junit_out: Annotated[Path | None, typer.Option("--junit", help="Also write JUnit XML here.")] = None,
    badge_out: Annotated[Path | None, typer.Option("--badge", help="Also write a shields.io endpoint badge (JSON) here.")] = None,
) -> None:
    """Merge the reports of a sharded run into one: every shard once, every case once, nothing missing."""
    from conformance.run.shards import CombineError
    from conformance.run.shards import combine as merge

    try:
        parts = [(str(path), read(path)) for path in reports]
        head, lines, footer = merge(parts)
    except HarnessError as e:
        raise _fail(f"cannot combine: {e}" if isinstance(e, CombineError) else str(e)) from None
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with out_path.open("w", encoding="utf-8") as handle:
        for line in [head, *lines, footer]:
            handle.write(dumps(line) + "\n")
    data = read(out_path)
    tally = data.tally()
    _print_problems(data.records)
    _print_tables(tally, f"{head.candidate.spec} vs {head.oracle.spec} ({len(parts)} shards)")
    _print_verdict(head.candidate.spec, tally, footer.conforms, out_path)
    _write_outputs(out_path, markdown_out, junit_out, badge_out)
    raise typer.Exit(0 if footer.conforms else 1)


@app.command("diff")
def diff_reports(
    a: Annotated[Path, typer.Argument(help="The earlier report (e.g. the oracle's release certified).")],
    b: Annotated[Path, typer.Argument(help="The later report.")],
    markdown_out: Annotated[Path | None, typer.Option("--markdown", help="Also write the changes as Markdown here.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the changes as JSON here.")] = None,
) -> None:
    """Compare two reports by case id: new divergences, fixed ones, changed classes, cases only in one.

    Exit status 1 when B has a divergence A has not, or one of another kind.
    """
    from conformance.report import diff as report_diff

    try:
        first, second = read(a), read(b)
    except HarnessError as e:
        raise _fail(str(e)) from None
    changes = report_diff.diff(first, second)
    table = Table(title=f"{a} -> {b}")
    for name in ("surface", "id", "change", "A", "B"):
        table.add_column(name, overflow="fold")
    for change in changes:
        table.add_row(change.surface, change.id, change.kind, change.before, change.after)
    if changes:
        out.print(table)
    counts = {k: sum(c.kind == k for c in changes) for k in report_diff.KINDS}
    out.print(", ".join(f"{n} {k}" for k, n in counts.items()), highlight=False)
    if markdown_out is not None:
        markdown_out.write_text(report_diff.markdown(changes, str(a), str(b)), encoding="utf-8")
    if json_out is not None:
        json_out.write_text(json.dumps({"a": str(a), "b": str(b), "counts": counts,
                                        "changes": [c.to_json() for c in changes]}, indent=2) + "\n")
    raise typer.Exit(1 if any(c.kind in report_diff.REGRESSIONS for c in changes) else 0)


@expectations_app.command("update")
def expectations_update(
    report: Annotated[Path, typer.Argument(help="The report whose divergences the file should list.")],
    file: Annotated[Path | None, typer.Option("--file", "-f", help="The expectation file [default: the one the report was run with].")] = None,
) -> None:
    """Write or refresh an expectation file from a report: every divergence listed, reasons kept."""
    from conformance.run import expectations

    try:
        data = read(report)
    except HarnessError as e:
        raise _fail(str(e)) from None
    head = data.header
    target = file or (Path(head.expectations) if head is not None and head.expectations else None)
    if target is None:
        raise _fail("the report was run without --expectations: say which file to write with --file") from None
    try:
        previous = expectations.load(target) if target.is_file() else None
    except expectations.ExpectationError as e:
        raise _fail(str(e)) from None
    surfaces_run = set(head.surfaces if head is not None else []) or {r.surface for r in data.records}
    document, changes = expectations.refreshed(
        data.records, surfaces_run, previous, head.candidate.spec if head else None, head.oracle.spec if head else None)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(expectations.dump(document), encoding="utf-8")
    for kind, ids in changes.items():
        for case_id in ids if kind != "kept" else []:
            out.print(f"{kind} {case_id}", highlight=False)
    out.print(f"{target}: {len(document.divergences)} known divergence(s); "
              + ", ".join(f"{len(ids)} {kind}" for kind, ids in changes.items()), highlight=False)


@app.command()
def gate(
    versions: Annotated[list[str] | None, typer.Argument(help="harbor releases to gate [default: the newest].")] = None,
    since: Annotated[str | None, typer.Option(help="Every final release from this one to the newest.")] = None,
    baseline: Annotated[str, typer.Option(help="The oracle's release.")] = ORACLE_RELEASE,
    expectations: Annotated[Path | None, typer.Option(help="Expectation file [default: oracles/expectations/harbor-VERSION.yaml]; only with one release.")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Where the reports (JSONL and Markdown) go.")] = Path("reports/gate"),
    no_generate: Annotated[bool, typer.Option("--no-generate", help="Cases only, no generated inputs.")] = False,
    cases_root: Annotated[Path | None, typer.Option("--cases", help="The case corpus folder.")] = None,
    surface: Annotated[list[str] | None, typer.Option("--surface", "-s", help="Only these surfaces (repeatable).")] = None,
    doc: Annotated[Path | None, typer.Option(help="Also write one document for all the releases gated here.")] = None,
) -> None:
    """The upgrade gate: harbor BASELINE as the oracle against each release; what changed, in Markdown.

    Exit status 1 when a release changes a behaviour its expectation file does not list.
    """
    from conformance.oracle import releases
    from conformance.run import gate as upgrade_gate

    if versions and since:
        raise _fail("give releases or --since, not both") from None
    try:
        if since:
            chosen = [v for v in releases.releases(since=since) if v != baseline]
        else:
            chosen = versions or [releases.newest()]
    except OracleSetupError as e:
        raise _fail(str(e)) from None
    if expectations is not None and len(chosen) != 1:
        raise _fail("--expectations names the file of one release; with several, each uses its own") from None
    try:
        lookup = upgrade_gate.corpus_lookup(cases_root or case_corpus.default_root())
    except HarnessError as e:
        raise _refused(e) from None
    results = []
    for version in chosen:
        console.print(f"gate: harbor {version} against harbor {baseline}", highlight=False)
        try:
            result = upgrade_gate.run(version, out_dir=out_dir, baseline=baseline, expectations=expectations,
                                      no_generate=no_generate, cases_root=cases_root, surfaces=surface,
                                      lookup=lookup, log=lambda m: console.print(m, highlight=False))
        except HarnessError as e:
            raise _refused(e, f"harbor {version}: ") from None
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


@app.command()
def lock(
    versions: Annotated[list[str], typer.Argument(help="harbor releases.")],
    out_dir: Annotated[Path | None, typer.Option("--out", help="Where the locks go [default: oracles/locks/ of this checkout].")] = None,
    override: Annotated[list[str] | None, typer.Option(help="A requirement that replaces harbor's own (repeatable); written into the lock.")] = None,
) -> None:
    """Resolve and write the pinned lock (every dependency, with hashes) of harbor releases."""
    from conformance.oracle import environments as oracle_env

    out_dir = out_dir or Path(str(resources.files("oracles") / "locks"))
    for version in versions:
        try:
            path = oracle_env.resolve_lock(version, out_dir / f"harbor-{version}.lock", override or [])
        except OracleSetupError as e:
            raise _fail(str(e)) from None
        out.print(f"wrote {path}", highlight=False)


@app.command()
def promote(
    report: Path,
    cases_root: Annotated[Path | None, typer.Option("--cases", help="The case corpus folder.")] = None,
) -> None:
    """Write a report's generated divergences as cases (cases/<surface>/generated.yaml)."""
    from conformance.corpus.promote import promote as promote_findings

    root = cases_root or case_corpus.default_root()
    try:
        data = read(report)
        results = promote_findings(data, root)
    except (OSError, ValueError, ReportError) as e:
        raise _fail(str(e)) from None
    except case_corpus.CorpusError as e:
        raise _fail(f"the promoted cases do not load, nothing written:\n{e}") from None
    if not results:
        out.print("no generated divergences in the report", highlight=False)
    for item in results:
        where = f"-> {item.file}" if item.file else f"skipped: {item.reason}"
        out.print(f"{item.case_id} {where}", highlight=False)


@app.command()
def coverage(
    source: Annotated[list[str] | None, typer.Option("--from", help="cases, ci (the ci profile's generated inputs), or both [default: both, measured separately].")] = None,
    harbor: Annotated[str, typer.Option(help="The harbor release.")] = ORACLE_RELEASE,
    cases_root: Annotated[Path | None, typer.Option("--cases", help="The case corpus folder.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the figures as JSON here.")] = None,
) -> None:
    """Line and branch coverage of harbor's scoring functions, reached by the cases and by the ci profile."""
    from conformance.kit import wire
    from conformance.oracle.coverage import TARGETS, CoverageError, table, unreachable_notes
    from conformance.run.coverage import measure
    from conformance.run.runner import Oracle

    sources = source or ["cases", "ci"]
    for name in sources:
        if name not in ("cases", "ci"):
            raise _fail(f"unknown source {name!r}; use cases or ci") from None
    # Only the surfaces whose oracle is harbor's code (the downstream ones are transcriptions).
    measured = list(TARGETS)
    corpus = case_corpus.select(_load(cases_root or case_corpus.default_root()), measured, harbor)
    ci = generation.PROFILES["ci"]

    def from_cases(conn) -> None:
        for seq, item in enumerate(corpus, 1):
            conn.run(seq, item.case.surface, wire.encode(item.case.input))

    def from_ci(conn) -> None:
        # The candidate only decides when shrinking starts; the reference agrees with the oracle.
        reference = connect("reference")
        for name in surfaces.with_generators(measured):
            generation.generate(name, reference, Oracle(conn), profile=ci, seed=ci.fixed_seed)

    results, complete = {}, True
    for name in sources:
        console.print(f"measuring harbor {harbor} under coverage.py: {name}", highlight=False)
        try:
            result = measure(from_cases if name == "cases" else from_ci, harbor_version=harbor,
                             log=lambda m: console.print(m, highlight=False))
        except (CoverageError, ConnectError, OracleSetupError) as e:
            raise _fail(str(e)) from None
        label = f"{len(corpus)} cases" if name == "cases" else f"ci profile (seed {ci.fixed_seed}, {ci.max_examples} per surface)"
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


@cases_app.command("list")
def cases_list(
    surface: Annotated[list[str] | None, typer.Option("--surface", "-s")] = None,
    cases_root: Annotated[Path | None, typer.Option("--cases")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per case.")] = False,
    disagreements: Annotated[bool, typer.Option("--spec-disagrees", help="Only cases where harbor differs from the spec's prose.")] = False,
) -> None:
    """List the cases: id, tags, description, and where harbor differs from the prose spec."""
    loaded = _load(cases_root or case_corpus.default_root())
    for item in case_corpus.select(loaded, surface):
        if as_json and disagreements and not item.case.spec_disagrees:
            continue
        c = item.case
        if as_json:
            out.print(json.dumps({"id": c.id, "tags": c.tags, "spec": c.spec, "description": c.description,
                                  "spec_disagrees": c.spec_disagrees, "file": str(item.file), "line": item.line}),
                      highlight=False, soft_wrap=True)
        elif not disagreements or c.spec_disagrees:
            note = f"\n    differs from the spec: {c.spec_disagrees}" if c.spec_disagrees else ""
            out.print(f"{c.id}\t[{', '.join(c.tags)}]\t{c.description}{note}", highlight=False, markup=False,
                      soft_wrap=True)


@cases_app.command("check")
def cases_check(root: Annotated[Path | None, typer.Argument(help="The corpus folder.")] = None) -> None:
    """Lint the corpus: schema, unique ids, inputs, and no float left to the YAML loader."""
    root = root or case_corpus.default_root()
    loaded, errors = case_corpus.check_corpus(root)
    for error in errors:
        out.print(str(error), markup=False, highlight=False, soft_wrap=True)
    files = len(case_corpus.case_files(root)) if root.is_dir() else 0
    out.print(f"{len(loaded)} cases in {files} files; {len(errors)} problem(s)", highlight=False)
    raise typer.Exit(1 if errors else 0)


@cases_app.command("record")
def cases_record(
    root: Annotated[Path | None, typer.Argument(help="The corpus folder.")] = None,
    surface: Annotated[list[str] | None, typer.Option("--surface", "-s")] = None,
    oracle: Annotated[str, typer.Option(help="The live oracle: harbor==VERSION.")] = DEFAULT_ORACLE,
) -> None:
    """Write the live oracle's result as `expect:` into each case that has none."""
    from conformance.corpus.record import record

    root = root or case_corpus.default_root()
    _load(root)
    try:
        connection = connect(oracle, log=lambda m: console.print(m, highlight=False))
    except (ConnectError, OracleSetupError) as e:
        raise _fail(f"oracle {oracle}: {e}") from None
    try:
        done = record(root, connection, surface)
    except case_corpus.CorpusError as e:
        raise _fail(str(e)) from None
    finally:
        connection.close()
    for item in done:
        if item.expect is None:
            out.print(f"not recorded {item.case_id}: {item.reason}", markup=False, highlight=False, soft_wrap=True)
    written = sum(item.expect is not None for item in done)
    out.print(f"recorded {written} case(s) from {oracle}; {len(done) - written} left without a result", highlight=False)
    raise typer.Exit(0 if written == len(done) else 1)


@app.command()
def schemas(
    out_dir: Annotated[Path, typer.Option("--out", help="Where the schema files go.")] = Path(str(resources.files("conformance") / "schemas")),
    check: Annotated[bool, typer.Option(help="Only verify the files are up to date.")] = False,
) -> None:
    """Write (or --check) the JSON Schemas of protocol messages and case files."""
    from conformance.schema_export import all_schemas

    stale = []
    for name, schema in all_schemas().items():
        text = json.dumps(schema, indent=2, sort_keys=True) + "\n"
        target = out_dir / name
        if check:
            if not target.is_file() or target.read_text() != text:
                stale.append(name)
        else:
            out_dir.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    if stale:
        raise _fail(f"out-of-date schema files (run `conformance schemas`): {', '.join(stale)}", code=1) from None
    out.print(f"schemas {'up to date' if check else 'written'} in {out_dir}", highlight=False)


@app.command()
def oracle(harbor: Annotated[str, typer.Option(help="The harbor release.")] = ORACLE_RELEASE) -> None:
    """Create (or find) the cached virtualenv of a harbor release and print where it is."""
    from conformance.oracle import environments as oracle_env

    try:
        env = oracle_env.ensure(harbor, log=lambda m: console.print(m, highlight=False))
    except OracleSetupError as e:
        raise _fail(str(e)) from None
    out.print(str(env.root), highlight=False)


@app.command()
def smoke(
    candidate: Annotated[str, typer.Option("--candidate", "-c", help="The candidate spec, as for certify.")],
    timeout: Annotated[float, typer.Option(help="Seconds a candidate may take per request.")] = DEFAULT_TIMEOUT,
    timeout_multiplier: Annotated[float, typer.Option(min=0.01, help="Scale the request, start and stop timeouts.")] = 1.0,
    cases_root: Annotated[Path | None, typer.Option("--cases", help="Where the inputs it sends come from.")] = None,
) -> None:
    """Check that a candidate speaks the protocol at all, before any scoring: handshake, one request a surface, stop."""
    from conformance.connection.smoke import smoke as run_smoke

    try:
        checks = run_smoke(parse(candidate), first_inputs(cases_root or case_corpus.default_root()),
                           timeout=timeout, timeout_multiplier=timeout_multiplier)
    except HarnessError as e:
        raise _fail(str(e)) from None
    for check in checks:
        mark = "[green]ok[/green]  " if check.ok else "[red]FAIL[/red]"
        out.print(f"{mark} {escape(check.step)}: {escape(check.message)}", highlight=False)
        if check.hint:
            out.print(f"       -> {escape(check.hint)}", highlight=False)
    failed = [c for c in checks if not c.ok]
    out.print(f"{candidate}: " + ("[green]speaks the protocol[/green]" if not failed else
                                  f"[red]{len(failed)} problem(s)[/red]"), highlight=False)
    raise typer.Exit(1 if failed else 0)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM (a cancelled CI job) unwinds like Ctrl-C: candidates stopped, report kept


def main() -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
