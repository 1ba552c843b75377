"""How much of harbor's own scoring code the oracle runs when it answers our inputs.

Each surface folder's ``coverage.py`` declares what is measured (:func:`targets`): the
harbor functions (or the part of one) behind each surface, and the branches
harbor's real data flow can never take, each with its reason. :func:`measure`
runs an instrumented oracle (``connect(..., coverage_data=...)``, coverage.py
in line and branch mode) and :func:`analyse` reads the data back.

Everything is located in the installed source, never by line number: a
target's lines come from ``ast`` (its body, first statement to last line;
the ``def``/``class`` line runs at import, not at call, so it is left out),
a partial target starts at the line holding an anchor text, and an
unreachable branch is the ``if``/``while`` on the line holding its anchor.
The ``ast`` pass runs in the oracle's Python 3.12: harbor's source uses
3.12-only syntax (multi-line f-string fields) that this interpreter may not parse.

Statements and branch arcs are coverage.py's own (its JSON report). It sees
branches of statements only: the two ways of a conditional expression
(``a if c else b``) or of a comprehension's ``if`` are not arcs and are not
measured here either.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.table import Table

from conformance import ORACLE_RELEASE
from conformance.core import surfaces
from conformance.core.loading import import_object
from conformance.errors import RunFailure
from conformance.oracle import environments as oracle_env


class CoverageError(RunFailure):
    """The coverage run or its analysis could not be done; the message says why."""


@dataclass(frozen=True)
class Never:
    """The ``if``/``while`` on the line holding ``anchor`` never evaluates to ``way``.

    An anchor that starts with spaces is the start of its line, indentation
    included: it tells apart two lines that differ only in how deep they are.
    """

    anchor: str
    way: bool
    reason: str


@dataclass(frozen=True)
class Target:
    file: str  # relative to site-packages
    name: str  # qualified name of a function or class in that file
    start_at: str | None = None  # measure only from the line holding this text to the end
    never: tuple[Never, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.name} from `{self.start_at}`" if self.start_at else self.name


@dataclass(frozen=True)
class NoTargets:
    """A surface with no harbor code to cover (its oracle is a transcription the oracle's interpreter runs), and why."""

    reason: str


def targets() -> dict[str, tuple[Target, ...]]:
    """Every surface's targets (its folder's ``coverage.py``), by surface; those with none are left out."""
    found: dict[str, tuple[Target, ...]] = {}
    for surface in surfaces.SURFACES.values():
        declared: tuple[Target, ...] | NoTargets = import_object(surface.coverage) if surface.coverage else ()
        if isinstance(declared, tuple) and declared:
            found[surface.name] = declared
    return found


# Run by the oracle's interpreter with absolute source paths as arguments; prints,
# per file, each def/class body's (first line, last line) by qualified name, and
# each if/while: its line -> [body first, body last, orelse first, orelse last].
_PROBE = r"""
import ast, json, sys
out = {}
for path in sys.argv[1:]:
    defs, tests = {}, {}
    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            inner = prefix
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = prefix + child.name + "."
                defs[inner[:-1]] = [child.body[0].lineno, child.end_lineno]
            elif isinstance(child, (ast.If, ast.While)):
                orelse = [child.orelse[0].lineno, child.orelse[-1].end_lineno] if child.orelse else [None, None]
                tests[child.lineno] = [child.body[0].lineno, child.body[-1].end_lineno, *orelse]
            walk(child, inner)
    with open(path, encoding="utf-8") as source:
        walk(ast.parse(source.read(), path), "")
    out[path] = {"defs": defs, "tests": tests}
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Unreachable:
    """A declared never-taken branch, resolved to the line of its test, its arcs and the lines only it leads to."""

    never: Never
    line: int
    arcs: frozenset[tuple[int, int]]
    lines: frozenset[int]


@dataclass(frozen=True)
class Span:
    """A target found in the installed source."""

    surface: str
    target: Target
    first: int
    last: int
    source: tuple[str, ...]  # the whole file, line n at index n - 1
    tests: dict[int, tuple[int, int, int | None, int | None]]

    def contains(self, line: int) -> bool:
        return self.first <= line <= self.last


def _python_json(env: oracle_env.OracleEnv, args: list[str], what: str, cwd: Path | None = None) -> Any:
    proc = subprocess.run([str(env.python), "-I", *args], capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise CoverageError(f"{what} failed:\n{proc.stderr.strip()[-3000:]}")
    return json.loads(proc.stdout) if proc.stdout.strip() else None


def _site(env: oracle_env.OracleEnv) -> Path:
    return env.package_dir("harbor").resolve().parent


def holds_anchor(line: str, anchor: str) -> bool:
    """Whether ``line`` holds ``anchor``: anywhere, or for an indented anchor, at its start."""
    return line.startswith(anchor) if anchor[:1].isspace() else anchor in line


def _line_holding(source: tuple[str, ...], first: int, last: int, anchor: str, where: str) -> int:
    found = [n for n in range(first, last + 1) if holds_anchor(source[n - 1], anchor)]
    if len(found) != 1:
        raise CoverageError(f"{where}: `{anchor}` is on {len(found)} lines of {first}-{last}, not exactly one")
    return found[0]


def resolve(harbor_version: str = ORACLE_RELEASE, *, log: Callable[[str], object] = lambda message: None) -> list[Span]:
    """Every surface's targets, located in that release's installed source."""
    env = oracle_env.ensure(harbor_version, coverage=True, log=log)
    site = _site(env)
    declared = targets()
    files = sorted({str(site / t.file) for listed in declared.values() for t in listed})
    probed = _python_json(env, ["-c", _PROBE, *files], "reading harbor's source with ast")
    # Each file once: its lines and its if/while table are shared by every target in it.
    sources = {f: tuple(Path(f).read_text(encoding="utf-8").splitlines()) for f in files}
    tests = {f: {int(line): tuple(v) for line, v in probed[f]["tests"].items()} for f in files}
    spans = []
    for surface, listed in declared.items():
        for target in listed:
            path = str(site / target.file)
            defs = probed[path]["defs"]
            if target.name not in defs:
                raise CoverageError(f"{target.file} of harbor {harbor_version} has no {target.name}")
            first, last = defs[target.name]
            if target.start_at:
                first = _line_holding(sources[path], first, last, target.start_at, f"{target.file} {target.name}")
            spans.append(Span(surface, target, first, last, sources[path], tests[path]))
    return spans


def _unreachable(span: Span, statements: set[int], arcs: set[tuple[int, int]]) -> list[Unreachable]:
    out = []
    for never in span.target.never:
        where = f"{span.target.file} {span.target.name}"
        line = _line_holding(span.source, span.first, span.last, never.anchor, where)
        if line not in span.tests:
            raise CoverageError(f"{where}: line {line} (`{never.anchor}`) is not an if/while")
        body_first, body_last, else_first, else_last = span.tests[line]
        # The test goes `True` into its body's first statement; any other arc from it is `False`.
        chosen = frozenset(a for a in arcs if a[0] == line and (a[1] == body_first) == never.way)
        if not chosen:
            raise CoverageError(f"{where}: coverage.py knows no {never.way} branch from line {line}")
        lo, hi = (body_first, body_last) if never.way else (else_first, else_last)
        # Both None for a test without an else.
        only_there = frozenset(n for n in statements if lo is not None and hi is not None and lo <= n <= hi)
        out.append(Unreachable(never, line, chosen, only_there))
    return out


def _arc(arc: tuple[int, int]) -> str:
    return f"{arc[0]}->{arc[1] if arc[1] > 0 else 'exit'}"


@dataclass
class TargetCoverage:
    surface: str
    file: str
    name: str
    first: int
    last: int
    statements: int
    executed: int
    branches: int
    taken: int
    missing_lines: list[int]  # reachable statements never run
    missing_branches: list[tuple[int, int]]  # reachable arcs never taken
    unreachable: list[Unreachable]
    refuted: list[str] = field(default_factory=list)  # "unreachable" arcs or lines that did run
    imported: bool = True  # False: the oracle never imported the file, so nothing of it ran

    @property
    def complete(self) -> bool:
        return self.imported and not self.missing_lines and not self.missing_branches

    def to_json(self) -> dict[str, Any]:
        return {
            "surface": self.surface,
            "file": self.file,
            "target": self.name,
            "lines": [self.first, self.last],
            "statements": {"covered": self.executed, "total": self.statements},
            "branches": {"covered": self.taken, "total": self.branches},
            "complete": self.complete,
            "imported": self.imported,
            "missing_lines": self.missing_lines,
            "missing_branches": [_arc(a) for a in self.missing_branches],
            "unreachable": [
                {"line": u.line, "anchor": u.never.anchor, "never": u.never.way, "reason": u.never.reason,
                 "branches": sorted(_arc(a) for a in u.arcs), "lines": sorted(u.lines)}
                for u in self.unreachable
            ],
            "refuted": self.refuted,
        }


def _target_coverage(span: Span, measured: dict[str, Any]) -> TargetCoverage:
    executed = {n for n in measured["executed_lines"] if span.contains(n)}
    statements = executed | {n for n in measured["missing_lines"] if span.contains(n)}
    taken = {tuple(a) for a in measured["executed_branches"] if span.contains(a[0])}
    arcs = taken | {tuple(a) for a in measured["missing_branches"] if span.contains(a[0])}
    unreachable = _unreachable(span, statements, arcs)
    never_arcs = set().union(*(u.arcs for u in unreachable))
    never_lines = set().union(*(u.lines for u in unreachable))
    # Reported, not hidden: a declared-unreachable branch that ran proves the declaration wrong.
    refuted = sorted(_arc(a) for a in never_arcs & taken) + [f"line {n}" for n in sorted(never_lines & executed)]
    return TargetCoverage(
        surface=span.surface, file=span.target.file, name=span.target.label, first=span.first, last=span.last,
        statements=len(statements), executed=len(executed), branches=len(arcs), taken=len(taken),
        missing_lines=sorted(statements - executed - never_lines),
        missing_branches=sorted(arcs - taken - never_arcs),
        unreachable=unreachable, refuted=refuted,
    )


@dataclass
class CoverageResult:
    harbor_version: str
    coverage_version: str
    targets: list[TargetCoverage]
    lost_processes: int = 0  # oracle processes that ended abnormally: their data is missing

    @property
    def complete(self) -> bool:
        """Every reachable line and branch of every target ran."""
        return all(t.complete for t in self.targets)

    def to_json(self) -> dict[str, Any]:
        return {
            "harbor": self.harbor_version,
            "coverage.py": self.coverage_version,
            "complete": self.complete,
            "lost_processes": self.lost_processes,
            "targets": [t.to_json() for t in self.targets],
        }


def analyse(data_file: Path, *, harbor_version: str = ORACLE_RELEASE, lost_processes: int = 0,
            log: Callable[[str], object] = lambda message: None) -> CoverageResult:
    """Read a coverage data file written by an instrumented oracle."""
    env = oracle_env.ensure(harbor_version, coverage=True, log=log)
    spans = resolve(harbor_version, log=log)
    with tempfile.TemporaryDirectory(prefix="conformance-coverage-") as tmp:
        report = Path(tmp) / "coverage.json"
        # Run from site-packages so the report names files as the targets do ("harbor/...").
        _python_json(env, ["-m", "coverage", "json", "-q", f"--data-file={Path(data_file).resolve()}",
                           "-o", str(report)], "coverage json", cwd=_site(env))
        data = json.loads(report.read_text())
    targets = []
    for span in spans:
        measured = data["files"].get(span.target.file)
        if measured is None:  # never imported (harbor imports some modules lazily): nothing of it ran
            targets.append(TargetCoverage(
                surface=span.surface, file=span.target.file, name=span.target.label, first=span.first,
                last=span.last, statements=0, executed=0, branches=0, taken=0, missing_lines=[],
                missing_branches=[], unreachable=[], imported=False))
        else:
            targets.append(_target_coverage(span, measured))
    return CoverageResult(harbor_version, data["meta"]["version"], targets, lost_processes)


def table(result: CoverageResult, title: str) -> Table:
    """A rich Table: one row per target; the unreachable branches' reasons are in :func:`unreachable_notes`."""
    out = Table(title=title, caption=(
        f"harbor {result.harbor_version}, coverage.py {result.coverage_version}: "
        + ("every reachable line and branch covered" if result.complete else "reachable code left uncovered")
        + (f"; {result.lost_processes} oracle process(es) lost their data" if result.lost_processes else "")
    ))
    for column in ("surface", "target", "lines", "statements", "branches", "unreachable", "missing"):
        out.add_column(column, justify="right" if column in ("statements", "branches") else "left",
                       no_wrap=column in ("target", "lines"))
    for t in result.targets:
        missing = [f"line {n}" for n in t.missing_lines] + [_arc(a) for a in t.missing_branches]
        never = [_arc(a) for u in t.unreachable for a in sorted(u.arcs)]
        never += [f"[red]REFUTED, ran: {r}[/red]" for r in t.refuted]
        out.add_row(
            t.surface, f"{Path(t.file).name}:{t.name}", f"{t.first}-{t.last}",
            f"{t.executed}/{t.statements}", f"{t.taken}/{t.branches}",
            ", ".join(never),
            "[green]none[/green]" if t.complete else "[red]" + (", ".join(missing) or "never imported") + "[/red]",
        )
    return out


def unreachable_notes(result: CoverageResult) -> list[str]:
    """One line per declared-unreachable branch: where, and why harbor's data flow never takes it."""
    return [f"{Path(t.file).name}:{t.name} {', '.join(_arc(a) for a in sorted(u.arcs))}: {u.never.reason}"
            for t in result.targets for u in t.unreachable]
