"""``conformance promote``: generated divergences in a report become YAML cases.

Only divergences are promoted: a generated line whose candidate conformed,
skipped the input or was given up on holds nothing to pin. Each finding
carries its minimal input and the oracle's result, so the case is
complete: the expectation is what the oracle did, not what the candidate
did. Its id is derived from the input (``<surface>::gen-<sha256 prefix>``), so the
same finding promoted twice is the same case, and ids already in the corpus
are left alone. Cases are appended to ``cases/<surface>/generated.yaml`` and
the file is checked after writing; a file that would not load is restored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conformance import ORACLE_RELEASE
from conformance.core import surfaces
from conformance.core.outcomes import DIVERGING, Outcome
from conformance.corpus import cases as case_corpus
from conformance.corpus.files import FileProblem, read_case_file
from conformance.corpus.yaml_values import render, render_expect
from conformance.report.model import CaseLine, Header
from conformance.report.reader import Report

TARGET_FILE = "generated.yaml"
UNLOADED = "the promoted cases do not load, nothing written"  # what a CorpusError of promotion says first
# The outcomes of a divergence the candidate showed (an expected one included): a skip or a candidate given up
# on showed none.
PROMOTED = (DIVERGING - {Outcome.SKIP, Outcome.BROKEN}) | {Outcome.XFAIL}


@dataclass(frozen=True)
class Promoted:
    case_id: str
    file: Path | None  # None: skipped
    reason: str = ""


def _description(record: CaseLine, head: Header | None) -> str:
    gen = head.generation if head is not None else None
    candidate = head.candidate.spec if head is not None else "?"
    origin = f"generated ({gen.profile}, seed {gen.seed})" if gen is not None else "generated"
    return f"{origin} against {candidate}; {record.first_difference()}"[:400]


def case_yaml(record: CaseLine, head: Header | None) -> str:
    """One case, as list-item lines for a case file's ``cases:``."""
    surface = surfaces.get(record.surface)
    assert record.oracle is not None  # promoted only with the oracle's result
    expect = render_expect(record.oracle.to_result())
    classes = sorted({m.cls.value for m in record.mismatches}) or [str(record.outcome)]
    lines = [
        f"  - id: {record.id}",
        f"    description: {render(_description(record, head))}",
        f"    tags: [{', '.join(['generated', *classes])}]",
        f"    spec: {surface.spec}",
    ]
    implementation = head.oracle.implementation if head is not None else None
    version = implementation.version if implementation is not None else None
    if version and version != ORACLE_RELEASE:
        lines.append(f'    harbor: "=={version}"')  # recorded from another release than the corpus's
    lines += [f"    input: {render(record.decoded_input)}", f"    expect: {expect}"]
    return "\n".join(lines) + "\n"


def promote(report: Report, root: Path) -> list[Promoted]:
    """Append every generated finding of ``report`` to the corpus at ``root``."""
    head = report.header
    known = {item.id for item in case_corpus.check_corpus(root)[0]} if root.is_dir() else set()
    pending: dict[str, list[str]] = {}
    done: list[Promoted] = []
    for record in report.records:
        if not record.generated or record.outcome not in PROMOTED:
            continue  # a skip (written as a finding by older reports), a pass, an xpass: no divergence to pin
        if record.oracle is None:
            done.append(Promoted(record.id, None, "no oracle result to record"))
        elif record.id in known:
            done.append(Promoted(record.id, None, "already in the corpus"))
        else:
            known.add(record.id)
            pending.setdefault(record.surface, []).append(case_yaml(record, head))
            done.append(Promoted(record.id, root / record.surface / TARGET_FILE))
    for surface, entries in pending.items():
        _append(root / surface / TARGET_FILE, surface, entries)
    return done


def _append(path: Path, surface: str, entries: list[str]) -> None:
    before = None
    if path.is_symlink() or path.exists():  # appended to only if it is a case file the corpus would read
        try:
            before = read_case_file(path).decode("utf-8")
        except (FileProblem, UnicodeDecodeError) as e:
            raise case_corpus.CorpusError([case_corpus.CaseError(path, 1, None, str(e))], UNLOADED) from None
    if before is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = f"surface: {surface}\ncases:\n" + "".join(entries)
    else:
        text = before + ("" if before.endswith("\n") else "\n") + "".join(entries)
    path.write_text(text, encoding="utf-8")
    _, errors = case_corpus.load_file(path)
    if errors:
        if before is None:
            path.unlink()
        else:
            path.write_text(before, encoding="utf-8")
        raise case_corpus.CorpusError(errors, UNLOADED)
