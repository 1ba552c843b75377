"""``conformance cases record``: write the live oracle's result into cases that have none.

A new case is written with its input only; recording adds ``expect:`` as the
last key of each such case, from the oracle (never from a candidate). Cases
that already have an expectation are left alone: a stale one is for
``certify`` to report, not for this command to overwrite. The oracle's
``errored`` or lost replies are not results and are never recorded. Each file
is checked after writing and restored if it would not load.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import yaml

from conformance.connection.base import Connection
from conformance.core import surfaces
from conformance.corpus import cases as case_corpus
from conformance.corpus.yaml_values import CaseLoader, render_expect
from conformance.kit import wire

_SEQ = itertools.count(1)


@dataclass(frozen=True)
class Recorded:
    case_id: str
    expect: str | None  # the line written; None: not recorded
    reason: str = ""


def expect_line(connection: Connection, surface: str, value: object) -> tuple[str | None, str]:
    """The ``expect:`` value of the oracle's reply to one input, or None and why."""
    reply = connection.run(next(_SEQ), surface, wire.encode(value))
    result = reply.result(surfaces.get(surface))
    if result is None:
        return None, f"the oracle gave no result ({reply.kind}): {reply.detail or reply.value}"
    return render_expect(result), ""


def _case_ends(text: str) -> dict[str | None, int]:
    """Each case id -> the index of the line after its last non-blank, non-comment line."""
    lines = text.splitlines()
    nodes = case_corpus.case_nodes(yaml.compose(text, Loader=CaseLoader))
    starts = [(first - 1, case_id) for _, case_id, first, _ in nodes]
    ends: dict[str | None, int] = {}
    for (start, case_id), following in itertools.zip_longest(starts, starts[1:], fillvalue=(len(lines), None)):
        end = following[0]
        while end > start and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        ends[case_id] = end
    return ends


def record_file(path: Path, connection: Connection, surfaces: list[str] | None = None) -> list[Recorded]:
    loaded, errors = case_corpus.load_file(path)
    if errors:
        raise case_corpus.CorpusError(errors)
    todo = [item for item in loaded if item.case.expect is None and (not surfaces or item.case.surface in surfaces)]
    if not todo:
        return []
    before = path.read_text(encoding="utf-8")
    lines = before.splitlines()
    ends = _case_ends(before)
    done, inserts = [], []
    for item in todo:
        line, reason = expect_line(connection, item.case.surface, item.case.input)
        done.append(Recorded(item.id, line, reason))
        if line is not None:
            inserts.append((ends[item.id], f"    expect: {line}"))
    for index, text in sorted(inserts, reverse=True):
        lines.insert(index, text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, errors = case_corpus.load_file(path)
    if errors:
        path.write_text(before, encoding="utf-8")
        raise case_corpus.CorpusError(errors)
    return done


def record(root: Path, connection: Connection, surfaces: list[str] | None = None) -> list[Recorded]:
    """Record every case under ``root`` (of ``surfaces``, or all) that has no expectation."""
    done: list[Recorded] = []
    for path in case_corpus.case_files(root):
        done += record_file(path, connection, surfaces)
    return done
