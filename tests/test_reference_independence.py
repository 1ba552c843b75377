"""The reference candidate is independent of the oracle: it imports and reads nothing of the oracle's side.

The oracle's side is the oracle folder (``oracles/``: the harbor adapter, the
scripted sandbox ``harbor_job``) and, in each surface folder, ``harbor.py``
and the modules it loads (``agent_challenge.py``, ``evsys_sdk.py``: the
transcriptions of the downstream systems). A reference that imported one of
them, or copied its tables by reading it, would compare the oracle with
itself. Two checks, each shown to fail on a planted offence:

* statically, over the source of every reference module
  (``conformance/reference/*.py``, ``conformance/surfaces/*/reference.py``):
  no import of an oracle-side module or of the shipped-files access, no string
  naming one (docstrings aside: prose may say where a rule was learnt, and no
  reference module reads a docstring);
* dynamically, in a fresh interpreter with an audit hook: building the
  candidate and answering one case input per surface imports no oracle-side
  module (by the hook's ``import`` events, and by ``sys.modules`` at the end,
  which also holds what ``importlib`` loaded without the event) and opens no
  oracle-side file, source or cached bytecode.
"""

from __future__ import annotations

import ast
import json
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import conformance
from conformance import shipped
from conformance.core.surfaces import SURFACES

PACKAGE = Path(conformance.__file__).resolve().parent
REFERENCE_MODULES = sorted([*(PACKAGE / "reference").glob("*.py"), *(PACKAGE / "surfaces").glob("*/reference.py")])
# The surfaces the reference answers (the suite's own: those whose folder has a reference.py).
ANSWERED = sorted(s.name for s in SURFACES.values() if s.reference is not None)
# Module names (any dotted component) of the oracle's side.
ORACLE_MODULE_PARTS = frozenset({"oracles", "harbor", "harbor_job", "harbor_adapter", "agent_challenge", "evsys_sdk"})
# The access to the shipped oracle folder.
SHIPPED_MODULES = frozenset({"conformance.shipped"})
# Substrings no string of a reference module may hold: they name an oracle-side file or module.
ORACLE_NAMES = ("oracles/", "oracles.", "agent_challenge", "evsys_sdk", "harbor_job", "harbor_adapter", "harbor.py")


