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

from pathlib import Path
from types import TracebackType
from typing import Self

from conformance.campaign.plan import Plan, Task
from conformance.corpus import cases as case_corpus
from conformance.report.model import CampaignInfo, CaseLine, Footer, GeneratedLine, Party
from conformance.report.writer import ReportWriter, Tally, new_header
from conformance.run import generate as generation
from conformance.run.plan import policy_name
from conformance.run.shards import MergedGenerators


class CampaignReport:
    def __init__(self, plan: Plan, oracle: Party, candidate: Party, workers: int | None = None) -> None:
        # The header's generation: the profile, the base seed and one task's examples.
        described = generation.describe(plan.profile, plan.base_seed, plan.task_examples).model_copy(
            update={"base_seed": plan.base_seed})
        self.path: Path = plan.report
        campaign = CampaignInfo(budget_seconds=plan.budget, task_examples=plan.task_examples,
                                cluster=plan.scheduler or "local", workers=workers,
                                example_database=plan.connections.example_database)
        self.writer = ReportWriter(plan.report, new_header(
            oracle=oracle, candidate=candidate, nan_policy=policy_name(None), surfaces=list(plan.generators),
            cases_root=str(case_corpus.default_root()), generation=described, campaign=campaign))
        self.merged = MergedGenerators()
        self.tasks = 0

    def add(self, findings: list[CaseLine], line: GeneratedLine) -> list[CaseLine]:
        """One task's findings and generator line; the findings not seen before, each written as it is kept."""
        self.tasks += 1
        new = [record for record in findings if self.merged.finding(record)]
        for record in new:
            self.writer.record(record)
        self.merged.generator(line)
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
        return self.writer.tally

    def finish(self) -> Footer:
        """The campaign ended: each surface's generator line, then the footer."""
        for line in self.merged.lines():
            self.writer.generated(line)
        return self.writer.finish()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.writer.close()
