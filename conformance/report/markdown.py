"""A report as Markdown: a summary fit for a CI step summary, and the upgrade gate's account of changes.

Both read only the JSONL report (and, for the gate, the corpus, to show a
case's input); nothing here runs an implementation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.core.compare import UlpBucket
from conformance.core.features import Gate
from conformance.core.outcomes import Outcome
from conformance.report.commands import repro
from conformance.report.model import CaseLine, describe, result_text, verdict, warning_names
from conformance.report.reader import Report, Summarised
from conformance.report.writer import Tally

Lookup = Callable[[str], tuple[str, Any] | None]  # a case's description and input, by id


def _cell(text: str, limit: int = 400) -> str:
    text = text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"
    return text.replace("|", "\\|").replace("\n", "⏎")


def _code(text: str, limit: int = 2000) -> str:
    text = text if len(text) <= limit else text[:limit] + f"\n… ({len(text)} characters)"
    fence = "```" if "```" not in text else "````"
    return f"{fence}\n{text}\n{fence}"


def _inline(text: str) -> str:
    """``text`` as a code span, whatever backticks it holds (a candidate's name is its own)."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def shown_outcomes(tally: Tally) -> list[Outcome]:
    """pass, and every other outcome some case has: the whole set would not fit a table."""
    return [n for n in Outcome if n is Outcome.PASS or tally.outcomes.get(n)]


def _outcome_table(tally: Tally) -> list[str]:
    shown = shown_outcomes(tally)
    lines = ["| surface | cases | " + " | ".join(shown) + " |", "|---|---:|" + "---:|" * len(shown)]
    for surface, counts in sorted(tally.by_surface.items()):
        lines.append(f"| `{surface}` | {sum(counts.values())} | " + " | ".join(str(counts.get(n, 0)) for n in shown)
                     + " |")
    lines.append(f"| **all** | {tally.total} | " + " | ".join(str(tally.outcomes.get(n, 0)) for n in shown) + " |")
    return lines


def _ulp_table(tally: Tally) -> list[str]:
    """Each surface's float mismatches by ULP distance, and the worst of them."""
    lines = ["| float mismatches | " + " | ".join(b.value for b in UlpBucket) + " | worst |",
             "|---|" + "---:|" * len(UlpBucket) + "---|"]
    for surface, distances in sorted(tally.distances.items()):
        summary = distances.summary()
        lines.append(f"| `{surface}` | " + " | ".join(str(n) for n in summary.buckets.values())
                     + f" | {_cell(summary.worst.text())} |")
    return lines


def _repro_cell(source: Path | None, record: CaseLine) -> str:
    """The ``repro`` command of a line that does not conform, as a table cell ("" without the report's path)."""
    if source is None or not record.reproducible:
        return ""
    text = repro(source, record.id)
    return f"`` {_cell(text, len(text))} ``"


def summary(report: Summarised, *, limit: int = 50, source: Path | None = None) -> str:
    """Verdict, per-surface outcomes, generated inputs, and the divergences (at most ``limit`` of each kind; an
    :class:`~conformance.report.reader.Overview` keeps that many); with the report's path (``source``), each
    divergence's repro command."""
    tally = report.tally()
    candidate = report.candidate
    finished = report.footer is not None
    warned = tally.warnings()
    conforms = tally.conforms and finished
    said = verdict(conforms, warned)
    mark = "❌" if not conforms else "⚠️" if warned else "✅"
    if conforms and warned:  # "conforms, with warnings: ..." reads on after the oracle
        said = f"conforms to {_inline(report.oracle_spec)}, with warnings: " + ", ".join(warning_names(warned))
    else:
        said = f"{said} to {_inline(report.oracle_spec)}"
    lines = [f"## {mark} {_inline(candidate.display_name)} {said}", ""]
    if not finished:
        lines += ["> The report has no footer: the run did not finish.", ""]
    head = report.header
    facts = [f"nan policy: {head.nan_policy if head is not None else '?'}"]
    if candidate.implementation is not None:  # the spec beside the name (a never-started one is named by it)
        facts.insert(0, f"candidate: {_inline(candidate.spec)}")
    if head is not None and head.campaign is not None:
        c, g = head.campaign, head.generation
        on = "a local cluster" if c.cluster == "local" else f"`{c.cluster}`"
        workers = f" of {c.workers} worker(s)" if c.workers is not None else ""
        facts.append(f"campaign: {c.budget_seconds:g}s on {on}{workers}, {c.task_examples} examples a task"
                     + (f", profile {g.profile}, base seed {g.seed}" if g is not None else ""))
    elif head is not None and head.generation is not None:
        g = head.generation
        facts.append(f"generated: profile {g.profile}, seed {g.seed}, {g.max_examples} per surface")
    if head is not None and head.expectations:
        facts.append(f"expectations: `{head.expectations}`")
    lines += [" · ".join(facts), ""]
    if warned:
        lines += ["### Warnings", "", "What the run checked is no evidence of conformance where these say (the "
                  "suite's docs/warnings.md lists them):", ""]
        lines += [f"- **{w.name}**" + (f" on `{w.surface}`" if w.surface else "") + f": {_cell(w.detail)}. "
                  f"{w.name.meaning[0].upper()}{w.name.meaning[1:]}; {w.name.hint}." for w in warned] + [""]
    for problem in tally.candidate_problems:
        lines += [f"> The candidate failed to {problem.stage}: {problem.outcome}"
                  + (f" ({problem.protocol_error})" if problem.protocol_error else "")
                  + f" — {problem.first_line()}", ""]
    if tally.protocol_errors:
        lines += ["Protocol errors: " + ", ".join(f"`{name}` {n}" for name, n in sorted(tally.protocol_errors.items())),
                  ""]
    if tally.total:
        lines += _outcome_table(tally) + [""]
    if tally.generated:
        lines += ["| generated | inputs run | divergences | expected |", "|---|---:|---:|---:|"]
        for surface, line in sorted(tally.generated.items()):
            expected = sum(1 for i in tally.expected_findings if i.startswith(surface + "::"))
            divergences = len(line.divergences) - expected
            error = " + generator error" if line.error else ""
            error += f" ({line.skipped} skipped)" if line.skipped else ""
            lines.append(f"| `{surface}` | {line.inputs_run} | {divergences}{error} | {expected} |")
        lines.append("")
    if tally.distances:
        lines += _ulp_table(tally) + [""]
    for short in tally.feature_shortfalls:
        lead = "**Feature shortfall** (the run fails)" if short.gate is Gate.FAIL else "Note: feature below its minimum"
        lines += [f"> {lead}: {short.describe()}", ""]
    found = report.problems()
    if found.failures:
        failing = [(surface, cls, record) for surface, groups in found.failures.items()
                   for cls, records in groups.items() for record in records]
        lines += [f"### {found.failing} failing case(s)", "",
                  "| surface | class | id | first difference | reproduce |", "|---|---|---|---|---|"]
        for surface, cls, record in failing[:limit]:
            lines.append(f"| `{surface}` | {cls} | `{record.id}` | {_cell(record.first_difference())} | "
                         f"{_repro_cell(source, record)} |")
        if found.failing > limit:
            lines.append(f"| … | | | {found.failing - min(limit, len(failing))} more in the report | |")
        lines.append("")
    if found.other_count:
        lines += [f"### {found.other_count} other problem(s)", "",
                  "| id | outcome | first difference | reproduce |", "|---|---|---|---|"]
        for record in found.others[:limit]:
            outcome = "stale recording" if record.conforms else str(record.outcome)
            lines.append(f"| `{record.id}` | {outcome} | {_cell(record.first_difference())} | "
                         f"{_repro_cell(source, record)} |")
        if found.other_count > limit:
            lines.append(f"| … | | {found.other_count - min(limit, len(found.others))} more in the report | |")
        lines.append("")
    if found.skips:
        lines += [f"### {found.skipped} skipped case(s)", "", "| surface | cases | reason |", "|---|---:|---|"]
        lines += [f"| `{surface}` | {count} | {_cell(reason)} |"
                  for (surface, reason), count in sorted(found.skips.items())]
        lines.append("")
    if tally.stale_expectations:
        lines += ["### Stale expectations", "", "Entries naming no case of the run:", ""]
        lines += [f"- `{i}`" for i in tally.stale_expectations] + [""]
    if tally.expired_expectations:
        lines += ["### Expired expectations", "",
                  "Entries past their `expires` date, their divergences counted as new:", ""]
        lines += [f"- `{i}`" for i in tally.expired_expectations] + [""]
    for error in tally.generator_errors:
        lines += [f"> generator error: {_cell(error)}", ""]
    return "\n".join(lines)


def changes(report: Report, *, baseline: str, release: str,
            lookup: Lookup = lambda case_id: None) -> str:
    """The upgrade gate's report: per surface, each behaviour that differs between two releases.

    ``lookup(case_id)`` gives a case's description and input (generated
    findings carry their own minimal input).
    """
    tally = report.tally()
    divergent = [r for r in report.records if r.signature is not None]
    unexpected = [r for r in divergent if r.outcome is not Outcome.XFAIL]
    finished = report.footer is not None
    passed = not unexpected and tally.conforms and finished
    lines = [f"# harbor {release} against harbor {baseline}", ""]
    if not divergent:
        lines.append(f"No scoring behaviour the suite checks changed: {tally.total} cases"
                     + (f" and {sum(g.inputs_run for g in tally.generated.values())} generated inputs"
                        if tally.generated else "") + " agree.")
    else:
        lines.append(f"{len(divergent)} behaviour(s) changed: {len(divergent) - len(unexpected)} listed in the "
                     f"expectation file, {len(unexpected)} not listed.")
    lines += ["", f"Gate: {'passed' if passed else 'FAILED'}.", ""]
    if not finished:
        lines += ["> The report has no footer: the run did not finish.", ""]
    if tally.stale_expectations:
        lines += ["Expectation entries naming no case of the run (stale): "
                  + ", ".join(f"`{i}`" for i in tally.stale_expectations), ""]
    if tally.expired_expectations:
        lines += ["Expectation entries past their `expires` date (their changes counted as not listed): "
                  + ", ".join(f"`{i}`" for i in tally.expired_expectations), ""]
    xpassed = [r for r in report.records if r.outcome is Outcome.XPASS]
    if xpassed:
        lines += ["Listed as changed but now agreeing (out-of-date entries): "
                  + ", ".join(f"`{r.id}`" for r in xpassed), ""]
    for error in tally.generator_errors:
        lines += [f"> generator error: {_cell(error)}", ""]
    by_surface: dict[str, list[CaseLine]] = {}
    for record in divergent:
        by_surface.setdefault(record.surface, []).append(record)
    for surface in sorted(by_surface):
        lines += [f"## `{surface}`", ""]
        for record in by_surface[surface]:
            lines += _change(record, baseline, release, lookup)
    return "\n".join(lines).rstrip() + "\n"


def input_of(record: CaseLine, lookup: Lookup) -> Any:
    """A report line's input: the line carries it (a generated finding, a case that did not pass), else the
    corpus has it."""
    if record.input is not None:
        return record.decoded_input
    found = lookup(record.id)
    return found[1] if found else None


def example(record: CaseLine, baseline: str, release: str, lookup: Lookup) -> list[str]:
    """Input, and each release's result, as Markdown blocks."""
    return ["Input:", "", _code(repr(input_of(record, lookup))), "",
            f"harbor {baseline}:", "", _code(result_text(record.oracle)), "",
            f"harbor {release}:", "", _code(result_text(record.candidate))]


def _change(record: CaseLine, baseline: str, release: str, lookup: Lookup) -> list[str]:
    found = lookup(record.id) if not record.generated else None
    description = found[0] if found else ("a generated input, shrunk to a minimal one" if record.generated else "")
    expected = record.expected_divergence
    if record.outcome is Outcome.XFAIL and expected is not None:
        status = "expected: " + expected.reason + (f" ([link]({expected.link}))" if expected.link else "")
    else:
        status = "**not in the expectation file**"
    lines = [f"### `{record.id}`", "", f"{description}".strip(), "", f"- {describe(record.signature)} — {status}"]
    for m in record.mismatches[:8]:
        lines.append(f"- {_cell(m.describe(f'`{baseline}`', f'`{release}`', bits=False), 500)}")
    if record.detail and record.outcome is not Outcome.XFAIL:
        lines.append(f"- detail: {_cell(record.detail.strip(), 300)}")
    return [*lines, "", *example(record, baseline, release, lookup), ""]
