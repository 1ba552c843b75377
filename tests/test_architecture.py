"""The package's layers, as docs/architecture.md draws them: read from every module's imports.

Each import (at the top or inside a function: a lazy import is a dependency
too) is an edge from the importing module to the module it names. The
layers must only point down, the graph must have no cycle, the candidate
kit must stand alone, and the harness must never import the reference
candidate (it names it by a string).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "conformance"

# Bottom to top, as in docs/architecture.md.
LAYERS = [
    ("base", ["conformance", "conformance.errors", "conformance.shipped"]),
    ("kit", ["conformance.kit"]),
    ("core", ["conformance.core"]),
    ("oracle", ["conformance.oracle"]),
    ("connection", ["conformance.connection"]),
    ("report", ["conformance.report"]),
    ("corpus", ["conformance.corpus"]),
    ("site", ["conformance.site"]),
    ("strategies", ["conformance.strategies"]),
    ("run", ["conformance.run"]),
    ("campaign", ["conformance.campaign"]),
    ("mutation", ["conformance.mutation"]),
    ("front ends", ["conformance.cli", "conformance.pytest_plugin", "conformance.schema_export", "conformance.bench",
                    "conformance.__main__"]),
]
# The site is an output format: it reads reports and the corpus, and never starts or asks an implementation.
SITE_MAY_IMPORT = {"base", "kit", "core", "report", "corpus", "site"}
# The reference candidate uses the kit and the suite's script environment, like any Python candidate could.
REFERENCE = "conformance.reference"
REFERENCE_MAY_IMPORT = {"base", "kit", "core", "oracle"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _imports(name: str) -> set[str]:
    """The suite's modules that ``name`` imports."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    here = name if _is_package(name) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
                base = f"{anchor}.{base}" if base else anchor
            # `from package import module` depends on the module; `from module import name` on the module
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != name)
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _layer(name: str) -> str | None:
    best, layer = "", None
    for layer_name, prefixes in LAYERS:
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > len(best):
                best, layer = prefix, layer_name
    return layer


ORDER = [name for name, _ in LAYERS]


def test_every_module_has_a_place():
    assert all(_layer(name) is not None or name.startswith(REFERENCE) for name in MODULES), sorted(
        name for name in MODULES if _layer(name) is None and not name.startswith(REFERENCE))


def test_at_most_twelve_modules_at_the_top_of_the_package():
    top = [p for p in PACKAGE.glob("*.py")]
    assert len(top) <= 12, sorted(p.name for p in top)


def test_dependencies_point_down():
    upward = []
    for name, targets in GRAPH.items():
        if name.startswith(REFERENCE):
            continue
        for target in targets:
            if target.startswith(REFERENCE):
                continue  # checked below
            if ORDER.index(_layer(target)) > ORDER.index(_layer(name)):
                upward.append(f"{name} ({_layer(name)}) imports {target} ({_layer(target)})")
    assert upward == []


def test_no_import_cycle():
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(GRAPH[name]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_the_kit_stands_alone():
    """Loaded by path inside harbor's virtualenv, where nothing else of the suite exists."""
    for name in (n for n in MODULES if n.startswith("conformance.kit")):
        tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
        absolute = [node.module for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(
                        "conformance")]
        absolute += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
                     if alias.name.startswith("conformance")]
        assert absolute == [], name


def test_the_harness_never_imports_the_reference_candidate():
    assert [name for name, targets in GRAPH.items() if not name.startswith(REFERENCE)
            and any(t.startswith(REFERENCE) for t in targets)] == []


def test_the_reference_candidate_uses_only_what_any_python_candidate_could():
    used = {(_layer(t), t) for name, targets in GRAPH.items() if name.startswith(REFERENCE) for t in targets
            if not t.startswith(REFERENCE)}
    assert {layer for layer, _ in used} <= REFERENCE_MAY_IMPORT, sorted(used)


def test_the_site_reads_reports_and_runs_nothing():
    used = {(_layer(t), t) for name, targets in GRAPH.items() if name.startswith("conformance.site") for t in targets}
    assert used and {layer for layer, _ in used} <= SITE_MAY_IMPORT, sorted(used)


@pytest.mark.parametrize("text", [(PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")])
def test_the_architecture_page_names_every_subpackage(text):
    packages = sorted({name.split(".")[1] for name in MODULES if name.count(".") >= 1 and _is_package(
        ".".join(name.split(".")[:2]))})
    assert [p for p in packages if f"conformance/{p}/" not in text] == []
