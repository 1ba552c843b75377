"""A run shows its progress and its problems while it goes, not only at the end."""

from __future__ import annotations

import io

from rich.console import Console

from conformance.cli.progress import LineProgress, LiveProgress, ProgressMode, watcher_for
from conformance.connection.connectors import parse
from conformance.run import certification
from conformance.run.plan import Options
from conformance.run.watch import Outline, Watcher
from tests import wrong_candidates


class Witness(Watcher):
    """Notes, at each event, how many case lines the report on disk holds."""

    def __init__(self, report):
        self.report = report
        self.events: list[tuple[str, object, int]] = []

    def _on_disk(self) -> int:
        return self.report.read_text().count('"type": "case"') if self.report.exists() else 0

    def started(self, outline: Outline) -> None:
        self.events.append(("started", sum(outline.cases.values()), self._on_disk()))

    def case(self, record) -> None:
        self.events.append(("case", record.id, self._on_disk()))

    def finished(self) -> None:
        self.events.append(("finished", None, self._on_disk()))


def _recorded(candidate: str, report, *surfaces: str) -> Options:
    return Options(candidate=parse(candidate), oracle="recorded", surfaces=list(surfaces) or None)


def _reward_parse_cases(corpus) -> int:
    return sum(loaded.case.surface == "reward.parse" for loaded in corpus)


def test_each_record_is_shown_once_it_is_on_disk_and_before_the_run_ends(tmp_path, corpus):
    count = _reward_parse_cases(corpus)
    report = tmp_path / "r.jsonl"
    witness = Witness(report)
    certification.certify(_recorded("tests.wrong_candidates:empty_by_strip", report, "reward.parse"), report,
                          watcher=witness)
    kinds = [kind for kind, _, _ in witness.events]
    assert kinds[0] == "started" and kinds[-1] == "finished" and kinds.count("finished") == 1
    assert witness.events[0][1] == count  # the reward.parse cases
    cases = [(i, on_disk) for kind, i, on_disk in witness.events if kind == "case"]
    assert len(cases) == count
    # The n-th record shown is the n-th on disk: written (and flushed) first, shown at once.
    assert [on_disk for _, on_disk in cases] == list(range(1, count + 1))


def test_the_watcher_is_told_the_run_ended_when_the_candidate_never_starts(tmp_path):
    report = tmp_path / "r.jsonl"
    witness = Witness(report)
    certification.certify(_recorded("exec:false", report, "reward.parse"), report, watcher=witness)
    assert [kind for kind, _, _ in witness.events][-1] == "finished"


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    text = io.StringIO()
    return Console(file=text, force_terminal=terminal, width=200, color_system=None, soft_wrap=True), text


def test_auto_is_live_on_a_terminal_and_lines_elsewhere():
    assert isinstance(watcher_for(ProgressMode.AUTO, _console(True)[0]), LiveProgress)
    assert isinstance(watcher_for(ProgressMode.AUTO, _console(False)[0]), LineProgress)
    assert type(watcher_for(ProgressMode.NONE, _console(True)[0])) is Watcher


def test_the_live_display_prints_each_problem_and_goes_away(tmp_path, corpus):
    stream, text = _console(True)
    report = tmp_path / "r.jsonl"
    certification.certify(_recorded("tests.wrong_candidates:empty_by_strip", report, "reward.parse"), report,
                          watcher=watcher_for(ProgressMode.LIVE, stream))
    shown = text.getvalue()
    blank = len(wrong_candidates.caught_by_strip(corpus))
    assert blank >= 3
    assert shown.count("FAIL reward.parse::") == blank
    assert f"{blank} problem(s)" in shown
    assert not stream._live_stack  # the display was stopped


def test_a_broken_candidate_is_reported_once_not_for_every_remaining_case(tmp_path, corpus):
    stream, text = _console(False)
    report = tmp_path / "r.jsonl"
    certification.certify(Options(candidate=parse("exec:sh -c 'read line; echo not json'"), oracle="recorded",
                                  surfaces=["reward.parse"], broken_after=2), report,
                          watcher=watcher_for(ProgressMode.LINES, stream))
    lines = text.getvalue().splitlines()
    broken = [line for line in lines if line.startswith("BROKEN ")]
    assert len(broken) == 1 and "the remaining cases are recorded as broken" in broken[0]
    assert f"reward.parse: {_reward_parse_cases(corpus)} case(s) done" in "\n".join(lines)
