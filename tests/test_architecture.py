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

# Bottom to top, as in docs/architecture.md. A surface folder's modules sit in the layer of their part (below).
LAYERS = [
    ("oracle side", []),
    ("base", ["conformance", "conformance.errors", "conformance.shipped"]),
    ("kit", ["conformance.kit"]),
    ("core", ["conformance.core"]),
    ("declarations", ["conformance.surfaces"]),
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
# A surface folder's parts, by file name, and the layer each belongs to; every other module of a folder is its
# oracle side (harbor.py and what it loads), which runs inside harbor's virtualenv and imports nothing of the suite.
SURFACE_PARTS = {"strategy": "strategies", "features": "strategies", "mutants": "mutation", "coverage": "oracle",
                 "connector": "connection"}


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


def _surface_part(name: str) -> str | None:
    """``strategy``, ``harbor``... for a module of a surface folder (conformance.surfaces.FOLDER.PART), else None."""
    parts = name.split(".")
    return parts[3] if len(parts) == 4 and parts[:2] == ["conformance", "surfaces"] else None


def _is_reference(name: str) -> bool:
    return name.startswith(REFERENCE) or _surface_part(name) == "reference"


def _layer(name: str) -> str | None:
    part = _surface_part(name)
    if part is not None and part != "reference":
        return SURFACE_PARTS.get(part, "oracle side")
    best, layer = "", None
    for layer_name, prefixes in LAYERS:
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > len(best):
                best, layer = prefix, layer_name
    return layer


ORDER = [name for name, _ in LAYERS]


def test_every_module_has_a_place():
    assert all(_layer(name) is not None or _is_reference(name) for name in MODULES), sorted(
        name for name in MODULES if _layer(name) is None and not _is_reference(name))


def test_at_most_twelve_modules_at_the_top_of_the_package():
    top = [p for p in PACKAGE.glob("*.py")]
    assert len(top) <= 12, sorted(p.name for p in top)


def test_dependencies_point_down():
    upward = []
    for name, targets in GRAPH.items():
        if _is_reference(name):
            continue
        for target in targets:
            if _is_reference(target):
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
    assert [name for name, targets in GRAPH.items() if not _is_reference(name)
            and any(_is_reference(t) for t in targets)] == []


def test_the_reference_candidate_uses_only_what_any_python_candidate_could():
    used = {(_layer(t), t) for name, targets in GRAPH.items() if _is_reference(name) for t in targets
            if not _is_reference(t)}
    assert {layer for layer, _ in used} <= REFERENCE_MAY_IMPORT, sorted(used)


def test_a_surfaces_oracle_side_stands_alone():
    """Loaded by path inside harbor's virtualenv: standard library, harbor and the oracle folder's sandbox only."""
    oracle_side = [name for name in MODULES if _layer(name) == "oracle side"]
    assert oracle_side and all(not GRAPH[name] for name in oracle_side), {n: GRAPH[n] for n in oracle_side}
    for name in oracle_side:
        tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert not [m for m in imported if m.split(".")[0] == "conformance"], name


def test_the_site_reads_reports_and_runs_nothing():
    used = {(_layer(t), t) for name, targets in GRAPH.items() if name.startswith("conformance.site") for t in targets}
    assert used and {layer for layer, _ in used} <= SITE_MAY_IMPORT, sorted(used)


@pytest.mark.parametrize("text", [(PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")],
                         ids=["docs/architecture.md"])
def test_the_architecture_page_names_every_subpackage(text):
    packages = sorted({name.split(".")[1] for name in MODULES if name.count(".") >= 1 and _is_package(
        ".".join(name.split(".")[:2]))})
    assert [p for p in packages if f"conformance/{p}/" not in text] == []
