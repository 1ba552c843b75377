"""One engine: a run is a sequence of events, and certify, the pytest plugin and a campaign's task read them.

Offline: the cases against their recordings, and generated inputs against
the reference standing in as the oracle (no harbor started).
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest

import conformance.pytest_plugin.session  # noqa: F401 - imported once, not by each pytester run
import tests.wrong_candidates  # noqa: F401 - as above
from conformance.campaign import tasks
from conformance.campaign.findings import CampaignReport
from conformance.campaign.plan import Connections, Task
from conformance.connection.connectors import connect, parse
from conformance.core.outcomes import Outcome
from conformance.report.model import CandidateLine, CaseLine, Footer, GeneratedLine, Party
from conformance.report.reader import read
from conformance.report.writer import Tally
from conformance.run import certification, generate
from conformance.run.engine import Engine, Stream
from conformance.run.events import (
    CandidateFailed,
    CaseFinished,
    ConnectionCounts,
    Event,
    ExpectationsChecked,
    FindingFound,
    GenerationStarted,
    InputGenerated,
    RunFinished,
    RunStarted,
    SurfaceFinished,
)
from conformance.run.plan import Options, make_plan
from conformance.run.runner import Oracle

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parent.parent
WRONG = "tests.wrong_candidates:txt_before_json"  # reads reward.txt before reward.json: fails some precedence cases
SOME = ["reward.parse::both-valid-json-wins", "reward.parse::both-json-*", "reward.parse::neither-file"]
GENERATED_WRONG = "tests.wrong_candidates:pass_at_1"


class Recorder:
    """A handler that keeps every event, in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def handle(self, event: Event) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [type(event).__name__ for event in self.events]

    def lines(self) -> list[CaseLine | GeneratedLine | CandidateLine]:
        return [event.line for event in self.events
                if isinstance(event, CaseFinished | FindingFound | SurfaceFinished | CandidateFailed)]


def _certified(candidate: str, report: Path, **options) -> tuple[certification.Run, Recorder]:
    recorder = Recorder()
    run = certification.certify(Options(candidate=parse(candidate), oracle="recorded", **options), report,
                                handlers=[recorder])
    return run, recorder


def _totals(footer: Footer) -> dict:
    return footer.model_dump(exclude={"finished_at"})


def _same(line: CaseLine) -> dict:
    """A line as two runs of the same input agree on it: all but how long it took."""
    return line.model_dump(mode="json", exclude={"seconds"})


def test_a_certification_is_one_sequence_of_events(tmp_path):
    report = tmp_path / "r.jsonl"
    run, recorder = _certified(WRONG, report, case_globs=SOME)
    cases = len(run.records)
    assert cases >= 3
    assert recorder.kinds() == ["RunStarted", *["CaseFinished"] * cases, "ConnectionCounts", "RunFinished"]
    started = recorder.events[0]
    assert isinstance(started, RunStarted) and started.outline.cases == {"reward.parse": cases}
    assert started.header.candidate.spec == WRONG and started.kept == ()
    # What was emitted is what certify returns, and what the report on disk holds, in the same order.
    emitted = [line for line in recorder.lines() if isinstance(line, CaseLine)]
    assert emitted == run.records == read(report).records
    assert {line.outcome for line in emitted} == {Outcome.PASS, Outcome.FAIL}  # the wrong candidate is caught
    finished = recorder.events[-1]
    assert isinstance(finished, RunFinished) and finished.footer == run.footer == read(report).footer


def test_the_footer_is_the_tally_of_the_events(tmp_path):
    report = tmp_path / "r.jsonl"
    expectations = tmp_path / "expected.yaml"
    run, _ = _certified(WRONG, report, case_globs=SOME)
    failing = next(line for line in run.records if line.outcome is Outcome.FAIL)
    classes = sorted({m.cls.value for m in failing.mismatches})
    expectations.write_text(
        f"divergences:\n  - id: {failing.id}\n    classes: {classes}\n    reason: known\n"
        "  - id: reward.parse::both-json-no-such-case\n    reason: stale\n", encoding="utf-8")
    run, recorder = _certified(WRONG, report, case_globs=SOME, expectations=expectations)
    assert recorder.kinds()[-3:] == ["ExpectationsChecked", "ConnectionCounts", "RunFinished"]
    checked = recorder.events[-3]
    assert isinstance(checked, ExpectationsChecked) and checked.stale == ("reward.parse::both-json-no-such-case",)
    # The tally, counted again from the events alone, makes the footer the run wrote.
    tally = Tally()
    from conformance.run.engine import counted

    for event in recorder.events:
        counted(tally, event)
    footer = read(report).footer
    assert footer is not None and _totals(tally.footer()) == _totals(footer) == _totals(run.footer)
    assert footer.outcomes[Outcome.XFAIL] == 1 and footer.stale_expectations == ["reward.parse::both-json-no-such-case"]
    # ... and from the lines: every total but what only the footer tells (stale entries, connection counts).
    from_lines = Tally.of(run.records).footer()
    assert (from_lines.total, from_lines.outcomes, from_lines.by_surface) == (footer.total, footer.outcomes,
                                                                            footer.by_surface)
    assert footer.total == len(run.records)


