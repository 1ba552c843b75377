"""A report as JUnit XML, for CI systems that show test results: one testcase per case.

Each surface is a testsuite. ``fail``, ``flaky`` and ``xpass`` are failures (of their own ``type``), ``error``,
``crash``, ``timeout`` and ``protocol-error`` errors, ``skip`` and ``xfail``
skipped (with the reason); each surface's generated inputs are one testcase
more, failing when they found an unexpected divergence.

The XML is written as it is made, a testcase at a time: from a report on
disk (:func:`write`), the cases of each surface are read again where the
first pass found them, so no more than one line is in memory at once.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from conformance.core.outcomes import Outcome
from conformance.report.model import CaseLine, result_text
from conformance.report.reader import Overview, Report, ReportFile
from conformance.report.writer import Tally

FAILURES = {Outcome.FAIL, Outcome.FLAKY, Outcome.XPASS}
ERRORS = {Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.PROTOCOL_ERROR, Outcome.BROKEN}
SKIPPED = {Outcome.SKIP, Outcome.XFAIL}


@dataclass
class _Counts:
    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    seconds: float = 0.0

    def add(self, record: CaseLine) -> None:
        self.tests += 1
        self.seconds += record.seconds
        if record.outcome in FAILURES or record.stale:
            self.failures += 1
        elif record.outcome in ERRORS:
            self.errors += 1
        elif record.outcome in SKIPPED:
            self.skipped += 1


def _testcase(record: CaseLine) -> ET.Element:
    surface, outcome = record.surface, record.outcome
    case = ET.Element("testcase", classname=surface, name=record.id, time=f"{record.seconds:.6f}")
    if outcome in FAILURES or record.stale:
        text = f"oracle: {result_text(record.oracle)}\ncandidate: {result_text(record.candidate)}"
        if record.candidate_again is not None:
            text += f"\ncandidate, asked again: {result_text(record.candidate_again)}"
        message = record.first_difference() if outcome in FAILURES else "stale recording"
        ET.SubElement(case, "failure", message=message[:500], type=outcome).text = text
    elif outcome in ERRORS:
        ET.SubElement(case, "error", message=record.first_difference()[:500], type=outcome).text = record.detail
    elif outcome in SKIPPED:
        expected = record.expected_divergence
        reason = expected.reason if outcome is Outcome.XFAIL and expected is not None else record.detail
        ET.SubElement(case, "skipped", message=f"{outcome}: {reason}"[:500])
    return case


def _element(out: IO[str], element: ET.Element, level: int) -> None:
    ET.indent(element, level=level)
    out.write("  " * level + ET.tostring(element, encoding="unicode").rstrip() + "\n")


def _open_tag(tag: str, **attributes: str) -> str:
    text = ET.tostring(ET.Element(tag, attributes), encoding="unicode")  # <tag a="..." />
    return text.removesuffix(" />") + ">"


def _write(out: IO[str], name: str, tally: Tally, counts: dict[str, _Counts],
           cases_of: Callable[[str], Iterable[CaseLine]]) -> None:
    """The XML: ``counts`` (of the declared cases) by surface, ``cases_of(surface)`` its declared cases in order."""
    out.write('<?xml version="1.0" encoding="utf-8"?>\n' + _open_tag("testsuites", name=name) + "\n")
    for surface in sorted(set(counts) | set(tally.generated)):
        count = counts.get(surface, _Counts())
        generated = tally.generated.get(surface)
        unexpected = [i for i in generated.divergences if i not in tally.expected_findings] if generated else []
        tests, failures = count.tests, count.failures
        if generated is not None:
            tests += 1
            failures += bool(unexpected or generated.error or generated.skipped)
        out.write("  " + _open_tag("testsuite", name=surface, tests=str(tests), failures=str(failures),
                                   errors=str(count.errors), skipped=str(count.skipped),
                                   time=f"{count.seconds:.6f}") + "\n")
        for record in cases_of(surface):
            _element(out, _testcase(record), 2)
        if generated is not None:
            case = ET.Element("testcase", classname=surface, name=f"{surface}::generated")
            if unexpected or generated.error or generated.skipped:
                message = f"{len(unexpected)} divergence(s) in {generated.inputs_run} generated inputs"
                if generated.skipped:
                    message += f"; {generated.skipped} skipped: {generated.skip_reason}"
                if generated.error:
                    message += f"; generator error: {generated.error}"
                ET.SubElement(case, "failure", message=message[:500], type="generated").text = "\n".join(unexpected)
            _element(out, case, 2)
        out.write("  </testsuite>\n")
    out.write("</testsuites>\n")


def render(report: Report) -> str:
    """The XML of a report held in memory."""
    by_surface: dict[str, list[CaseLine]] = {}
    counts: dict[str, _Counts] = {}
    for record in report.records:
        count = counts.setdefault(record.surface, _Counts())
        if not record.generated:  # generated findings are counted under the surface's generated-inputs testcase
            by_surface.setdefault(record.surface, []).append(record)
            count.add(record)
    text = io.StringIO()
    _write(text, f"{report.candidate.display_name} vs {report.oracle_spec}", report.tally(), counts,
           lambda surface: by_surface.get(surface, []))
    return text.getvalue()


def write(report: ReportFile, target: Path) -> None:
    """The XML of a report on disk, written to ``target``: one pass for the counts and where each surface's
    cases are (16 bytes a case), then each surface's cases read again from there."""
    view = Overview(None, None, False)
    places: dict[str, tuple[array[int], array[int]]] = {}  # surface -> (byte offsets, line numbers)
    counts: dict[str, _Counts] = {}
    for offset, number, line in report.entries():
        view.add(line)
        if isinstance(line, CaseLine):
            count = counts.setdefault(line.surface, _Counts())
            if not line.generated:
                offsets, numbers = places.setdefault(line.surface, (array("q"), array("q")))
                offsets.append(offset)
                numbers.append(number)
                count.add(line)

    def cases_of(surface: str) -> Iterable[CaseLine]:
        offsets, numbers = places.get(surface, (array("q"), array("q")))
        return (line for line in report.at(zip(offsets, numbers, strict=True)) if isinstance(line, CaseLine))

    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as out:
        _write(out, f"{view.candidate.display_name} vs {view.oracle_spec}", view.tally(), counts, cases_of)
