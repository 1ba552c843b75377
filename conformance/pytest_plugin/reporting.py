"""The JSONL report of a pytest run, the same as ``conformance certify`` writes, written by one process.

Each item's report lines ride on its pytest report (``conformance_lines``:
the lines as the report file holds them), which pytest-xdist carries from
the worker that ran the item to the controller, as it carries any
attribute of a report. The controller (or the only process) gathers them
with what each worker sends when it ends (its candidate failing to stop,
batches asked again one by one), and writes the report when the session
ends: the header (the oracle and the candidate as they started, the
generators' profile and seed), the lines in the order they arrived, and
the footer with the tally, unless the run was cut short (``-x``,
``--maxfail``, an interrupt): such a report reads as unfinished.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterable

    from conformance.pytest_plugin.options import Settings
    from conformance.report.model import CandidateLine, CaseLine, GeneratedLine, Party, Warned
    from conformance.run.expectations import Expectations

ATTRIBUTE = "conformance_lines"


def attach(report: pytest.TestReport, lines: Iterable[CaseLine | GeneratedLine]) -> None:
    from conformance.report.writer import dumps

    # Text, as the report file holds it: any lone surrogate is escaped, so the lines travel as plain strings.
    setattr(report, ATTRIBUTE, [dumps(line) for line in lines])


class Ledger:
    """Every line of the run, as the items' reports and the workers bring them."""

    def __init__(self, rootpath: Path) -> None:
        self.rootpath = rootpath
        self.lines: list[CaseLine | GeneratedLine | CandidateLine] = []
        self.folders: dict[str, set[Path]] = {}  # surface -> the folders its case items came from
        self.batch_fallbacks = 0
        self.cached_answers = 0
        self.recorded_answers = 0

    def _parsed(self, text: str) -> CaseLine | GeneratedLine | CandidateLine:
        from conformance.report.model import LINE_ADAPTER, Footer, Header

        line = LINE_ADAPTER.validate_python(json.loads(text))
        assert not isinstance(line, Header | Footer)  # items and workers send neither
        return line

    def add(self, report: pytest.TestReport) -> None:
        from conformance.report.model import CaseLine

        for text in getattr(report, ATTRIBUTE, None) or []:
            line = self._parsed(text)
            self.lines.append(line)
            if isinstance(line, CaseLine) and not line.generated:
                case_file = self.rootpath / report.location[0]
                self.folders.setdefault(line.surface, set()).add(case_file.parent)

    def add_output(self, output: dict[str, Any]) -> None:
        """What a process sends when it ends."""
        self.lines += [self._parsed(text) for text in output["candidate"]]
        self.batch_fallbacks += output["batch_fallbacks"]
        self.cached_answers += output["cached_answers"]
        self.recorded_answers += output.get("recorded_answers", 0)

    def _records(self) -> list[CaseLine]:
        from conformance.report.model import CaseLine

        return [line for line in self.lines if isinstance(line, CaseLine)]

    def _generated(self) -> dict[str, GeneratedLine]:
        from conformance.report.model import GeneratedLine

        return {line.surface: line for line in self.lines if isinstance(line, GeneratedLine)}

    def warnings(self) -> list[Warned]:
        """The run's warnings, as its report gives them (docs/warnings.md)."""
        from conformance.report.model import CandidateLine
        from conformance.report.writer import Tally

        problems = [line for line in self.lines if isinstance(line, CandidateLine)]
        return Tally.of(self._records(), self._generated().values(), problems).warnings()

    def stale(self, expectations: Expectations) -> list[str]:
        """Entries that named nothing they should have, as certify finds them: an id of a generated input of a
        surface whose generator ran and did not find it; a case id of a surface whose cases ran that names no case
        in their folders (a typo, or a case removed). A case there but not selected (-k, -m) is no such entry."""
        from conformance.corpus.cases import load_file

        seen = {record.id for record in self._records()}
        generated = self._generated()
        corpus: dict[str, set[str]] = {}
        stale = []
        for entry_id in expectations.entries:
            surface, _, slug = entry_id.partition("::")
            if entry_id in seen:
                continue
            if slug.startswith("gen-"):
                if surface in generated:
                    stale.append(entry_id)
            elif surface in self.folders:
                if surface not in corpus:
                    corpus[surface] = {case.id for folder in self.folders[surface]
                                       for path in sorted(folder.glob("*.yaml")) for case in load_file(path)[0]}
                if entry_id not in corpus[surface]:
                    stale.append(entry_id)
        return sorted(stale)

    def expired(self, expectations: Expectations) -> list[str]:
        """Entries naming a case or finding of the run that no longer apply on its date."""
        return expectations.expired(record.id for record in self._records())

    def write(self, settings: Settings, seed: int, parties: tuple[Party, Party], stale: list[str],
              expired: list[str], finished: bool, argv: list[str]) -> None:
        from conformance.report.writer import new_header
        from conformance.run.engine import ReportFile, Stream
        from conformance.run.events import ConnectionCounts, ExpectationsChecked, Outline, RunStarted, of_line
        from conformance.run.generate import describe
        from conformance.run.plan import policy_name

        assert settings.report is not None
        generated = self._generated()
        surfaces = {line.surface for line in self._records()} | set(generated)
        folders = [folder for found in self.folders.values() for folder in found]
        oracle, candidate = parties
        header = new_header(
            oracle=oracle, candidate=candidate, nan_policy=policy_name(settings.run.policy),
            surfaces=sorted(surfaces),
            cases_root=os.path.commonpath([f.parent for f in folders]) if folders else str(self.rootpath),
            argv=argv,
            generation=(describe(settings.run.profile_settings, seed, settings.run.max_examples) if generated
                        else None),
            expectations=str(settings.run.expectations) if settings.run.expectations else None,
        )
        # The lines gathered, replayed as the engine's events into the report file: its tally makes the footer.
        stream = Stream([ReportFile(settings.report)])
        stream.emit(RunStarted(header, Outline(
            cases=Counter(line.surface for line in self._records() if not line.generated),
            generators=tuple(sorted(generated)), budgets={}, profile=settings.run.profile)))
        for line in self.lines:
            stream.emit(of_line(line))
        stream.emit(ConnectionCounts(batch_fallbacks=self.batch_fallbacks, cached_answers=self.cached_answers,
                                     recorded_answers=self.recorded_answers))
        stream.emit(ExpectationsChecked(tuple(stale), tuple(expired)))
        stream.finish(finished)
