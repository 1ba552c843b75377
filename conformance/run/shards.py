"""Splitting a run over machines (``certify --shard I/N``) and merging the parts (``conformance combine``).

Shard I of N runs the cases whose id hashes to it (stable as the corpus
grows: adding a case moves no other) and every generator, from a seed
derived from the run's seed and I/N, with 1/N of the budget; so the N
shards together draw N different streams of inputs, as many as one run
would. Each shard's report header names its shard and the case ids it was
given, so ``combine`` can tell a missing case from one never selected.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from typing import Any

from conformance.report.model import Report, Tally, _now

_SPEC = re.compile(r"([0-9]+)/([0-9]+)")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = _SPEC.fullmatch(text.strip())
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise ValueError(f"--shard takes I/N with 1 <= I <= N (e.g. 2/4), got {text!r}")
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


class CombineError(ValueError):
    """The shard reports do not make one run; the message names what is wrong."""


# Header fields every shard of one run shares.
_SAME = (("candidate", "spec"), ("oracle", "spec"), ("nan_policy",), ("expectations",), ("cases_root",))


def combine(parts: list[tuple[str, Report]]) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """One run's header, lines and footer from its shards' reports (name, report); CombineError if they are not."""
    if not parts:
        raise CombineError("no report to combine")
    problems: list[str] = []
    shards: dict[int, str] = {}
    count = None
    for name, report in parts:
        if report.header is None or report.footer is None:
            problems.append(f"{name}: the run did not finish (resume it with certify --resume)")
            continue
        shard = report.header.get("shard")
        if not shard:
            problems.append(f"{name}: not a shard's report (no `shard` in its header)")
            continue
        count = count or shard["count"]
        if shard["count"] != count:
            problems.append(f"{name}: shard {shard['index']}/{shard['count']}, the others are of {count}")
        if shard["index"] in shards:
            problems.append(f"shard {shard['index']}/{count} given twice: {shards[shard['index']]} and {name}")
        shards[shard["index"]] = name
    if problems:
        raise CombineError("; ".join(problems))
    first_name, first = parts[0]
    for name, report in parts[1:]:
        for path in _SAME:
            a, b = _get(first.header, path), _get(report.header, path)
            if a != b:
                problems.append(f"{name}: {'.'.join(path)} is {b!r}, in {first_name} {a!r}")
        a, b = (first.header.get("generation") or {}), (report.header.get("generation") or {})
        if (a.get("profile"), a.get("base_seed")) != (b.get("profile"), b.get("base_seed")):
            problems.append(f"{name}: generated with profile {b.get('profile')} seed {b.get('base_seed')}, "
                            f"{first_name} with {a.get('profile')} seed {a.get('base_seed')}")
    missing_shards = sorted(set(range(1, count + 1)) - set(shards))
    if missing_shards:
        problems.append("missing shard(s): " + ", ".join(f"{i}/{count}" for i in missing_shards))
    seen: dict[str, str] = {}
    for name, report in parts:
        for record in report.records:
            if record.get("origin") == "generated":
                continue
            if record["id"] in seen:
                problems.append(f"case {record['id']} is in {seen[record['id']]} and in {name}")
            seen[record["id"]] = name
        missing = [i for i in report.header["shard"]["cases"] if i not in seen or seen[i] != name]
        if missing:
            problems.append(f"{name}: no record of {len(missing)} case(s) it was given: " + ", ".join(missing[:20])
                            + (" ..." if len(missing) > 20 else ""))
    if problems:
        raise CombineError("; ".join(problems))
    return _merged(parts, count)


def _get(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        data = (data or {}).get(key)
    return data


def _merged(parts: list[tuple[str, Report]], count: int) -> tuple[dict[str, Any], list[dict[str, Any]], dict]:
    tally = Tally()
    lines: list[dict[str, Any]] = []
    generated: dict[str, dict[str, Any]] = {}
    findings: dict[str, dict[str, Any]] = {}
    for _, report in sorted(parts, key=lambda part: part[1].header["shard"]["index"]):
        for record in report.records:
            if record.get("origin") == "generated":
                findings.setdefault(record["id"], record)  # one input found by two shards is one finding
            else:
                lines.append(record)
        for line in report.generated:
            merged = generated.setdefault(line["surface"], {**line, "inputs_run": 0, "max_examples": 0,
                                                            "divergences": [], "seed": []})
            merged["inputs_run"] += line["inputs_run"]
            merged["max_examples"] += line["max_examples"]
            merged["seed"].append(line["seed"])
            merged["divergences"] += [i for i in line["divergences"] if i not in merged["divergences"]]
            if line.get("error"):
                merged["error"] = "; ".join(filter(None, [merged.get("error"), line["error"]]))
        for problem in report.candidate_problems:
            lines.append(problem)
            tally.candidate_problems.append(problem)
    for record in lines:
        if record.get("type") == "case":
            tally.add(record)
    for surface, line in generated.items():
        lines += [r for r in findings.values() if r["surface"] == surface] + [line]
        for record in findings.values():
            if record["surface"] == surface:
                tally.add(record)
        tally.add_generated(line)
    tally.stale_expectations = _stale(parts)
    first = parts[0][1].header
    header = {**first, "shard": None, "started_at": min(r.header["started_at"] for _, r in parts),
              "combined": [{"shard": f"{r.header['shard']['index']}/{count}", "report": name,
                            "generation": r.header.get("generation")} for name, r in parts]}
    if first.get("generation"):
        header["generation"] = {**first["generation"], "seed": first["generation"].get("base_seed"),
                                "max_examples": sum((r.header.get("generation") or {}).get("max_examples", 0)
                                                    for _, r in parts)}
    footer = {"type": "footer", "finished_at": _now(), **tally.to_json()}
    return header, lines, footer


def _stale(parts: list[tuple[str, Report]]) -> list[str]:
    """An expectation entry for a case is stale when the shard that ran the case says so; one for a
    generated input when no shard found it (each shard checks only itself)."""
    lists = [set((r.footer or {}).get("stale_expectations", [])) for _, r in parts]
    cases = {e for stale in lists for e in stale if not e.partition("::")[2].startswith("gen-")}
    generated = set.intersection(*[{e for e in stale if e.partition("::")[2].startswith("gen-")} for stale in lists])
    return sorted(cases | generated)
