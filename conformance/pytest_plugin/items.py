"""The collection tree: a surface's folder, its case files and their cases, and its generated inputs.

    cases/reward.parse                              SurfaceFolder  (a folder named after a surface)
    cases/reward.parse/unicode.yaml                 CaseFile
    cases/reward.parse/unicode.yaml::txt-bom-only   CaseItem       (named by the slug of reward.parse::txt-bom-only)
    cases/reward.parse::generated                   GeneratedItem  (the surface's generator)

No name holds ``::``, so every node id reruns as it is printed. pytest takes
no ``::`` part after a folder: an argument ``FOLDER::generated`` is given to
pytest as the folder, which then yields its generated item alone, and the
case files and cases that other arguments name inside it
(:func:`generated_only`).
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from conformance.pytest_plugin.session import SUITE

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from conformance.corpus.cases import LoadedCase
    from conformance.report.model import CaseLine, GeneratedLine
    from conformance.run.events import Event

GENERATED = "generated"  # the name of a surface's generated item
# A folder asked for as FOLDER::generated -> what other arguments name inside it: (path, case name or None).
_GENERATED_ONLY = pytest.StashKey[dict[Path, frozenset[tuple[Path, str | None]]]]()


def generated_only(config: pytest.Config, surface_names: Iterable[str]
                   ) -> dict[Path, frozenset[tuple[Path, str | None]]]:
    """The folders asked for as ``FOLDER::generated``, each argument changed to the folder.

    Such a folder yields its generated item, and of its case files only those
    that other arguments name (``FILE`` or ``FILE::CASE``, as a failing run's
    node ids are copied) with the cases they name: the value. A folder that
    another argument asks for whole (itself, or a folder above it) yields
    everything and is left out.
    """
    here, names = config.invocation_params.dir, set(surface_names)
    asked: set[Path] = set()
    plain: list[tuple[Path, str | None]] = []
    for index, arg in enumerate(config.args):
        part, _, rest = arg.partition("::")
        path = Path(os.path.abspath(here / part))
        if rest == GENERATED and path.is_dir() and path.name in names:
            config.args[index] = part
            asked.add(path)
        else:
            plain.append((path, rest.partition("::")[0] or None))
    return {folder: frozenset((path, name) for path, name in plain if path.is_relative_to(folder))
            for folder in asked if not any(folder.is_relative_to(path) for path, _ in plain)}


def _selection(node: pytest.Collector) -> frozenset[tuple[Path, str | None]] | None:
    """What the arguments name inside the generated-only folder ``node`` is or is in; None: no such folder."""
    selections = node.config.stash[_GENERATED_ONLY]
    for parent in node.listchain():
        if isinstance(parent, SurfaceFolder) and parent.path in selections:
            return selections[parent.path]
    return None


# -- hooks: this module is registered as a plugin while the plugin is on -------------------


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_GENERATED_ONLY] = generated_only(config, config.stash[SUITE].surface_names)


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if path.name in parent.config.stash[SUITE].surface_names:
        return SurfaceFolder.from_parent(parent, path=path)
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaseFile | None:
    if file_path.suffix == ".yaml" and isinstance(parent, SurfaceFolder):
        return CaseFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    from conformance.pytest_plugin.reporting import attach

    report = yield
    if call.when == "call" and isinstance(item, _ConformanceItem):
        attach(report, item.lines)
    return report


# -- the tree ------------------------------------------------------------------------------


class SurfaceFolder(pytest.Directory):
    """A folder named after a surface: its case files (and subfolders), then the surface's generated item."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        suite = self.config.stash[SUITE]
        ihook = self.ihook
        # As pytest.Dir collects (it is final): entries sorted by name, ignored paths left out.
        selection = _selection(self)
        if not suite.settings.run.no_cases:
            for entry in sorted(os.scandir(self.path), key=lambda e: e.name):
                path = Path(entry.path)
                if selection is not None and not any(named.is_relative_to(path) for named, _ in selection):
                    continue  # FOLDER::generated, and no argument names this entry
                if entry.is_dir():
                    if (not self.session.isinitpath(path, with_parents=True)
                            and ihook.pytest_ignore_collect(collection_path=path, config=self.config)):
                        continue
                    folder = ihook.pytest_collect_directory(path=path, parent=self)
                    if folder is not None:
                        yield folder
                elif entry.is_file():
                    if (not self.session.isinitpath(path)
                            and ihook.pytest_ignore_collect(collection_path=path, config=self.config)):
                        continue
                    yield from ihook.pytest_collect_file(file_path=path, parent=self)
        if not suite.settings.run.no_generate and self.path.name in suite.generators:
            yield GeneratedItem.from_parent(self, name=GENERATED, surface=self.path.name)


