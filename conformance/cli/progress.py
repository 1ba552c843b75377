"""A run's progress on stderr while it goes: a live display on a terminal, plain lines in a log.

Either way, each problem is printed the moment its record is written, so a
long run shows what to fix before it ends; the grouped list, the tables and
the verdict still come at the end, on stdout.
"""

from __future__ import annotations

import time
from collections import Counter
from enum import StrEnum

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from conformance.cli.console import console, shortened
from conformance.core.outcomes import Outcome
from conformance.report.model import CaseLine, GeneratedLine
from conformance.run.watch import Outline, Watcher

QUIET_OUTCOMES = frozenset({Outcome.PASS, Outcome.XFAIL, Outcome.SKIP})
HEARTBEAT_SECONDS = 15.0


class ProgressMode(StrEnum):
    AUTO = "auto"  # the live display on a terminal, lines otherwise
    LIVE = "live"
    LINES = "lines"
    NONE = "none"


def watcher_for(mode: ProgressMode, stream: Console = console) -> Watcher:
    if mode is ProgressMode.AUTO:
        mode = ProgressMode.LIVE if stream.is_terminal else ProgressMode.LINES
    if mode is ProgressMode.LIVE:
        return LiveProgress(stream)
    if mode is ProgressMode.LINES:
        return LineProgress(stream)
    return Watcher()


class _Problems(Watcher):
    """Prints each problem as its record is written; a broken candidate's remaining cases once, not each."""

    def __init__(self, stream: Console) -> None:
        self.stream = stream
        self.broken_seen = False

    def problem(self, record: CaseLine) -> None:
        if record.outcome in QUIET_OUTCOMES and not record.stale:
            return
        text = shortened(record.first_difference(), 200)
        if record.outcome is Outcome.BROKEN:
            if self.broken_seen:
                return
            self.broken_seen = True
            text += " (the remaining cases are recorded as broken)"
        named = f" ({record.protocol_error})" if record.protocol_error else ""
        label = "STALE" if record.conforms else record.outcome.upper()
        self.stream.print(f"[red]{escape(label)}[/red] {escape(record.id)}{escape(named)}: {escape(text)}",
                          highlight=False)


class LineProgress(_Problems):
    """Plain lines for a log: the plan, each problem, each surface when done, and a heartbeat when it is slow."""

    def __init__(self, stream: Console, heartbeat: float = HEARTBEAT_SECONDS) -> None:
        super().__init__(stream)
        self.heartbeat = heartbeat
        self.todo: Counter[str] = Counter()
        self.done: Counter[str] = Counter()
        self.outcomes: dict[str, Counter[str]] = {}
        self.total = 0
        self.last = time.monotonic()
        self.generated_inputs = 0

    def say(self, text: str) -> None:
        self.stream.print(text, highlight=False, markup=False)
        self.last = time.monotonic()

    def started(self, outline: Outline) -> None:
        self.todo = outline.cases
        parts = []
        if outline.cases:
            parts.append(f"{sum(outline.cases.values())} case(s) of {len(outline.cases)} surface(s)")
        if outline.generators:
            parts.append(f"generated inputs for {len(outline.generators)} surface(s) "
                         f"({outline.profile}, up to {_budgets(outline.budgets)} each)")
        self.say("running " + (", then ".join(parts) or "nothing"))

    def case(self, record: CaseLine) -> None:
        self.problem(record)
        if record.origin == "generated":
            return
        surface = record.surface
        self.done[surface] += 1
        self.total += 1
        self.outcomes.setdefault(surface, Counter())[record.outcome.value] += 1
        if self.done[surface] == self.todo.get(surface):
            counts = ", ".join(f"{n} {name}" for name, n in sorted(self.outcomes[surface].items()))
            self.say(f"{surface}: {self.done[surface]} case(s) done ({counts})")
        elif time.monotonic() - self.last > self.heartbeat:
            self.say(f"... {self.total}/{sum(self.todo.values())} cases")

    def generating(self, surface: str, budget: int) -> None:
        self.generated_inputs = 0
        self.say(f"generating {surface} inputs (up to {budget})")

    def generated_input(self, surface: str) -> None:
        self.generated_inputs += 1
        if time.monotonic() - self.last > self.heartbeat:
            self.say(f"... {surface}: {self.generated_inputs} generated input(s)")

    def restarted(self, surface: str, restarts: int) -> None:
        self.say(f"the candidate was started again after it was lost on a {surface} input ({restarts} so far)")

    def generated(self, line: GeneratedLine) -> None:
        error = f", generator error: {shortened(line.error, 200)}" if line.error else ""
        if line.skipped:
            error += f", {line.skipped} skipped: {shortened(line.skip_reason or '', 200)}"
        self.say(f"{line.surface}: {line.inputs_run} generated input(s), {len(line.divergences)} divergence(s)"
                 f"{error}")


class LiveProgress(_Problems):
    """rich's live display: one bar for the cases, one per generator; problems scroll above it."""

    def __init__(self, stream: Console) -> None:
        self.display = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[problems]}"), TimeElapsedColumn(),
                                console=stream, transient=True)
        super().__init__(self.display.console)
        self.cases: TaskID | None = None
        self.generator: TaskID | None = None
        self.problems = 0

    def started(self, outline: Outline) -> None:
        self.display.start()
        if outline.cases:
            self.cases = self.display.add_task("cases", total=sum(outline.cases.values()), problems="")

    def case(self, record: CaseLine) -> None:
        self.problem(record)
        if record.outcome not in QUIET_OUTCOMES:
            self.problems += 1
        # A case moves the cases bar; a generated finding only the generator's problem count (its inputs move it).
        generated = record.origin == "generated"
        task = self.generator if generated else self.cases
        if task is not None:
            self.display.update(task, advance=0 if generated else 1,
                                problems=f"[red]{self.problems} problem(s)[/red]" if self.problems else "")

    def generating(self, surface: str, budget: int) -> None:
        self.generator = self.display.add_task(f"{surface} generated", total=budget, problems="")

    def generated_input(self, surface: str) -> None:
        if self.generator is not None:
            self.display.advance(self.generator)

    def generated(self, line: GeneratedLine) -> None:
        if self.generator is not None:
            self.display.update(self.generator, total=line.inputs_run, completed=line.inputs_run)

    def finished(self) -> None:
        self.display.stop()


def _budgets(budgets: dict[str, int]) -> str:
    """``250``, or ``250, reward.parse 1000`` where surfaces differ from the most common budget."""
    counts = list(budgets.values())
    common = max(set(counts), key=counts.count)
    return ", ".join([str(common), *(f"{name} {n}" for name, n in sorted(budgets.items()) if n != common)])