def test_a_candidate_that_never_starts_is_an_event_and_every_case_broken(tmp_path):
    run, recorder = _certified("exec:false", tmp_path / "r.jsonl", case_globs=SOME)
    kinds = recorder.kinds()
    assert kinds[:2] == ["RunStarted", "CandidateFailed"] and kinds[-1] == "RunFinished"
    assert {line.outcome for line in run.records} == {Outcome.BROKEN}
    assert len(run.footer.candidate_problems) == 1 and run.footer.candidate_problems[0].startswith("start: ")


def test_an_interrupted_run_ends_without_a_footer(tmp_path):
    report = tmp_path / "r.jsonl"

    class Interrupting(Recorder):
        def handle(self, event: Event) -> None:
            super().handle(event)
            if isinstance(event, CaseFinished) and len(self.lines()) == 2:
                raise KeyboardInterrupt

    interrupting = Interrupting()
    with pytest.raises(KeyboardInterrupt):
        certification.certify(Options(candidate=parse(WRONG), oracle="recorded", case_globs=SOME), report,
                              handlers=[interrupting])
    assert interrupting.kinds()[-1] == "RunFinished"
    finished = interrupting.events[-1]
    assert isinstance(finished, RunFinished) and finished.footer is None
    written = read(report)
    assert not written.finished and len(written.records) == 2


def test_the_pytest_plugin_makes_certifys_lines(pytester, tmp_path):
    root = pytester.path / "cases" / "reward.parse"
    root.mkdir(parents=True)
    (root / "precedence.yaml").write_bytes((REPO / "cases" / "reward.parse" / "precedence.yaml").read_bytes())
    run, _ = _certified(WRONG, tmp_path / "certify.jsonl", cases_root=pytester.path / "cases")
    path = pytester.path / "pytest.jsonl"
    pytester.runpytest("cases", "--conformance-candidate", WRONG, "--conformance-oracle", "recorded",
                       "--conformance-report", str(path))
    written = read(path)
    assert written.footer is not None
    assert sorted(map(_same, written.records), key=lambda d: d["id"]) == sorted(map(_same, run.records),
                                                                                key=lambda d: d["id"])
    assert _totals(written.footer) == _totals(run.footer)


@pytest.fixture
def reference_oracle():
    """The reference, standing in for harbor: generated inputs need a live oracle, and these need no harbor."""
    with Oracle(connect(parse("reference"))) as oracle:
        yield oracle


