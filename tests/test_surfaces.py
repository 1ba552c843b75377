"""A surface is one folder: every registered surface has all its parts, the generic layers name none of them,
and a surface from outside the package (tests/toy_surface, through the entry-point group) certifies end to end
with an oracle side of its own that harbor's virtualenv runs."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis.strategies import SearchStrategy

from conformance.core import surfaces
from conformance.core.features import Feature
from conformance.core.loading import import_object
from conformance.corpus import cases as case_corpus
from conformance.mutation.mutants import Mutant
from conformance.oracle.coverage import NoTargets, Target
from conformance.report.reader import read
from conformance.run import generate

ROOT = Path(__file__).resolve().parent.parent
TOY = Path(__file__).resolve().parent / "toy_surface"
BUILTIN = [s.name for s in surfaces.SURFACES.values() if s.package.startswith("conformance.surfaces.")]


def _defines(path: Path, function: str) -> bool:
    return any(isinstance(node, ast.FunctionDef) and node.name == function
               for node in ast.parse(path.read_text(encoding="utf-8")).body)


def _complete(surface: surfaces.Surface, cases_root: Path) -> list[str]:
    """What the surface's folder lacks (empty: nothing)."""
    missing = []
    if surface.folder is None:
        return ["a folder (it is declared in a plain module)"]
    if not sorted((cases_root / surface.name).glob("*.yaml")):
        missing.append(f"cases in {cases_root / surface.name}")
    if surface.strategy is None or not isinstance(surface.inputs(), SearchStrategy):
        missing.append("a strategy")
    if surface.reference is None or not callable(import_object(surface.reference)):
        missing.append("a reference answer")
    mutants = import_object(surface.mutants) if surface.mutants else []
    if not mutants or not all(isinstance(m, Mutant) and m.surface == surface.name for m in mutants):
        missing.append("mutants of its own")
    declared = import_object(surface.coverage) if surface.coverage else None
    if not ((isinstance(declared, tuple) and declared and all(isinstance(t, Target) for t in declared))
            or (isinstance(declared, NoTargets) and declared.reason)):
        missing.append("coverage targets, or the reason it has none")
    if surface.output_model is Any:
        missing.append("an output model")
    features = surface.features
    if not features or not all(isinstance(f, Feature) for f in features) or len({f.name for f in features}) < len(
            features):
        missing.append("input features (features.py: FEATURES, each with a name of its own)")
    elif not all(f.minimum and set(f.minimum) <= set(generate.PROFILES) for f in features):
        missing.append("a minimum share for each feature, under a generation profile's name")
    if surface.oracle is None and (surface.harbor_side is None or not _defines(surface.harbor_side, "serve")):
        missing.append("an oracle side (harbor.py with serve) or an oracle of its own")
    return missing


@pytest.mark.parametrize("name", BUILTIN)
def test_every_registered_surface_is_complete(name):
    assert _complete(surfaces.get(name), case_corpus.default_root()) == []


def test_every_recorded_output_is_a_value_of_its_surfaces_output_model():
    loaded, problems = case_corpus.check_corpus(case_corpus.default_root())
    recorded = [(c.case, c.case.expect.output) for c in loaded
                if c.case.expect is not None and "output" in c.case.expect.model_fields_set]
    assert problems == [] and len({case.surface for case, _ in recorded}) == len(BUILTIN)
    for case, output in recorded:
        surfaces.get(case.surface).output_adapter().validate_python(output)  # raises, naming the field, if not


@pytest.mark.parametrize(("surface", "wrong"), [
    ("reward.parse", {"reward": True}),  # a bool is no reward once VerifierResult has read it
    ("pass_at_k", {"agent__adhoc": {"2": 0.5}}),  # k is an int
    ("reason.normalize", {"reason_code": None, "failure": {"reason_code": "x", "retryable": 1}}),
    ("multi_step.reward", {"verifier_result": None, "exception_type": None, "steps": [], "extra": 1}),
])
def test_an_output_model_refuses_a_value_of_the_wrong_type(surface, wrong):
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        surfaces.get(surface).output_adapter().validate_python(wrong)


def test_the_suite_has_its_surfaces_as_folders():
    folders = sorted(p.name for p in (ROOT / "conformance" / "surfaces").iterdir() if (p / "__init__.py").is_file())
    assert len(BUILTIN) == len(folders) >= 8
    assert sorted(surfaces.get(name).folder.name for name in BUILTIN) == folders


def test_a_folder_missing_a_part_is_named(tmp_path):
    incomplete = surfaces.Surface(name="t.x", summary="", input_model=surfaces.BaseModel, output="", spec="",
                                  package=__name__)
    assert _complete(incomplete, tmp_path) == ["a folder (it is declared in a plain module)"]


def _string_constants(path: Path) -> list[tuple[int, str]]:
    """A module's string constants, docstrings and other bare string statements left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bare = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare]


def test_no_module_outside_the_surface_folders_names_a_surface():
    """The generic layers (and the oracle's adapter) build their tables from the registry, never from a name."""
    named = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, BUILTIN)) + r")(?!\w)")
    modules = [p for p in (ROOT / "conformance").rglob("*.py") if "surfaces" not in p.relative_to(ROOT).parts[:2]]
    modules += sorted((ROOT / "oracles").glob("*.py"))
    found = [f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}" for path in modules
             for line, text in _string_constants(path) if named.search(text)]
    assert len(modules) > 100 and found == []


