"""The JSONL report: a header, one record per case (flushed as it is written), a footer.

Everything else (terminal table, summaries) is derived from these lines, so a
report can be re-read and re-summarised later. A run killed midway leaves a
readable report: every line written is complete (but perhaps the last), and
``certify --resume`` goes on from it.

Line types: ``header``; ``case`` (a case, or a generated divergence);
``generated`` (a surface's generator finished); ``candidate`` (the candidate
failed to start or to stop); ``footer``.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from conformance import SUITE, __version__
from conformance.connection.protocol import PROTOCOL_VERSION
from conformance.core.compare import COMPARATOR_VERSION
from conformance.run.runner import OUTCOMES, CaseRecord

REPORT_VERSION = 1


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def header(
    *, oracle: dict[str, Any], candidate: dict[str, Any], nan_policy: str, surfaces: list[str],
    cases_root: str, argv: list[str] | None = None, generation: dict[str, Any] | None = None,
    expectations: str | None = None, resumed: list[dict[str, Any]] | None = None,
    shard: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "type": "header",
        "report_version": REPORT_VERSION,
        "suite": SUITE,
        "suite_version": __version__,
        "protocol": PROTOCOL_VERSION,
        "comparator": COMPARATOR_VERSION,
        "nan_policy": nan_policy,
        "oracle": oracle,
        "candidate": candidate,
        "surfaces": surfaces,
        "cases_root": cases_root,
        # profile, seed and budget of the generated inputs (None when not generated): enough to re-run them
        "generation": generation,
        "expectations": expectations,  # the expectation file applied, if any
        "resumed": resumed,
        "shard": shard,  # with --shard: {index, count, cases: the ids it was given}  # the interrupted runs whose finished lines this report keeps, if any
        "python": platform.python_version(),
        "argv": argv if argv is not None else sys.argv,
        "started_at": _now(),
    }


@dataclass
class Tally:
    """Counts per outcome, overall and per surface."""

    outcomes: Counter = field(default_factory=Counter)
    by_surface: dict[str, Counter] = field(default_factory=dict)
    stale_recordings: list[str] = field(default_factory=list)
    generated: dict[str, dict[str, Any]] = field(default_factory=dict)  # surface -> its "generated" line
    findings: list[str] = field(default_factory=list)  # ids of generated inputs that diverged
    expected_findings: list[str] = field(default_factory=list)  # ... as the expectation file lists them
    stale_expectations: list[str] = field(default_factory=list)  # entries naming no case of the run
    protocol_errors: Counter = field(default_factory=Counter)  # by name, over cases and findings
    candidate_problems: list[dict[str, Any]] = field(default_factory=list)  # failed start or stop: its "candidate" line
    batch_fallbacks: int = 0  # batches that failed as a whole and were asked again one request at a time

    def add_generated(self, line: dict[str, Any]) -> None:
        self.generated[line["surface"]] = line

    @property
    def generator_errors(self) -> list[str]:
        return [f"{s}: {g['error']}" for s, g in sorted(self.generated.items()) if g.get("error")]

    def add(self, record: dict[str, Any]) -> None:
        if record.get("protocol_error"):
            self.protocol_errors[record["protocol_error"]] += 1
        if record.get("origin") == "generated":
            # A shrunk generator finding: counted with its generator's line, not as a case.
            (self.expected_findings if record["outcome"] == "xfail" else self.findings).append(record["id"])
            return
        self.outcomes[record["outcome"]] += 1
        self.by_surface.setdefault(record["surface"], Counter())[record["outcome"]] += 1
        if record.get("recording") == "stale":
            self.stale_recordings.append(record["id"])

    @property
    def total(self) -> int:
        return sum(self.outcomes.values())

    @property
    def conforms(self) -> bool:
        checked = self.total > 0 or bool(self.generated)
        conforming = self.outcomes["pass"] + self.outcomes["xfail"]
        return (checked and conforming == self.total and not self.stale_recordings
                and not self.findings and not self.generator_errors and not self.stale_expectations
                and not self.candidate_problems)

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "outcomes": {name: self.outcomes.get(name, 0) for name in OUTCOMES},
            "by_surface": {s: {n: c.get(n, 0) for n in OUTCOMES} for s, c in sorted(self.by_surface.items())},
            "stale_recordings": self.stale_recordings,
            "generated": {s: {k: g[k] for k in ("inputs_run", "divergences", "error") if k in g}
                          for s, g in sorted(self.generated.items())},
            "findings": len(self.findings),
            "expected_findings": len(self.expected_findings),
            "stale_expectations": self.stale_expectations,
            "protocol_errors": dict(sorted(self.protocol_errors.items())),
            "candidate_problems": [f"{p['stage']}: {p['outcome']}" for p in self.candidate_problems],
            "batch_fallbacks": self.batch_fallbacks,
            "conforms": self.conforms,
        }


class ReportWriter:
    """Writes a report line by line, each flushed as it is written.

    ``kept``: the lines of an interrupted run that a resumed run keeps. They
    are written, after the header, to a new file that then replaces the old
    one in a single rename, so a run killed while resuming still leaves one
    whole report.
    """

    def __init__(self, path: Path | None, head: dict[str, Any], kept: list[dict[str, Any]] = ()) -> None:
        self.path = path
        self.tally = Tally()
        self._handle: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            writing = path.with_name(path.name + ".resuming") if kept else path
            self._handle = open(writing, "w", encoding="utf-8")
        self._write(head)
        for line in kept:
            {"case": self.tally.add, "generated": self.tally.add_generated,
             "candidate": self.tally.candidate_problems.append}[line["type"]](line)
            self._write(line)
        if kept and path is not None:
            os.replace(writing, path)

    def _write(self, line: dict[str, Any]) -> None:
        if self._handle is not None:
            self._handle.write(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n")
            self._handle.flush()

    def record(self, record: CaseRecord) -> None:
        data = record.to_json()
        self.tally.add(data)
        self._write(data)

    def candidate_problem(self, stage: str, reply: Any) -> None:
        """The candidate failed to ``start`` or to ``stop``: ``reply`` (a connect.Reply) says how."""
        line = {"type": "candidate", "stage": stage, "outcome": reply.kind, "detail": reply.detail}
        if reply.error:
            line["protocol_error"] = reply.error
        self.tally.candidate_problems.append(line)
        self._write(line)

    def generated(self, line: dict[str, Any]) -> None:
        """A surface's generator finished: its findings are already recorded; this is its summary."""
        self.tally.add_generated(line)
        self._write(line)

    def close(self, footer: bool = True) -> dict[str, Any]:
        """The footer, written unless the run did not finish (``footer=False``)."""
        line = {"type": "footer", "finished_at": _now(), **self.tally.to_json()}
        if footer:
            self._write(line)
        if self._handle is not None:
            self._handle.close()
        return line


@dataclass
class Report:
    header: dict[str, Any] | None
    records: list[dict[str, Any]]
    footer: dict[str, Any] | None
    truncated: bool = False  # a last line cut short by a killed run
    generated: list[dict[str, Any]] = field(default_factory=list)
    candidate_problems: list[dict[str, Any]] = field(default_factory=list)

    def tally(self) -> Tally:
        tally = Tally()
        for record in self.records:
            tally.add(record)
        for line in self.generated:
            tally.add_generated(line)
        tally.candidate_problems = list(self.candidate_problems)
        if self.footer is not None:
            tally.stale_expectations = list(self.footer.get("stale_expectations", []))
        return tally


def read(path: Path) -> Report:
    head, records, generated, problems, foot, truncated = None, [], [], [], None, False
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                truncated = True
                break
            raise ValueError(f"{path}:{number}: not a JSON line") from None
        kind = data.get("type")
        if kind == "header":
            head = data
        elif kind == "footer":
            foot = data
        elif kind == "case":
            records.append(data)
        elif kind == "generated":
            generated.append(data)
        elif kind == "candidate":
            problems.append(data)
        else:
            raise ValueError(f"{path}:{number}: unknown line type {kind!r}")
    return Report(head, records, foot, truncated, generated, problems)