def test_a_generator_is_events_and_certify_and_a_campaign_task_make_the_same_lines(tmp_path, reference_oracle,
                                                                                   monkeypatch):
    surface, seed, budget = "pass_at_k", 3, 40
    options = Options(candidate=parse(GENERATED_WRONG), oracle="harbor==0.13.1", surfaces=[surface], no_cases=True,
                      profile="ci", seed=seed, max_examples=budget)
    recorder = Recorder()
    run = certification.execute(make_plan(options, tmp_path / "certify.jsonl"), oracle=reference_oracle,
                                handlers=[recorder])
    kinds = recorder.kinds()
    findings = kinds.count("FindingFound")
    assert findings >= 1 and len(run.records) == findings
    assert kinds[:2] == ["RunStarted", "GenerationStarted"]
    inputs = [e for e in recorder.events if isinstance(e, InputGenerated)]
    done = next(e.line for e in recorder.events if isinstance(e, SurfaceFinished))
    assert len(inputs) == done.inputs_run and done.divergences == [line.id for line in run.records]
    assert kinds[2 + len(inputs):] == [*["FindingFound"] * findings, "SurfaceFinished", "ConnectionCounts",
                                       "RunFinished"]
    started = next(e for e in recorder.events if isinstance(e, GenerationStarted))
    assert (started.surface, started.budget) == (surface, budget)

    # A campaign's task: the same generator on a worker, then merged into the campaign's report.
    plugin = tasks.CampaignPlugin(Connections(candidate=parse(GENERATED_WRONG), oracle=parse("harbor==0.13.1")))
    plugin.setup(None)
    monkeypatch.setattr(tasks, "get_worker", lambda: types.SimpleNamespace(plugins={"p": plugin}, address="here"))
    monkeypatch.setattr(tasks, "connect_oracle", lambda spec, cache=True: Oracle(connect(parse("reference"))))
    try:
        result = tasks.run_task(Task(surface, 0, seed, budget, "ci"), "p")
    finally:
        plugin.stop()
    assert list(map(_same, result.findings)) == list(map(_same, run.records))
    assert result.line == done

    plan = types.SimpleNamespace(  # what the campaign's report reads of its plan
        profile=generate.PROFILES["ci"], base_seed=seed, task_examples=budget, budget=1.0, scheduler=None,
        report=tmp_path / "campaign.jsonl", generators=(surface,),
        connections=Connections(candidate=parse(GENERATED_WRONG), oracle=parse("harbor==0.13.1")))
    with CampaignReport(plan, Party(spec="harbor==0.13.1"), Party(spec=GENERATED_WRONG)) as merged:
        assert merged.add(result.findings, result.line, result.cached_answers) == result.findings
        footer = merged.finish()
    written = read(plan.report)
    assert list(map(_same, written.records)) == list(map(_same, run.records))
    assert written.footer == footer
    assert (footer.findings, footer.total, footer.conforms) == (run.footer.findings, 0, False)


def test_an_engine_applies_the_expectations_once_and_emits_what_it_returns(tmp_path, corpus):
    from conformance.run.expectations import Expectations

    loaded = [c for c in corpus if c.id.startswith("reward.parse::both-json")]
    recorder = Recorder()
    with connect(parse(WRONG)) as candidate:
        plain = list(Engine(candidate, Oracle(None), Stream()).cases(loaded))
        failing = next(line for line in plain if line.outcome is Outcome.FAIL)
        listed = tmp_path / "expected.yaml"
        listed.write_text(f"divergences:\n  - id: {failing.id}\n    classes: "
                          f"{sorted({m.cls.value for m in failing.mismatches})}\n    reason: known\n", encoding="utf-8")
        expectations = Expectations.from_file(listed)
        lines = list(Engine(candidate, Oracle(None), Stream([recorder]), expectations=expectations).cases(loaded))
    assert lines == recorder.lines()
    expected = next(line for line in lines if line.id == failing.id)
    assert expected.outcome is Outcome.XFAIL and failing.outcome is Outcome.FAIL  # a new line; the first unchanged
    assert [line.model_copy(update={"seconds": 0}) for line in lines if line.id != failing.id] == [
        line.model_copy(update={"seconds": 0}) for line in plain if line.id != failing.id]
    assert not any(isinstance(e, ConnectionCounts) for e in recorder.events)  # the front end counts connections


def test_a_candidate_started_again_is_an_event_and_the_progress_says_so(tmp_path):
    """The chaos candidate crashes on its second request: the process is started again, and the run says so."""
    import io
    import json
    import sys

    from rich.console import Console

    from conformance.cli.progress import LineProgress
    from conformance.run.events import CandidateRestarted

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"runs": ["ok", "crash"]}))
    chaos = REPO / "tests" / "chaos_candidate.py"
    out = io.StringIO()
    recorder = Recorder()
    run = certification.certify(
        Options(candidate=parse(f"exec:{sys.executable} {chaos} {plan}"), oracle="recorded", case_globs=SOME),
        tmp_path / "r.jsonl", watcher=LineProgress(Console(file=out, width=200)), handlers=[recorder])
    restarted = [event for event in recorder.events if isinstance(event, CandidateRestarted)]
    assert restarted == [CandidateRestarted("reward.parse", 1)]
    kinds = recorder.kinds()
    # Said before the line of the input that first ran on the new process, after the crashed one's.
    crashed = next(i for i, e in enumerate(recorder.events)
                   if isinstance(e, CaseFinished) and e.line.outcome == "crash")
    assert kinds.index("CandidateRestarted") == crashed + 1 and kinds[crashed + 2] == "CaseFinished"
    assert "started again after it was lost on a reward.parse input (1 so far)" in out.getvalue()
    assert run.footer.outcomes.get("crash") == 1