def test_the_check_sees_a_surface_named_in_code(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(f'"""Docstrings may say {BUILTIN[0]}."""\nX = ("{BUILTIN[0]}",)\n')
    assert [text for _, text in _string_constants(module)] == [BUILTIN[0]]


def _toy_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(TOY), str(ROOT)]), "COLUMNS": "200"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance.cli.app", *args], capture_output=True, text=True,
                          env=_toy_env(), cwd=ROOT)


def test_a_surface_from_outside_the_package_is_complete_and_registered():
    script = ("import json; from conformance.core import surfaces; from tests.test_surfaces import _complete; "
              "from pathlib import Path; s = surfaces.get('toy.reward_keys'); "
              f"print(json.dumps([s.package, str(s.harbor_side), _complete(s, Path({str(TOY / 'cases')!r}))]))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=_toy_env(), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    package, harbor_side, missing = json.loads(proc.stdout)
    assert package == "toy_surfaces.reward_keys" and harbor_side.endswith("reward_keys/harbor.py") and missing == []


@pytest.mark.usefixtures("harbor_env")
def test_a_surface_from_outside_the_package_certifies_end_to_end_with_its_own_oracle_side(tmp_path):
    report = tmp_path / "r.jsonl"
    proc = _cli("certify", "-c", "reference", "--cases", str(TOY / "cases"), "-s", "toy.reward_keys",
                "--profile", "ci", "--max-examples", "40", "--no-oracle-cache", "--report", str(report))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = read(report)
    assert "toy.reward_keys" in data.header.oracle.implementation.surfaces  # harbor's virtualenv served it
    assert [(r.id, r.outcome) for r in data.records] == [("toy.reward_keys::insertion-order", "pass"),
                                                        ("toy.reward_keys::empty", "pass")]
    assert data.generated[0].surface == "toy.reward_keys" and data.generated[0].inputs_run == 40


@pytest.mark.usefixtures("harbor_env")
def test_a_surface_from_outside_the_package_catches_its_mutant(tmp_path):
    report = tmp_path / "r.jsonl"
    mutant = f"exec:{sys.executable} -m conformance.mutation.serve toy.reward_keys/sorted-keys"
    proc = _cli("certify", "-c", mutant, "--cases", str(TOY / "cases"), "-s", "toy.reward_keys", "--no-generate",
                "--report", str(report))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert {r.id: r.outcome for r in read(report).records} == {"toy.reward_keys::insertion-order": "fail",
                                                              "toy.reward_keys::empty": "pass"}


def _plugin(tmp_path: Path, entry_points: str, files: dict[str, str]) -> dict[str, str]:
    """A package made on the spot and "installed" (its dist-info on the path): the environment to run it in."""
    info = tmp_path / "made-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: made\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "COLUMNS": "200"}


def test_a_broken_surface_entry_point_is_a_usage_error_of_the_command_that_reads_it(tmp_path):
    env = _plugin(tmp_path, "[harbor_conformance.surfaces]\nbroken = no_such_package_anywhere.surface\n", {})
    version = subprocess.run([sys.executable, "-m", "conformance.cli.app", "--version"], capture_output=True,
                             text=True, env=env, cwd=tmp_path)
    assert version.returncode == 0, version.stderr  # nothing reads the registry to print the version
    run = subprocess.run([sys.executable, "-m", "conformance.cli.app", "certify", "--oracle", "recorded"],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "entry point 'broken'" in run.stderr and "does not load" in run.stderr


DOES_NOT_LOAD = '''
from typing import Any

raise ImportError("a module this oracle side needs is missing")


def serve(context: Any) -> Any:
    return lambda request: None
'''


@pytest.mark.usefixtures("harbor_env")
def test_a_surface_whose_oracle_side_does_not_load_is_an_error_there_and_the_others_are_served(tmp_path):
    toy = TOY / "toy_surfaces" / "reward_keys"
    files = {f"made_surfaces/{p.name}": p.read_text().replace("toy.reward_keys", "made.reward_keys")
             for p in toy.glob("*.py")}
    files["made_surfaces/harbor.py"] = DOES_NOT_LOAD
    files["cases/made.reward_keys/basic.yaml"] = (
        (TOY / "cases" / "toy.reward_keys" / "basic.yaml").read_text().replace("toy.reward_keys", "made.reward_keys"))
    env = _plugin(tmp_path, "[harbor_conformance.surfaces]\nmade = made_surfaces\n", files)
    report = tmp_path / "r.jsonl"
    run = subprocess.run([sys.executable, "-m", "conformance.cli.app", "certify", "-c", "reference", "--no-generate",
                          "--no-oracle-cache", "--cases", str(tmp_path / "cases"), "--report", str(report)],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    records = read(report).records
    assert {r.outcome for r in records} == {"error"} and len(records) == 2
    assert all("oracle side of made.reward_keys" in r.detail and "does not load" in r.detail for r in records)
    served = subprocess.run([sys.executable, "-m", "conformance.cli.app", "certify", "-c", "reference",
                             "--no-generate", "--no-oracle-cache", "-s", "pass_at_k", "--report",
                             str(tmp_path / "p.jsonl")], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert served.returncode == 0, served.stdout + served.stderr  # the same oracle process serves the suite's own


@pytest.mark.usefixtures("harbor_env")
def test_a_surface_from_outside_the_package_has_its_mutants_measured_on_its_own_cases():
    proc = _cli("mutants", "-m", "toy.reward_keys/*", "--cases", str(TOY / "cases"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = proc.stdout + proc.stderr
    assert "toy.reward_keys/sorted-keys: killed; cases: 1 killing of 2" in said
    assert "every target met by 1 mutant(s)" in said