class CaseFile(pytest.File):
    def collect(self) -> Iterator[CaseItem]:
        from conformance.corpus import cases as case_corpus

        loaded, errors = case_corpus.load_file(self.path)
        if errors:
            raise case_corpus.CorpusError(errors)
        # FOLDER::generated beside FILE::CASE: the cases named, unless an argument names the file (or a folder
        # above it) whole.
        selection, named = _selection(self), None
        if selection is not None and not any(path == self.path and name is None
                                             or path != self.path and self.path.is_relative_to(path)
                                             for path, name in selection):
            named = {name for path, name in selection if path == self.path}
        for case in loaded:
            slug = case.id.split("::", 1)[1]
            if named is None or slug in named:
                yield CaseItem.from_parent(self, name=slug, loaded=case)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: TracebackStyle | None = None) -> str | TerminalRepr:
        from conformance.corpus.cases import CorpusError

        if isinstance(excinfo.value, CorpusError):  # file:line: [id] problem, each on a line of its own
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class _ConformanceItem(pytest.Item):
    """An item whose outcome is report lines: a handler of the engine's events while it runs, the lines they
    carry kept in ``lines`` for the report, told as a failure or an xfail."""

    lines: list[CaseLine | GeneratedLine]

    def handle(self, event: Event) -> None:
        from conformance.run.events import CaseFinished, FindingFound, SurfaceFinished

        if isinstance(event, CaseFinished | FindingFound | SurfaceFinished):
            self.lines.append(event.line)

    def mark(self, surface: str, tags: Iterable[str], keywords: Iterable[str]) -> None:
        names = self.config.stash[SUITE].markers
        self.add_marker(names.every_item())
        self.add_marker(names.surface(surface))
        for tag in tags:
            self.add_marker(names.tag(tag))
        # -k matches marker names already; these add the surface and tags as written, and the case id.
        self.extra_keyword_matches.update([surface, *tags, *keywords])

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: TracebackStyle | None = None) -> str | TerminalRepr:
        # A divergence is told as certify tells it; an xfail's traceback is never shown (and slow to format).
        if isinstance(excinfo.value, Divergent | pytest.xfail.Exception):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)


