"""Commands on the case corpus and the published schemas: ``cases list|check|record``, ``schemas``."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer

from conformance.cli import options as opt
from conformance.cli.console import log, out
from conformance.connection.base import ConnectError
from conformance.connection.connectors import connect
from conformance.corpus import cases as case_corpus
from conformance.corpus.record import record
from conformance.errors import RunFailure
from conformance.run.plan import DEFAULT_ORACLE, load_corpus
from conformance.schema_export import all_schemas

SCHEMAS = Path(str(resources.files("conformance") / "schemas"))


def cases_list(
    surface: opt.Surfaces = None,
    cases_root: opt.CasesRoot = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per case.")] = False,
    disagreements: Annotated[bool, typer.Option(
        "--spec-disagrees", help="Only cases where harbor differs from the spec's prose.")] = False,
) -> None:
    """List the cases: id, tags, description, and where harbor differs from the prose spec."""
    loaded = load_corpus(cases_root or case_corpus.default_root())
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


def cases_check(root: Annotated[Path | None, typer.Argument(help="The corpus folder.")] = None) -> None:
    """Lint the corpus: schema, unique ids, inputs, and no float left to the YAML loader.

    Prints each problem as FILE:LINE: [ID] PROBLEM; exit status 2 when there is any (a broken corpus, which
    `certify` refuses).
    """
    root = root or case_corpus.default_root()
    loaded, errors = case_corpus.check_corpus(root)
    for error in errors:
        out.print(str(error), markup=False, highlight=False, soft_wrap=True)
    files = len(case_corpus.case_files(root)) if root.is_dir() else 0
    out.print(f"{len(loaded)} cases in {files} files; {len(errors)} problem(s)", highlight=False)
    raise typer.Exit(2 if errors else 0)


def cases_record(
    root: Annotated[Path | None, typer.Argument(help="The corpus folder.")] = None,
    surface: opt.Surfaces = None,
    oracle: Annotated[str, typer.Option(help="The live oracle: harbor==VERSION.")] = DEFAULT_ORACLE,
) -> None:
    """Write the live oracle's result as `expect:` into each case that has none."""
    root = root or case_corpus.default_root()
    load_corpus(root)
    try:
        connection = connect(oracle, log=log)
    except ConnectError as e:
        raise e.within(f"oracle {oracle}") from None
    with connection:
        done = record(root, connection, surface)
    for item in done:
        if item.expect is None:
            out.print(f"not recorded {item.case_id}: {item.reason}", markup=False, highlight=False, soft_wrap=True)
    written = sum(item.expect is not None for item in done)
    out.print(f"recorded {written} case(s) from {oracle}; {len(done) - written} left without a result",
              highlight=False)
    raise typer.Exit(0 if written == len(done) else 1)


def schemas(
    out_dir: Annotated[Path, typer.Option("--out", help="Where the schema files go.")] = SCHEMAS,
    check: Annotated[bool, typer.Option(help="Only verify the files are up to date.")] = False,
) -> None:
    """Write (or --check) the JSON Schemas of protocol messages, case files, expectation files and reports."""
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
        raise RunFailure(f"out-of-date schema files (run `conformance schemas`): {', '.join(stale)}")
    out.print(f"schemas {'up to date' if check else 'written'} in {out_dir}", highlight=False)
