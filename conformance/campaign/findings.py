"""A campaign's one report, merged from its tasks as they end.

The header is written first; each task's findings are merged the way
``combine`` merges shards (:class:`conformance.run.shards.MergedGenerators`:
one input found by two tasks is one finding), and each new one is written at
once, flushed. At every moment, an interrupted campaign included, the report
on disk reads as an unfinished run holding every finding so far; the
generator lines (each surface's inputs summed, every task's seed listed) and
the footer come when the campaign ends.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import TracebackType
from typing import Self

from conformance.campaign.plan import Plan, Task
from conformance.corpus import cases as case_corpus
from conformance.report.model import CampaignInfo, CaseLine, Footer, GeneratedLine, Party
from conformance.report.writer import Tally, new_header
from conformance.run import generate as generation
from conformance.run.engine import ReportFile, Stream
from conformance.run.events import ConnectionCounts, FindingFound, Outline, RunStarted, SurfaceFinished
from conformance.run.plan import policy_name
from conformance.run.shards import MergedGenerators


class CampaignReport:
    """A front end's handler of the engine's events: what each task brings, replayed as events into the report
    file (and the tally) of the campaign."""

    def __init__(self, plan: Plan, oracle: Party, candidate: Party, workers: int | None = None) -> None:
        # The header's generation: the profile, the base seed and one task's examples.
        described = generation.describe(plan.profile, plan.base_seed, plan.task_examples).model_copy(
            update={"base_seed": plan.base_seed})
        self.path: Path = plan.report
        campaign = CampaignInfo(budget_seconds=plan.budget, task_examples=plan.task_examples,
                                cluster=plan.scheduler or "local", workers=workers,
                                example_database=plan.connections.example_database)
        self.stream = Stream([ReportFile(plan.report)])
        self.stream.emit(RunStarted(new_header(
            oracle=oracle, candidate=candidate, nan_policy=policy_name(None), surfaces=list(plan.generators),
            cases_root=str(case_corpus.default_root()), generation=described, campaign=campaign), Outline(
            cases=Counter(), generators=tuple(plan.generators),
            budgets=dict.fromkeys(plan.generators, plan.task_examples), profile=plan.profile.name)))
        self.merged = MergedGenerators()
        self.tasks = 0

    def add(self, findings: list[CaseLine], line: GeneratedLine, cached_answers: int = 0) -> list[CaseLine]:
        """One task's findings and generator line (and the oracle answers it took from the cache); the findings
        not seen before, each written as it is kept."""
        self.tasks += 1
        new = [record for record in findings if self.merged.finding(record)]
        for record in new:
            self.stream.emit(FindingFound(record))
        self.merged.generator(line)
        self.stream.emit(ConnectionCounts(cached_answers=cached_answers))
        return new

    def fail(self, task: Task, error: str) -> None:
        """A task that could not run: its surface's generator line carries the error."""
        self.merged.generator(GeneratedLine(surface=task.surface, profile=task.profile, seed=task.seed,
                                            max_examples=0, inputs_run=0, error=error))

    @property
    def findings(self) -> list[CaseLine]:
        return list(self.merged.findings.values())

    @property
    def tally(self) -> Tally:
        return self.stream.tally

    def finish(self) -> Footer:
        """The campaign ended: each surface's generator line, then the footer."""
        for line in self.merged.lines():
            self.stream.emit(SurfaceFinished(line))
        footer = self.stream.finish(True)
        assert footer is not None
        return footer

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stream.finish(False)  # cut short: the report holds every finding so far, without a footer