class CaseItem(_ConformanceItem):
    def __init__(self, *, loaded: LoadedCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded
        self.lines = []
        self.mark(loaded.case.surface, loaded.case.tags, [loaded.id])

    def runtest(self) -> None:
        from conformance.core import scope

        suite = self.config.stash[SUITE]
        case = self.loaded.case
        oracle = suite.oracle()
        version = oracle.implementation.version if oracle.connection else None
        if not case.applies_to(version):
            _skip(f"{case.id} applies to harbor {case.harbor}, the oracle is {version}")
        candidate = suite.candidate()
        claimed = candidate.implementation.scope if candidate.implementation is not None else None
        if not scope.claims(claimed, case.surface, case.input):
            _skip(f"{case.id} is outside what {candidate.spec} claims: {claimed}")
        self.lines = []
        with suite.stream.listening(self):
            records = list(suite.engine().cases([self.loaded]))
        verdict(records)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.loaded.line - 1, self.loaded.id


class GeneratedItem(_ConformanceItem):
    """A surface's generator, run as ``conformance certify`` runs it, with the profile, seed and budget asked for."""

    def __init__(self, *, surface: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.surface = surface
        self.lines = []
        self.mark(surface, [], [f"{surface}::{GENERATED}"])
        self.add_marker(self.config.stash[SUITE].markers.generated())
        if self.config.stash[SUITE].settings.run.oracle is None:
            self.add_marker(pytest.mark.skip(reason="generated inputs need a live oracle, not --conformance-oracle "
                                                    "recorded"))

    def runtest(self) -> None:
        from conformance.core import scope
        from conformance.run import generate

        suite = self.config.stash[SUITE]
        settings = suite.settings
        candidate = suite.candidate()
        claimed = candidate.implementation.scope if candidate.implementation is not None else None
        if not scope.surfaces(claimed, [self.surface]):
            _skip(f"{self.surface} is outside what {candidate.spec} claims: {claimed}")
        self.lines = []
        with suite.stream.listening(self):
            findings, summary = suite.engine(generating=True).generate(
                self.surface, profile=settings.run.profile_settings, seed=suite.seed,
                budget=generate.surface_budget(settings.run.profile_settings, self.surface,
                                               settings.run.max_examples))
        problems = []
        if summary.error:
            problems.append(f"the generator failed: {summary.error}")
        if summary.skipped:
            problems.append(f"{summary.skipped} generated input(s) declined by the candidate (they count against "
                            f"conformance): {summary.skip_reason}")
        verdict(findings, problems, f"{summary.inputs_run} generated inputs (profile {summary.profile}, seed "
                                    f"{summary.seed})")

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.surface} generated inputs"


def _skip(reason: str) -> NoReturn:
    """Skip the item, reported at the item (a case's file and line), not at this line."""
    raise pytest.skip.Exception(reason, _use_item_location=True)


class Divergent(Exception):
    """Items that did not conform: the text says how, as ``conformance certify`` prints a problem."""


def verdict(records: list[CaseLine], problems: Iterable[str] = (), about: str = "") -> None:
    """Pass, xfail (every divergence listed in the expectation file), or fail naming each problem."""
    from conformance.core.outcomes import Outcome

    failing = [r for r in records if not r.conforms or r.stale]
    problems = list(problems)
    if failing or problems:
        head = [f"{len(failing)} divergence(s) in {about}"] if about else []
        raise Divergent("\n".join([*head, *problems, *map(describe, failing)]))
    expected = [r for r in records if r.outcome is Outcome.XFAIL and r.expected_divergence is not None]
    if expected:
        pytest.xfail("; ".join(f"{r.id}: {r.expected_divergence.reason}" for r in expected
                               if r.expected_divergence is not None))


def _shortened(text: str, limit: int = 300) -> str:
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def describe(record: CaseLine) -> str:
    """One problem: its id and outcome, its input, both sides, every mismatch (bits and ULPs), its detail."""
    from conformance.core.outcomes import Outcome
    from conformance.report.model import result_text

    label = "XPASS(strict)" if record.outcome is Outcome.XPASS else str(record.outcome)
    lines = [f"{record.id}: {label}" + (f" ({record.protocol_error})" if record.protocol_error else "")]
    if record.input is not None:
        lines.append(f"  input:     {_shortened(repr(record.decoded_input))}")
    if record.oracle is not None or record.candidate is not None:
        lines.append(f"  oracle:    {_shortened(result_text(record.oracle))}")
        lines.append(f"  candidate: {_shortened(result_text(record.candidate))}")
    if record.candidate_again is not None:
        again = _shortened(result_text(record.candidate_again))
        lines.append(f"  again:     {again}  (the same input, asked once more)")
    lines += [f"  {m.describe()}" for m in record.mismatches]
    if record.stale:
        lines.append("  the live oracle disagrees with the case's recorded result:")
        lines += [f"  {m.describe('recorded', 'oracle')}" for m in record.recording_mismatches]
    if record.detail:
        lines.append("  " + record.detail.strip().replace("\n", "\n  ")[:2000])
    return "\n".join(lines)
