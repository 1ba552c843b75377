"""Splitting a run over machines (``certify --shard I/N``) and merging the parts (``conformance combine``).

Shard I of N runs the cases whose id hashes to it (stable as the corpus
grows: adding a case moves no other) and every generator, from a seed
derived from the run's seed and I/N, with 1/N of the budget; so the N
shards together draw N different streams of inputs, as many as one run
would. Each shard's report header names its shard and the case ids it was
given, so ``combine`` can tell a missing case from one never selected.

Merging generator runs (:class:`MergedGenerators`) is shared with
campaigns, which merge their tasks the same way as each one ends.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field

from conformance.errors import UsageError
from conformance.report.model import (
    CandidateLine,
    CaseLine,
    CombinedPart,
    Footer,
    GeneratedLine,
    Header,
    ShardInfo,
)
from conformance.report.reader import Report
from conformance.report.writer import Tally
from conformance.run.generate import feature_gate

_SPEC = re.compile(r"([0-9]+)/([0-9]+)")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = _SPEC.fullmatch(text.strip())
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise UsageError(f"--shard takes I/N with 1 <= I <= N (e.g. 2/4), got {text!r}")
        return cls(int(match[1]), int(match[2]))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def takes(self, case_id: str) -> bool:
        digest = hashlib.sha256(case_id.encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def seed(self, seed: int) -> int:
        """This shard's generator seed: one stream of inputs per shard, all from the run's seed."""
        return int.from_bytes(hashlib.sha256(f"{seed}:{self}".encode()).digest()[:4], "big")

    def budget(self, max_examples: int) -> int:
        return math.ceil(max_examples / self.count)


class CombineError(UsageError):
    """The shard reports do not make one run; the message names what is wrong."""

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(f"cannot combine: {message}", details)


Merged = tuple[Header, list[CaseLine | GeneratedLine | CandidateLine], Footer]


def _same(first: Header, other: Header) -> list[tuple[str, object, object]]:
    """The header fields every shard of one run shares: (name, first's, other's) where they differ."""
    pairs = (("candidate.spec", first.candidate.spec, other.candidate.spec),
             ("oracle.spec", first.oracle.spec, other.oracle.spec),
             ("nan_policy", first.nan_policy, other.nan_policy),
             ("comparator", first.comparator, other.comparator),
             ("expectations", first.expectations, other.expectations),
             ("cases_root", first.cases_root, other.cases_root))
    return [(name, a, b) for name, a, b in pairs if a != b]


def _base(head: Header) -> tuple[str | None, int | None]:
    g = head.generation
    return (g.profile, g.base_seed) if g is not None else (None, None)


def combine(parts: list[tuple[str, Report]]) -> Merged:
    """One run's header, lines and footer from its shards' reports (name, report); CombineError if they are not."""
    if not parts:
        raise CombineError("no report to combine")
    problems: list[str] = []
    shards: dict[int, str] = {}
    heads: dict[str, tuple[Header, ShardInfo]] = {}
    count = 0
    for name, report in parts:
        if report.header is None or report.footer is None:
            problems.append(f"{name}: the run did not finish (resume it with certify --resume)")
            continue
        shard = report.header.shard
        if shard is None:
            problems.append(f"{name}: not a shard's report (no `shard` in its header)")
            continue
        heads[name] = (report.header, shard)
        count = count or shard.count
        if shard.count != count:
            problems.append(f"{name}: shard {shard.index}/{shard.count}, the others are of {count}")
        if shard.index in shards:
            problems.append(f"shard {shard.index}/{count} given twice: {shards[shard.index]} and {name}")
        shards[shard.index] = name
    if problems:
        raise CombineError("; ".join(problems))
    first_name = parts[0][0]
    first = heads[first_name][0]
    for name, _ in parts[1:]:
        other = heads[name][0]
        problems += [f"{name}: {field} is {b!r}, in {first_name} {a!r}" for field, a, b in _same(first, other)]
        if _base(first) != _base(other):
            problems.append(f"{name}: generated with profile {_base(other)[0]} seed {_base(other)[1]}, "
                            f"{first_name} with {_base(first)[0]} seed {_base(first)[1]}")
    missing_shards = sorted(set(range(1, count + 1)) - set(shards))
    if missing_shards:
        problems.append("missing shard(s): " + ", ".join(f"{i}/{count}" for i in missing_shards))
    seen: dict[str, str] = {}
    for name, report in parts:
        for record in report.records:
            if record.generated:
                continue
            if record.id in seen:
                problems.append(f"case {record.id} is in {seen[record.id]} and in {name}")
            seen[record.id] = name
        missing = [i for i in heads[name][1].cases if i not in seen or seen[i] != name]
        if missing:
            problems.append(f"{name}: no record of {len(missing)} case(s) it was given: " + ", ".join(missing[:20])
                            + (" ..." if len(missing) > 20 else ""))
    if problems:
        raise CombineError("; ".join(problems))
    return _merged([(name, report, heads[name]) for name, report in parts], count)


@dataclass
class MergedGenerators:
    """Runs of the same surfaces' generators as one, the parts taken in any order and as they come (a shard's
    report, a campaign's task): each finding once (one input found by two runs is one finding), and each
    surface's generator line with the inputs, budgets and skips summed, every seed listed, every error kept."""

    findings: dict[str, CaseLine] = field(default_factory=dict)
    generated: dict[str, GeneratedLine] = field(default_factory=dict)
    seeds: dict[str, list[int]] = field(default_factory=dict)

    def finding(self, record: CaseLine) -> bool:
        """Keep a generated finding; False when one of its id is kept already."""
        if record.id in self.findings:
            return False
        self.findings[record.id] = record
        return True

    def generator(self, line: GeneratedLine) -> None:
        before = self.generated.get(line.surface)
        self.seeds.setdefault(line.surface, []).extend(line.seed if isinstance(line.seed, list) else [line.seed])
        if before is None:
            self.generated[line.surface] = line
            return
        budget = before.max_examples + line.max_examples
        self.generated[line.surface] = before.model_copy(update={
            "inputs_run": before.inputs_run + line.inputs_run,
            "max_examples": budget,
            "skipped": before.skipped + line.skipped,
            "rejected": before.rejected + line.rejected,
            "skip_reason": before.skip_reason or line.skip_reason,
            "divergences": [*before.divergences, *(i for i in line.divergences if i not in before.divergences)],
            "error": "; ".join(filter(None, [before.error, line.error])) or None,
            "drawn": before.drawn + line.drawn,
            "features": {name: before.features.get(name, 0) + line.features.get(name, 0)
                         for name in {**before.features, **line.features}},
            "feature_minimums": before.feature_minimums or line.feature_minimums,
            # The parts' budgets together: a whole profile's budget is judged by its profile's gate again.
            "feature_gate": feature_gate(line.profile, line.surface, budget,
                                         cut_short=bool(before.divergences or line.divergences)
                                         and before.drawn + line.drawn < budget),
        })

    def of(self, surface: str) -> list[CaseLine]:
        return [record for record in self.findings.values() if record.surface == surface]

    def lines(self) -> list[GeneratedLine]:
        """Each surface's merged generator line, listing every part's seed."""
        return [line.model_copy(update={"seed": list(self.seeds[surface])})
                for surface, line in self.generated.items()]


