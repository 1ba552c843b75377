"""Reading a report back: streamed line by line, each line validated into its model, errors naming file and line.

A report is read one line at a time and never held whole: :class:`ReportFile`
yields its lines as they are read (as often as asked), its
:meth:`ReportFile.overview` keeps what a summary shows (the counts, and the
first lines of each kind of problem), and :func:`read` keeps every line, for
the commands that need them all (``combine``, ``--resume``, ``promote``, the
gate). Whatever is wrong with a line is a :class:`ReportError` (exit status
2) naming the file, the line and the problem: a line that is not UTF-8, not
JSON, nested too deeply, longer than :data:`LINE_LIMIT`, not a report line
by the model (:mod:`conformance.report.model`), a value that is not a wire
value, a header that is not the first line, a line after the footer. Only
the last line may be cut short (a killed run): it is dropped and the
report marked truncated.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from conformance.errors import UsageError
from conformance.kit import wire
from conformance.report.model import (
    LINE_ADAPTER,
    REPORT_VERSION,
    CandidateLine,
    CaseLine,
    Footer,
    GeneratedLine,
    Header,
    OutputResult,
    Party,
)
from conformance.report.problems import Problems
from conformance.report.writer import Tally

Line = Header | CaseLine | GeneratedLine | CandidateLine | Footer

# One line's size: a candidate's reply is at most 16 MiB (connection.base.MAX_LINE_BYTES), a case line holds the
# oracle's, the candidate's and the input. A file with no newline is not read into memory whole.
LINE_LIMIT = 256 * 1024 * 1024
# JSON nesting of one line. The writer cannot nest deeper (pydantic serializes at most about 255 levels of a
# value), and a line read must be one that can be written again (combine, --resume).
DEPTH_LIMIT = 200
# The lines of each kind of problem an overview keeps: what the console (10 a group, 20 others) and the
# Markdown summary (50) show; the rest are counted.
SHOWN = 50


class ReportError(UsageError):
    """A report that cannot be read: the message names the file, the line and the problem."""


def _problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is no JSON value")  # NaN, Infinity: the writer never writes them


def _depth_over(value: Any, limit: int) -> bool:
    """Whether a JSON value nests more than ``limit`` arrays and objects deep (iteratively: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _wire_problem(line: CaseLine) -> str | None:
    values = [("input", line.input)]
    values += [(f"{side}.output", result.output) for side, result in (("oracle", line.oracle),
                                                                       ("candidate", line.candidate))
               if isinstance(result, OutputResult)]
    for name, value in values:
        try:
            wire.decode(value)
        except wire.WireError as e:
            return f"{name} is not a wire value ({e})"
    return None


def _size(limit: int) -> str:
    mib = 1024 * 1024
    return f"{limit // mib} MiB" if limit % mib == 0 else f"{limit} bytes"


@dataclass
class Summarised:
    """What every summary of a report starts from: its header and footer, whether its last line was cut."""

    header: Header | None
    footer: Footer | None
    truncated: bool

    @property
    def finished(self) -> bool:
        return self.footer is not None

    @property
    def candidate_spec(self) -> str:
        return self.header.candidate.spec if self.header is not None else "?"

    @property
    def candidate(self) -> Party:
        """The candidate as the header names it (a report without one: its spec is ``?``)."""
        return self.header.candidate if self.header is not None else Party(spec="?")

    @property
    def oracle_spec(self) -> str:
        return self.header.oracle.spec if self.header is not None else "?"

    def add(self, line: Line) -> None:
        """One line of the report, in order: the header and footer kept here, the rest by the kind of summary."""
        if isinstance(line, Header):
            self.header = line
        elif isinstance(line, Footer):
            self.footer = line
        elif isinstance(line, CaseLine):
            self._case(line)
        elif isinstance(line, GeneratedLine):
            self._generated(line)
        else:
            self._candidate_problem(line)

    def _case(self, line: CaseLine) -> None:
        raise NotImplementedError

    def _generated(self, line: GeneratedLine) -> None:
        raise NotImplementedError

    def _candidate_problem(self, line: CandidateLine) -> None:
        raise NotImplementedError

    def _with_footer(self, tally: Tally) -> Tally:
        if self.footer is not None:
            # What only the footer tells: read from it, as a run's events told it (into a copy: asked again, the
            # tally is the same).
            tally = dataclasses.replace(tally, stale_expectations=[], expired_expectations=[], batch_fallbacks=0,
                                        cached_answers=0, recorded_answers=0, recorded_inputs=0)
            tally.add_stale_expectations(self.footer.stale_expectations)
            tally.add_expired_expectations(self.footer.expired_expectations)
            tally.add_counts(batch_fallbacks=self.footer.batch_fallbacks, cached_answers=self.footer.cached_answers,
                             recorded_answers=self.footer.recorded_answers,
                             recorded_inputs=self.footer.recorded_inputs)
        return tally

    def tally(self) -> Tally:
        raise NotImplementedError

    def problems(self) -> Problems:
        raise NotImplementedError


@dataclass
class Report(Summarised):
    """A report with every line in memory."""

    records: list[CaseLine] = field(default_factory=list)
    generated: list[GeneratedLine] = field(default_factory=list)
    candidate_problems: list[CandidateLine] = field(default_factory=list)

    @classmethod
    def of(cls, lines: Iterable[Line], truncated: bool = False) -> Report:
        report = cls(None, None, truncated)
        for line in lines:
            report.add(line)
        return report

    def _case(self, line: CaseLine) -> None:
        self.records.append(line)

    def _generated(self, line: GeneratedLine) -> None:
        self.generated.append(line)

    def _candidate_problem(self, line: CandidateLine) -> None:
        self.candidate_problems.append(line)

    def tally(self) -> Tally:
        return self._with_footer(Tally.of(self.records, self.generated, self.candidate_problems))

    def problems(self) -> Problems:
        return Problems.of(self.records)


@dataclass
class Overview(Summarised):
    """A report's counts, and the first :data:`SHOWN` lines of each kind of problem: gathered in one pass."""

    counted: Tally = field(default_factory=Tally)
    found: Problems = field(default_factory=lambda: Problems(keep=SHOWN))

    def _case(self, line: CaseLine) -> None:
        self.counted.add(line)
        self.found.add(line)

    def _generated(self, line: GeneratedLine) -> None:
        self.counted.add_generated(line)

    def _candidate_problem(self, line: CandidateLine) -> None:
        self.counted.add_candidate_problem(line)

    def tally(self) -> Tally:
        return self._with_footer(self.counted)

    def problems(self) -> Problems:
        return self.found


class ReportFile:
    """A report on disk, read line by line as often as asked, every line validated as it is read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.truncated = False  # set once the lines have been read to the end

    def lines(self) -> Iterator[Line]:
        for _, _, line in self.entries():
            yield line

    def records(self) -> Iterator[CaseLine]:
        for line in self.lines():
            if isinstance(line, CaseLine):
                yield line

    def overview(self) -> Overview:
        view = Overview(None, None, False)
        for line in self.lines():
            view.add(line)
        view.truncated = self.truncated
        return view

    def load(self) -> Report:
        report = Report.of(self.lines())
        report.truncated = self.truncated  # known once the lines are read
        return report

    def entries(self) -> Iterator[tuple[int, int, Line]]:
        """(byte offset, line number, line) of each line, in order."""
        self.truncated = False
        pending: str | None = None  # a line cut short, forgiven if it turns out to be the last
        footer_seen = started = False
        with self._open() as handle:
            offset = number = 0
            while raw := handle.readline(LINE_LIMIT + 1):
                number, start = number + 1, offset
                offset += len(raw)
                if len(raw) > LINE_LIMIT:
                    raise ReportError(f"{self.path}:{number}: a line longer than {_size(LINE_LIMIT)}")
                if not raw.strip():
                    continue
                if pending is not None:
                    raise ReportError(pending)
                where = f"{self.path}:{number}"
                if footer_seen:
                    raise ReportError(f"{where}: a line after the footer (the footer is the report's last line)")
                data, pending = self._json(raw, where)
                if pending is not None:
                    continue
                line = self._validated(data, where)
                if isinstance(line, Header) and started:
                    raise ReportError(f"{where}: a second header (the header is the report's first line)")
                if not isinstance(line, Header) and not started:
                    raise ReportError(f"{where}: the first line is a {line.type} line, not the header")
                footer_seen = isinstance(line, Footer)
                started = True
                yield start, number, line
        self.truncated = pending is not None

    def at(self, places: Iterable[tuple[int, int]]) -> Iterator[Line]:
        """The lines at these (byte offset, line number) places, read again (as :meth:`entries` gave them)."""
        with self._open() as handle:
            for offset, number in places:
                handle.seek(offset)
                raw = handle.readline(LINE_LIMIT + 1)
                where = f"{self.path}:{number}"
                data, cut = self._json(raw, where)
                if cut is not None:
                    raise ReportError(cut + " (the report changed while it was read)")
                yield self._validated(data, where)

    def _open(self) -> IO[bytes]:
        try:
            return self.path.open("rb")
        except OSError as e:
            raise ReportError(f"{self.path}: cannot read: {e.strerror or e}") from None

    @staticmethod
    def _json(raw: bytes, where: str) -> tuple[Any, str | None]:
        """The line's JSON value, or (None, the problem) for a line that could be one cut short."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return None, f"{where}: not UTF-8 text ({e.reason} at byte {e.start + 1} of the line)"
        try:
            data = json.loads(text, parse_constant=_no_constant)
        except RecursionError:
            raise ReportError(f"{where}: nested more than {DEPTH_LIMIT} levels deep") from None
        except json.JSONDecodeError:
            return None, f"{where}: not a JSON line"
        except ValueError as e:  # a constant, or an int past Python's limit on digits
            raise ReportError(f"{where}: not a JSON line ({str(e).splitlines()[0]})") from None
        # A line with fewer brackets than the limit cannot nest deeper: counting them is cheap, walking is not.
        deep = raw.count(b"[") + raw.count(b"{") > DEPTH_LIMIT
        if deep and isinstance(data, (dict, list)) and _depth_over(data, DEPTH_LIMIT):
            raise ReportError(f"{where}: nested more than {DEPTH_LIMIT} levels deep")
        return data, None

    @staticmethod
    def _validated(data: Any, where: str) -> Line:
        try:
            line = LINE_ADAPTER.validate_python(data)
        except ValidationError as e:
            raise ReportError(f"{where}: not a report line ({_problem(e)})") from None
        if isinstance(line, Header) and line.report_version != REPORT_VERSION:
            raise ReportError(f"{where}: report version {line.report_version}; this suite reads version "
                              f"{REPORT_VERSION}")
        if isinstance(line, CaseLine) and (problem := _wire_problem(line)) is not None:
            raise ReportError(f"{where}: case {line.id}: {problem}")
        return line


def read(path: Path) -> Report:
    """The report at ``path``, every line in memory; ReportError (exit status 2) for a line that is not a report
    line. Only the last line may be cut short (a killed run): it is dropped and the report marked truncated."""
    return ReportFile(path).load()

