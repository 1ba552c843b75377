"""A report as JUnit XML, for CI systems that show test results: one testcase per case.

Each surface is a testsuite. ``fail`` and ``xpass`` are failures, ``error``,
``crash``, ``timeout`` and ``protocol-error`` errors, ``skip`` and ``xfail``
skipped (with the reason); each surface's generated inputs are one testcase
more, failing when they found an unexpected divergence.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conformance.core.outcomes import Outcome
from conformance.report.model import CaseLine, result_text
from conformance.report.reader import Report

FAILURES = {Outcome.FAIL, Outcome.XPASS}
ERRORS = {Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.PROTOCOL_ERROR, Outcome.BROKEN}
SKIPPED = {Outcome.SKIP, Outcome.XFAIL}


def render(report: Report) -> str:
    tally = report.tally()
    name = f"{report.candidate_spec} vs {report.oracle_spec}"
    root = ET.Element("testsuites", name=name)
    by_surface: dict[str, list[CaseLine]] = {}
    for record in report.records:
        by_surface.setdefault(record.surface, []).append(record)
    for surface in sorted(set(by_surface) | set(tally.generated)):
        suite = ET.SubElement(root, "testsuite", name=surface)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        seconds = 0.0
        for record in by_surface.get(surface, []):
            if record.generated:
                continue  # counted under the surface's generated-inputs testcase
            counts["tests"] += 1
            seconds += record.seconds
            case = ET.SubElement(suite, "testcase", classname=surface, name=record.id, time=f"{record.seconds:.6f}")
            outcome = record.outcome
            if outcome in FAILURES or record.stale:
                counts["failures"] += 1
                text = f"oracle: {result_text(record.oracle)}\ncandidate: {result_text(record.candidate)}"
                message = record.first_difference() if outcome in FAILURES else "stale recording"
                ET.SubElement(case, "failure", message=message[:500], type=outcome).text = text
            elif outcome in ERRORS:
                counts["errors"] += 1
                ET.SubElement(case, "error", message=record.first_difference()[:500], type=outcome).text = (
                    record.detail)
            elif outcome in SKIPPED:
                expected = record.expected_divergence
                counts["skipped"] += 1
                reason = expected.reason if outcome is Outcome.XFAIL and expected is not None else record.detail
                ET.SubElement(case, "skipped", message=f"{outcome}: {reason}"[:500])
        line = tally.generated.get(surface)
        if line is not None:
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=surface, name=f"{surface}::generated")
            unexpected = [i for i in line.divergences if i not in tally.expected_findings]
            if unexpected or line.error:
                counts["failures"] += 1
                message = f"{len(unexpected)} divergence(s) in {line.inputs_run} generated inputs"
                if line.error:
                    message += f"; generator error: {line.error}"
                ET.SubElement(case, "failure", message=message[:500], type="generated").text = "\n".join(unexpected)
        for key, value in counts.items():
            suite.set(key, str(value))
        suite.set("time", f"{seconds:.6f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