def _merged(parts: list[tuple[str, Report, tuple[Header, ShardInfo]]], count: int) -> Merged:
    tally = Tally()
    lines: list[CaseLine | GeneratedLine | CandidateLine] = []
    merged = MergedGenerators()
    for _, report, _head in sorted(parts, key=lambda part: part[2][1].index):
        for record in report.records:
            if record.generated:
                merged.finding(record)
            else:
                lines.append(record)
        for line in report.generated:
            merged.generator(line)
        for problem in report.candidate_problems:
            lines.append(problem)
            tally.add_candidate_problem(problem)
    for entry in lines:
        if isinstance(entry, CaseLine):
            tally.add(entry)
    for line in merged.lines():
        surface_findings = merged.of(line.surface)
        lines += [*surface_findings, line]
        for record in surface_findings:
            tally.add(record)
        tally.add_generated(line)
    tally.add_stale_expectations(_stale([report for _, report, _ in parts]))
    tally.add_expired_expectations(sorted({e for _, report, _ in parts if report.footer is not None
                                           for e in report.footer.expired_expectations}))
    tally.add_counts(cached_answers=sum(report.footer.cached_answers for _, report, _ in parts
                                        if report.footer is not None))
    first = parts[0][2][0]
    generation = first.generation
    if generation is not None:
        budget = sum(head.generation.max_examples for _, _, (head, _) in parts if head.generation is not None)
        generation = generation.model_copy(update={"seed": generation.base_seed if generation.base_seed is not None
                                                   else generation.seed, "max_examples": budget})
    header = first.model_copy(update={
        "shard": None, "started_at": min(head.started_at for _, _, (head, _) in parts), "generation": generation,
        "combined": [CombinedPart(shard=f"{shard.index}/{count}", report=name, generation=head.generation)
                     for name, _, (head, shard) in parts]})
    return header, lines, tally.footer()


def _stale(reports: list[Report]) -> list[str]:
    """An expectation entry for a case is stale when the shard that ran the case says so; one for a
    generated input when no shard found it (each shard checks only itself)."""
    lists = [set(r.footer.stale_expectations if r.footer else []) for r in reports]
    cases = {e for stale in lists for e in stale if not e.partition("::")[2].startswith("gen-")}
    generated = set.intersection(*[{e for e in stale if e.partition("::")[2].startswith("gen-")} for stale in lists])
    return sorted(cases | generated)