def _imported(node: ast.AST, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            base = f"{anchor}.{base}" if base else anchor
        return [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return []


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes: prose, which may say where a rule was learnt, never read as data."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def offences(source: str, package: str = "conformance.reference") -> list[str]:
    """What in ``source`` (a module of ``package``) imports or names the oracle's side, or reads a docstring."""
    found = []
    tree = ast.parse(source)
    prose = _docstrings(tree)
    for node in ast.walk(tree):
        for name in _imported(node, package):
            if ORACLE_MODULE_PARTS & set(name.split(".")) or name in SHIPPED_MODULES:
                found.append(f"line {node.lineno}: imports {name}")
        if (isinstance(node, ast.Attribute) and node.attr == "__doc__") or (
                isinstance(node, ast.Name) and node.id == "__doc__"):
            found.append(f"line {node.lineno}: reads a docstring")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            found.extend(f"line {node.lineno}: names {word!r}" for word in ORACLE_NAMES if word in node.value)
    return found


def _package_of(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).parent.parts)


def test_the_reference_modules_are_found():
    names = {p.relative_to(PACKAGE).as_posix() for p in REFERENCE_MODULES}
    assert {"reference/answers.py", "surfaces/reason_normalize/reference.py",
            "surfaces/evsys_metric/reference.py"} <= names
    assert len([n for n in names if n.startswith("surfaces/")]) == len(ANSWERED)


@pytest.mark.parametrize("path", REFERENCE_MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_reference_module_imports_or_names_the_oracle_side(path: Path):
    assert offences(path.read_text(encoding="utf-8"), _package_of(path)) == []


@pytest.mark.parametrize("planted", [
    "import harbor",
    "from harbor.metrics.mean import Mean",
    "import harbor_job",
    "from oracles import harbor_adapter",
    "from conformance.surfaces.reason_normalize import agent_challenge",
    "from conformance.surfaces.reason_normalize.agent_challenge import LISTED_CODES",
    "from conformance.surfaces.evsys_metric.evsys_sdk import BUILTINS",
    "from conformance.surfaces.reward_parse import harbor",
    "from . import harbor",
    "from .agent_challenge import ALIASES",
    "from conformance import shipped",
    "from conformance.shipped import oracle_file",
    "import importlib; importlib.import_module('conformance.surfaces.evsys_metric.evsys_sdk')",
    "TABLE = open('oracles/harbor_job.py').read()",
    "PATH = 'conformance/surfaces/job_result/harbor.py'",
    "NAMES = f'{1}oracles/'",
    "'Measured by oracles/unicode_sets.py.'\nWHERE = __doc__.split()[2]",
])
def test_the_static_check_finds_a_planted_offence(planted: str):
    assert offences(planted, "conformance.surfaces.reason_normalize") != []


def test_the_static_check_passes_innocent_code():
    # A docstring may say where a rule was learnt (unicode_tables.py names the probe its tables came from).
    assert offences("'Measured by oracles/unicode_sets.py.'\n"
                    "from conformance.reference.cpython_sum import cpython312_sum\nfrom . import strategy\n"
                    "CODE = 'harbor_reward_missing'\n", "conformance.surfaces.reason_normalize") == []


# -- dynamically ---------------------------------------------------------------------------------------------

# Runs in a fresh interpreter: an audit hook records every import and every file opened, then the candidate is
# built and answers one input per surface, then the planted code (if any) runs; it prints what it saw of the
# oracle's side as JSON.
CHILD = textwrap.dedent("""
    import importlib.util, json, os, pickle, sys

    inputs_file, forbidden_file, planted = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(inputs_file, "rb") as f:
        inputs = pickle.load(f)
    with open(forbidden_file) as f:
        forbidden = json.load(f)
    oracle_folder, oracle_files = forbidden["folder"], set(forbidden["files"])
    oracle_files |= {importlib.util.cache_from_source(path) for path in list(oracle_files)}
    module_parts = set(forbidden["module_parts"])
    seen = {"imports": [], "opens": []}

    def oracle_side(path):
        path = os.path.realpath(os.fsdecode(path))
        return path in oracle_files or path.startswith(oracle_folder + os.sep)

    def hook(event, args):
        if event == "import":
            if module_parts & set(str(args[0]).split(".")):
                seen["imports"].append(str(args[0]))
        elif event == "open" and isinstance(args[0], (str, bytes, os.PathLike)) and oracle_side(args[0]):
            seen["opens"].append(os.fsdecode(args[0]))

    sys.addaudithook(hook)
    from conformance.reference import candidate

    answered = []
    for surface, request in inputs.items():
        candidate.handlers[surface](request)
        answered.append(surface)
    exec(planted)
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if module_parts & set(name.split(".")) or (file and oracle_side(file)):
            seen["imports"].append(name)
    print(json.dumps({"answered": answered, **seen}))
""")


def _one_input_per_surface(corpus) -> dict[str, object]:
    """The first case of each surface whose expected answer is an output (so the answer runs to its end)."""
    chosen: dict[str, object] = {}
    for loaded in corpus:
        case = loaded.case
        if case.surface not in chosen and case.expect is not None and case.expect.output is not None:
            chosen[case.surface] = case.input
    return chosen


def _forbidden() -> dict[str, object]:
    files = sorted(str(path.resolve()) for surface in SURFACES.values() for path in surface.oracle_files())
    return {"folder": str(shipped.folder(shipped.Shipped.ORACLES).resolve()), "files": files,
            "module_parts": sorted(ORACLE_MODULE_PARTS)}


def _run_child(tmp_path: Path, corpus, planted: str = "") -> dict[str, list[str]]:
    inputs, forbidden = tmp_path / "inputs.pickle", tmp_path / "forbidden.json"
    inputs.write_bytes(pickle.dumps(_one_input_per_surface(corpus)))
    forbidden.write_text(json.dumps(_forbidden()))
    done = subprocess.run([sys.executable, "-c", CHILD, str(inputs), str(forbidden), planted],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_oracle_side_is_known():
    forbidden = _forbidden()
    files = forbidden["files"]
    assert isinstance(files, list)
    names = {Path(f).relative_to(PACKAGE).as_posix() for f in files}
    assert {"surfaces/reason_normalize/agent_challenge.py", "surfaces/reason_normalize/harbor.py",
            "surfaces/evsys_metric/evsys_sdk.py", "surfaces/job_result/harbor.py"} <= names
    assert (Path(str(forbidden["folder"])) / "harbor_job.py").is_file()


def test_answering_every_surface_imports_and_opens_nothing_of_the_oracle_side(tmp_path, corpus):
    seen = _run_child(tmp_path, corpus)
    assert sorted(seen["answered"]) == ANSWERED
    assert seen["imports"] == []
    assert seen["opens"] == []


@pytest.mark.parametrize(("planted", "kind"), [
    ("from conformance.surfaces.reason_normalize import agent_challenge", "imports"),
    ("import importlib; importlib.import_module('conformance.surfaces.evsys_metric.evsys_sdk')", "imports"),
    ("from conformance import shipped; shipped.oracle_file('harbor_job.py').read_bytes()", "opens"),
    ("from conformance.core.surfaces import SURFACES\n"
     "SURFACES.get('outcome.summary').harbor_side.read_text()", "opens"),
])
def test_the_dynamic_check_finds_a_planted_offence(tmp_path, corpus, planted: str, kind: str):
    assert _run_child(tmp_path, corpus, planted)[kind] != []
