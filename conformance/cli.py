"""The ``conformance`` command.

Exit status: 0 everything conforms, 1 something diverges, 2 a usage or
configuration error (bad spec, broken corpus, no oracle environment).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from conformance import cases as case_corpus
from conformance import generate as generation
from conformance import scope, surfaces
from conformance.compare import POLICIES
from conformance.connect import DEFAULT_TIMEOUT, ConnectError, connect
from conformance.oracle_env import OracleSetupError
from conformance.registry import RegistryError
from conformance.report import ReportWriter, Tally, header, read
from conformance.runner import OUTCOMES, Oracle, run_cases

DEFAULT_ORACLE = "harbor==0.13.1"

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__.splitlines()[0])
cases_app = typer.Typer(no_args_is_help=True, help="Inspect and check the case corpus.")
app.add_typer(cases_app, name="cases")
console = Console(stderr=True, soft_wrap=True)
out = Console(soft_wrap=True)


def _fail(message: str, code: int = 2) -> typer.Exit:
    console.print(f"[red]error:[/red] {message}", markup=True, highlight=False)
    return typer.Exit(code)


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", spec).strip("_") or "candidate"


def _load(root: Path):
    loaded, errors = case_corpus.check_corpus(root)
    if errors:
        for error in errors:
            console.print(str(error), markup=False, highlight=False)
        raise _fail(f"{len(errors)} problem(s) in the case corpus at {root}; `conformance cases check` lists them") from None
    return loaded


def _table(tally: Tally, title: str) -> Table:
    table = Table(title=title)
    table.add_column("surface", no_wrap=True, min_width=14)
    for name in ("cases", *OUTCOMES):
        table.add_column(name.replace("protocol-error", "protocol"), justify="right", no_wrap=True)
    for surface, counts in sorted(tally.by_surface.items()):
        total = sum(counts.values())
        table.add_row(surface, str(total), *(str(counts.get(n, 0)) or "" for n in OUTCOMES))
    table.add_row("[b]all[/b]", str(tally.total), *(str(tally.outcomes.get(n, 0)) for n in OUTCOMES))
    return table


def _generated_table(tally: Tally) -> Table:
    table = Table(title="generated inputs")
    for name in ("surface", "profile", "seed", "inputs run", "divergences"):
        table.add_column(name, justify="left" if name in ("surface", "profile") else "right", no_wrap=True)
    for surface, line in sorted(tally.generated.items()):
        found = len(line["divergences"]) if not line.get("error") else f"{len(line['divergences'])} + error"
        table.add_row(surface, line["profile"], str(line["seed"]), str(line["inputs_run"]), str(found))
    return table


def _print_problems(records: list[dict], limit: int = 40) -> None:
    shown = 0
    for record in records:
        if record["outcome"] == "pass" and record.get("recording") != "stale":
            continue
        shown += 1
        if shown > limit:
            out.print("... and more; see the report", highlight=False)
            break
        out.print(f"[b]{record['outcome'].upper()}[/b] {record['id']}", highlight=False)
        if record.get("origin") == "generated":
            out.print(f"    input: {_input_repr(record)}", highlight=False, markup=False)
        for m in record.get("mismatches", []):
            extra = f" ulps={m['ulps']}" if "ulps" in m else ""
            bits = f" bits {m['expected_bits']} vs {m['actual_bits']}" if "expected_bits" in m else ""
            out.print(f"    {m['cls']} at {m['path']}: oracle {m['expected']} / candidate {m['actual']}{extra}{bits}",
                      highlight=False, markup=False)
        if record.get("recording") == "stale":
            out.print("    the live oracle disagrees with the case's recorded result:", highlight=False)
            for m in record.get("recording_mismatches", []):
                out.print(f"    {m['cls']} at {m['path']}: recorded {m['expected']} / oracle {m['actual']}",
                          highlight=False, markup=False)
        if record.get("detail"):
            out.print("    " + record["detail"].strip().replace("\n", "\n    ")[:2000], highlight=False, markup=False)


def _input_repr(record: dict, limit: int = 300) -> str:
    from conformance import wire

    text = repr(wire.decode(record["input"]))
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
) -> None:
    """Certify a candidate against the oracle: the declared cases, then generated inputs."""
    if profile not in generation.PROFILES:
        raise _fail(f"unknown profile {profile!r}; known: {', '.join(generation.PROFILES)}") from None
    if no_cases and no_generate:
        raise _fail("--no-cases and --no-generate together leave nothing to run") from None
    for name in surface or []:
        if name not in surfaces.SURFACES:
            raise _fail(f"unknown surface {name!r}; known: {', '.join(sorted(surfaces.SURFACES))}") from None
    try:
        nan_policy = POLICIES.get(nan_policy_name) if nan_policy_name else None
    except RegistryError as e:
        raise _fail(str(e)) from None
    root = cases_root or case_corpus.default_root()
    loaded = _load(root)
    try:
        oracle_conn = None if oracle == "recorded" else connect(oracle, log=lambda m: console.print(m, highlight=False))
    except (ConnectError, OracleSetupError) as e:
        raise _fail(f"oracle {oracle}: {e}") from None
    # Recordings were made with the default oracle; its release decides which cases apply.
    harbor_version = oracle_conn.implementation.get("version") if oracle_conn else DEFAULT_ORACLE.split("==")[1]
    selected = [] if no_cases else case_corpus.select(loaded, surface, harbor_version, case)
    if not selected and not no_cases:
        raise _fail("no case selected") from None
    # Generated inputs need a live oracle and are not selected by case id.
    gen_surfaces = [] if no_generate or oracle_conn is None or case else surfaces.with_generators(surface)
    if no_cases and not gen_surfaces:
        raise _fail("nothing to run: generated inputs need a live oracle (not --oracle recorded) and no --case")
    chosen = generation.PROFILES[profile]
    if seed is None:
        seed = chosen.fixed_seed if chosen.fixed_seed is not None else generation.new_seed()
    try:
        cand = connect(candidate, timeout=timeout)
    except ConnectError as e:
        if oracle_conn:
            oracle_conn.close()
        raise _fail(str(e)) from None
    if scope.of(cand.implementation) is not None:  # a candidate claiming part of the suite is held to that part
        selected = [i for i in selected if scope.claims(cand.implementation, i.case.surface, i.case.input)]
        gen_surfaces = scope.surfaces(cand.implementation, gen_surfaces)
        if not selected and not gen_surfaces:
            cand.close()
            if oracle_conn:
                oracle_conn.close()
            raise _fail(f"{candidate} claims {scope.of(cand.implementation)}: nothing selected falls within it") from None
    the_oracle = Oracle(oracle_conn)
    policy_name = nan_policy.name if nan_policy else ", ".join(
        sorted({f"{s.name}={s.policy.name}" for s in surfaces.SURFACES.values()}))
    path = report if report is not None else Path("reports") / f"{_slug(candidate)}.jsonl"
    writer = ReportWriter(path, header(
        oracle={"spec": the_oracle.spec, "implementation": the_oracle.implementation},
        candidate={"spec": candidate, "implementation": cand.implementation},
        nan_policy=policy_name,
        surfaces=sorted({i.case.surface for i in selected} | set(gen_surfaces)),
        cases_root=str(root),
        generation=generation.describe(chosen, seed, max_examples) if gen_surfaces else None,
    ))
    records = []
    try:
        for record in run_cases(selected, cand, the_oracle, nan_policy):
            writer.record(record)
            records.append(record.to_json())
        for name in gen_surfaces:
            console.print(f"generating {name} inputs ({profile}, seed {seed})", highlight=False)
            result = generation.generate(name, cand, the_oracle, profile=chosen, seed=seed,
                                         max_examples=max_examples, policy=nan_policy)
            for record in result.findings:
                writer.record(record)
                records.append(record.to_json())
            writer.generated(result.to_json())
    finally:
        cand.close()
        the_oracle.close()
        footer = writer.close()
    _print_problems(records)
    impl = cand.implementation
    _print_tables(writer.tally, f"{impl.get('name')} {impl.get('version')} vs {the_oracle.spec}")
    verdict = "[green]conforms[/green]" if footer["conforms"] else "[red]does not conform[/red]"
    counts = [f"{writer.tally.outcomes['pass']}/{writer.tally.total} cases pass"] if writer.tally.total else []
    if writer.tally.generated:
        counts.append(f"{len(writer.tally.findings)} generated divergence(s)")
    out.print(f"{candidate}: {verdict} ({', '.join(counts)}); report: {path}")
    if writer.tally.findings:
        out.print(f"make them cases with: conformance promote {path}", highlight=False)
    raise typer.Exit(0 if footer["conforms"] else 1)


def _print_tables(tally: Tally, title: str) -> None:
    if tally.total:
        out.print(_table(tally, title))
    if tally.generated:
        out.print(_generated_table(tally))
    for error in tally.generator_errors:
        out.print(f"[red]generator error[/red] {error}", highlight=False)


@app.command()
def summary(report: Path) -> None:
    """Summarise a JSONL report (even one cut short by a killed run)."""
    try:
        data = read(report)
    except (OSError, ValueError) as e:
        raise _fail(str(e)) from None
    tally = data.tally()
    _print_problems(data.records)
    head = data.header or {}
    cand = head.get("candidate", {}).get("spec", "?")
    _print_tables(tally, f"{cand} vs {head.get('oracle', {}).get('spec', '?')}")
    if data.footer is None:
        out.print("[yellow]the report has no footer: the run did not finish[/yellow]")
    raise typer.Exit(0 if tally.conforms and data.footer is not None else 1)


@app.command()
def promote(
    report: Path,
    cases_root: Annotated[Path | None, typer.Option("--cases", help="The case corpus folder.")] = None,
) -> None:
    """Write a report's generated divergences as cases (cases/<surface>/generated.yaml)."""
    from conformance.promote import promote as promote_findings

    root = cases_root or case_corpus.default_root()
    try:
        data = read(report)
        results = promote_findings(data, root)
    except (OSError, ValueError) as e:
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
    harbor: Annotated[str, typer.Option(help="The harbor release.")] = DEFAULT_ORACLE.split("==")[1],
    cases_root: Annotated[Path | None, typer.Option("--cases", help="The case corpus folder.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the figures as JSON here.")] = None,
) -> None:
    """Line and branch coverage of harbor's scoring functions, reached by the cases and by the ci profile."""
    from conformance import wire
    from conformance.oracle_coverage import TARGETS, CoverageError, measure, table, unreachable_notes
    from conformance.runner import Oracle

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
    from conformance.record import record

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
    out_dir: Annotated[Path, typer.Option("--out", help="Where the schema files go.")] = Path(__file__).parent / "schemas",
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
def oracle(harbor: Annotated[str, typer.Option(help="The harbor release.")] = DEFAULT_ORACLE.split("==")[1]) -> None:
    """Create (or find) the cached virtualenv of a harbor release and print where it is."""
    from conformance import oracle_env

    try:
        env = oracle_env.ensure(harbor, log=lambda m: console.print(m, highlight=False))
    except OracleSetupError as e:
        raise _fail(str(e)) from None
    out.print(str(env.root), highlight=False)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
