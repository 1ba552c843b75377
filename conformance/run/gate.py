"""The upgrade gate: harbor 0.13.1 as the oracle, another harbor release as the candidate.

It is a certification like any other (same runner, same comparator, the
release served by the same adapter in its own cached virtualenv), with the
``ci`` profile's generated inputs, the release's expectation file
(``oracles/expectations/harbor-VERSION.yaml``) when there is one, and a
Markdown account of every behaviour that changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance import ORACLE_RELEASE, shipped
from conformance.connection.connectors import parse
from conformance.corpus import cases as case_corpus
from conformance.report import markdown
from conformance.report.model import CaseLine
from conformance.report.reader import read
from conformance.run import certification
from conformance.run.plan import load_corpus
from conformance.run.watch import Watcher

BASELINE = ORACLE_RELEASE


def expectations_path(version: str) -> Path | None:
    """The committed expectation file of a harbor release, if the suite ships one."""
    path = shipped.oracle_file("expectations", f"harbor-{version}.yaml")
    return path if path.is_file() else None


@dataclass
class GateResult:
    version: str
    report: Path
    markdown: Path
    run: certification.Run

    @property
    def passed(self) -> bool:
        return self.run.conforms


def corpus_lookup(root: Path) -> Callable[[str], tuple[str, Any] | None]:
    """A case's description and input by id, for the Markdown account."""
    by_id = {item.id: (item.case.description, item.case.input) for item in load_corpus(root)}
    return by_id.get


def run(version: str, *, out_dir: Path, baseline: str = BASELINE, expectations: Path | None = None,
        profile: str = "ci", no_generate: bool = False, cases_root: Path | None = None,
        surfaces: list[str] | None = None, lookup: Callable[[str], tuple[str, Any] | None] | None = None,
        log: Callable[[str], None] = lambda message: None, watcher: Watcher | None = None,
        oracle_cache: bool = True) -> GateResult:
    """Gate one release; writes ``<out_dir>/harbor-VERSION.jsonl`` and ``.md``.

    ``lookup``: a case's description and input by id (:func:`corpus_lookup`), read once for many releases.
    ``oracle_cache``: the baseline's answers from the oracle answer cache, which every release gated against
    the same baseline shares (the release itself, the candidate, is always asked).
    """
    known = expectations if expectations is not None else expectations_path(version)
    options = certification.Options(
        candidate=parse(f"harbor=={version}"), oracle=parse(f"harbor=={baseline}"), profile=profile,
        no_generate=no_generate, expectations=known, cases_root=cases_root, surfaces=surfaces,
        oracle_cache=oracle_cache)
    report = out_dir / f"harbor-{version}.jsonl"
    result = certification.certify(options, report, log=log, watcher=watcher)
    if lookup is None:
        lookup = corpus_lookup(cases_root or case_corpus.default_root())
    text = markdown.changes(read(report), baseline=baseline, release=version, lookup=lookup)
    md = out_dir / f"harbor-{version}.md"
    md.write_text(text, encoding="utf-8")
    return GateResult(version, report, md, result)


def changes_document(results: list[GateResult], *, baseline: str = BASELINE,
                     lookup: Callable[[str], tuple[str, Any] | None] = lambda case_id: None) -> str:
    """One document for many releases: which change scoring, then each change once, with an example.

    A release's divergences are grouped by their expectation entry's reason
    (unlisted ones in a group of their own); each group shows its ids and the
    smallest input among them with both outputs. The full account of a
    release is its gate report (``reports/gate/harbor-VERSION.md``).
    """
    lines = [
        f"# Scoring changes in harbor releases, against harbor {baseline}",
        "",
        "Written by `nox -s harbor-changes` (`conformance gate --since 0.13.0 --doc docs/harbor-changes.md`):",
        f"every case of the corpus and the `ci` profile's generated inputs, with harbor {baseline} as the oracle",
        "and each release as the candidate, served by the same adapter in its own virtualenv pinned by",
        "`oracles/locks/harbor-VERSION.lock`. Each change is listed, with its reason, in",
        "`oracles/expectations/harbor-VERSION.yaml`; a change not listed there fails that release's gate.",
        "See [upgrade-gate.md](upgrade-gate.md).",
        "",
        "| release | cases | generated inputs | behaviours changed | gate | how |",
        "|---|---:|---:|---:|---|---|",
    ]
    sections = []
    for result in results:
        data = read(result.report)
        tally = data.tally()
        changed = [r for r in data.records if r.signature is not None]
        inputs = sum(g.inputs_run for g in tally.generated.values())
        groups: dict[str, list[CaseLine]] = {}
        for record in changed:
            expected = record.expected_divergence
            reason = expected.reason if expected is not None else "not in the expectation file"
            groups.setdefault(reason, []).append(record)
        how = "; ".join(f"{reason} ({len(records)})" for reason, records in groups.items()) or "no change"
        lines.append(f"| {result.version} | {tally.total} | {inputs} | {len(changed)} | "
                     f"{'passed' if result.passed else 'FAILED'} | {_table_cell(how)} |")
        if changed:
            sections.append(_release_section(result.version, baseline, groups, lookup))
    return "\n".join([*lines, "", *sections]).rstrip() + "\n"


def _table_cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def _release_section(version: str, baseline: str, groups: dict[str, list[CaseLine]],
                     lookup: Callable[[str], tuple[str, Any] | None]) -> str:
    lines = [f"## harbor {version}", ""]
    for reason, records in groups.items():
        link = next((r.expected_divergence.link for r in records
                     if r.expected_divergence is not None and r.expected_divergence.link), None)
        lines += [f"### {reason}" + (f" ([link]({link}))" if link else ""), ""]
        by_surface: dict[str, list[str]] = {}
        for record in records:
            by_surface.setdefault(record.surface, []).append(record.id)
        for surface, ids in sorted(by_surface.items()):
            lines.append(f"- `{surface}` ({len(ids)}): " + ", ".join(f"`{i.split('::', 1)[1]}`" for i in ids))
        example = min(records, key=lambda r: len(repr(markdown.input_of(r, lookup))))
        lines += ["", f"For example `{example.id}`:", "",
                  *markdown.example(example, baseline, version, lookup), ""]
    return "\n".join(lines)
