"""Going on from an interrupted run's report (``certify --resume``).

A killed run leaves a report whose every line but perhaps the last is whole.
Resuming keeps what that run finished and runs the rest:

- a case line counts as finished, unless its outcome is ``broken`` (not run);
- a surface's generated inputs count as finished when its ``generated`` line
  is there (then its divergence lines are kept too), unless that line says the
  generator did not run; a generator cut off midway runs again from its seed,
  so what it finds is what an uninterrupted run would have found;
- ``candidate`` lines (a failed start or stop) are not kept: this run starts
  and stops the candidate afresh.

The run must be the same one: candidate, oracle, NaN policy, comparator
version, expectation file and generation settings are checked against the report's header. A
finished case that this run would not run (its id is no longer in the
corpus, or this run does not select it) is dropped, with a warning naming
how many and a few ids: the report is the one an uninterrupted run of this
command would write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.core.compare import COMPARATOR_VERSION
from conformance.core.outcomes import Outcome
from conformance.errors import UsageError
from conformance.report.model import CaseLine, GeneratedLine, Header, ResumedRun
from conformance.report.reader import Report, read


@dataclass
class Resumed:
    kept: list[CaseLine | GeneratedLine] = field(default_factory=list)  # the lines to keep, in their order
    cases: set[str] = field(default_factory=set)  # ids of finished cases
    generated: set[str] = field(default_factory=set)  # surfaces whose generated inputs are finished
    seed: int | None = None  # the generators' seed of the interrupted run
    history: list[ResumedRun] = field(default_factory=list)  # the runs this one goes on from


def resumable(path: Path, options: Any, profile: Any, policy_name: str, log: Callable[[str], None]) -> Resumed:
    """What to keep from the report at ``path``; UsageError when it is not the same run."""
    if not path.exists():
        log(f"no report at {path} to resume from: starting afresh")
        return Resumed()
    old = read(path)
    head = old.header
    if head is None:
        log(f"{path} has no header (the run was killed before its first line): starting afresh")
        return Resumed()
    _check_same_run(path, head, options, profile, policy_name)
    done_surfaces = {g.surface for g in old.generated if not (g.error or "").startswith("not run")}
    kept = [line for line in _lines_in_order(old)
            if (isinstance(line, GeneratedLine) and line.surface in done_surfaces)
            or (isinstance(line, CaseLine) and not line.generated and line.outcome is not Outcome.BROKEN)
            or (isinstance(line, CaseLine) and line.generated and line.surface in done_surfaces)]
    cases = {line.id for line in kept if isinstance(line, CaseLine) and not line.generated}
    log(f"resuming {path}: {len(cases)} finished case(s) and {len(done_surfaces)} finished generator(s) kept"
        + (" (its last line was cut short and is dropped)" if old.truncated else ""))
    history = [*(head.resumed or []), ResumedRun(started_at=head.started_at, kept=len(kept))]
    generation = head.generation
    seed = None if generation is None else (generation.base_seed if generation.base_seed is not None
                                            else generation.seed)
    return Resumed(kept, cases, done_surfaces, seed, history)


def within(resumed: Resumed, path: Path, corpus: set[str], selected: set[str],
           log: Callable[[str], None]) -> Resumed:
    """``resumed`` less the finished cases this run would not run: ids the corpus no longer has, and ids it
    has that this run does not select; each kind said in a warning line."""
    gone = sorted(i for i in resumed.cases if i not in corpus)
    unselected = sorted(i for i in resumed.cases if i in corpus and i not in selected)
    for ids, why in ((gone, "no longer in the corpus"), (unselected, "not selected by this run")):
        if ids:
            log(f"warning: {len(ids)} finished case(s) in {path} {why}, dropped: " + ", ".join(ids[:5])
                + (" ..." if len(ids) > 5 else ""))
    if not gone and not unselected:
        return resumed
    dropped = set(gone) | set(unselected)
    kept = [line for line in resumed.kept
            if not (isinstance(line, CaseLine) and not line.generated and line.id in dropped)]
    history = resumed.history[:-1] + [resumed.history[-1].model_copy(update={"kept": len(kept)})]
    return Resumed(kept, resumed.cases - dropped, resumed.generated, resumed.seed, history)


def _lines_in_order(old: Report) -> list[CaseLine | GeneratedLine]:
    """Case and generated lines as the report had them: each generator's findings come before its line."""
    findings: dict[str, list[CaseLine]] = {}
    lines: list[CaseLine | GeneratedLine] = []
    for record in old.records:
        if record.generated:
            findings.setdefault(record.surface, []).append(record)
        else:
            lines.append(record)
    for line in old.generated:
        lines += [*findings.pop(line.surface, []), line]
    return lines


def _shard_of(head: Header) -> str | None:
    return f"{head.shard.index}/{head.shard.count}" if head.shard else None


def _check_same_run(path: Path, head: Header, options: Any, profile: Any, policy_name: str) -> None:
    expectations = str(options.expectations) if options.expectations else None
    differences = [
        f"{name}: {theirs!r} in the report, {ours!r} now"
        for name, theirs, ours in (
            ("candidate", head.candidate.spec, str(options.candidate)),
            ("oracle", head.oracle.spec, str(options.oracle) if options.oracle is not None else "recorded"),
            ("NaN policy", head.nan_policy, policy_name),
            ("comparator", head.comparator, COMPARATOR_VERSION),  # its lines' classes are that version's
            ("expectation file", head.expectations, expectations),
            ("shard", _shard_of(head), str(options.shard) if options.shard else None),
        )
        if theirs != ours
    ]
    generation = head.generation
    if generation is not None and not options.no_generate:
        budget = options.max_examples if options.max_examples is not None else profile.max_examples
        base_seed = generation.base_seed if generation.base_seed is not None else generation.seed
        for name, theirs, ours in (("profile", generation.profile, profile.name),
                                   ("seed", base_seed, options.seed),
                                   ("max examples", generation.max_examples,
                                    options.shard.budget(budget) if options.shard else budget)):
            if ours is not None and theirs != ours:
                differences.append(f"generation {name}: {theirs!r} in the report, {ours!r} now")
    if differences:
        raise UsageError(f"{path} is the report of another run, so it cannot be resumed ("
                         + "; ".join(differences) + "); drop --resume to start afresh")
