"""Reading a report back: each line validated into its model, streamed, errors naming file and line."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from conformance.errors import UsageError
from conformance.report.model import LINE_ADAPTER, CandidateLine, CaseLine, Footer, GeneratedLine, Header
from conformance.report.writer import Tally


class ReportError(UsageError):
    """A report that cannot be read: the message names the file, the line and the problem."""


@dataclass
class Report:
    header: Header | None
    records: list[CaseLine]
    footer: Footer | None
    truncated: bool = False  # a last line cut short by a killed run
    generated: list[GeneratedLine] = field(default_factory=list)
    candidate_problems: list[CandidateLine] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.footer is not None

    @property
    def candidate_spec(self) -> str:
        return self.header.candidate.spec if self.header is not None else "?"

    @property
    def oracle_spec(self) -> str:
        return self.header.oracle.spec if self.header is not None else "?"

    def tally(self) -> Tally:
        tally = Tally.of(self.records, self.generated, self.candidate_problems)
        if self.footer is not None:
            tally.stale_expectations = list(self.footer.stale_expectations)
            tally.batch_fallbacks = self.footer.batch_fallbacks
        return tally


def _problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def read(path: Path) -> Report:
    """The report at ``path``; ReportError (exit status 2) for a line that is not a report line.

    Only the last line may be cut short (a killed run): it is dropped and the report marked truncated.
    """
    report = Report(None, [], None)
    pending: str | None = None  # a bad line, forgiven if it turns out to be the last
    try:
        handle = path.open(encoding="utf-8")
    except OSError as e:
        raise ReportError(f"{path}: cannot read: {e.strerror or e}") from None
    with handle:
        try:
            for number, text in enumerate(handle, 1):
                if not text.strip():
                    continue
                if pending is not None:
                    raise ReportError(pending)
                try:
                    data = json.loads(text)
                except json.JSONDecodeError:
                    pending = f"{path}:{number}: not a JSON line"
                    continue
                try:
                    line = LINE_ADAPTER.validate_python(data)
                except ValidationError as e:
                    raise ReportError(f"{path}:{number}: not a report line ({_problem(e)})") from None
                if isinstance(line, Header):
                    report.header = line
                elif isinstance(line, Footer):
                    report.footer = line
                elif isinstance(line, CaseLine):
                    report.records.append(line)
                elif isinstance(line, GeneratedLine):
                    report.generated.append(line)
                else:
                    report.candidate_problems.append(line)
        except UnicodeDecodeError as e:
            raise ReportError(f"{path}: not UTF-8 text ({e.reason})") from None
    report.truncated = pending is not None
    return report
