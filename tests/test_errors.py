"""One error family, printed in one place: each kind ends the command with its exit status and a single
``error:`` line (its details before it), never a traceback; and no layer hands a user's mistake up as a
``ValueError`` for another to translate."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import app
from conformance.errors import ConfigurationError, HarnessError, RunFailure, UsageError

PACKAGE = Path(__file__).resolve().parent.parent / "conformance"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *args], capture_output=True, text=True, timeout=120)


def _errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("error:")]


def test_the_kinds_and_their_exit_status():
    assert issubclass(ConfigurationError, UsageError) and issubclass(UsageError, HarnessError)
    assert (UsageError("u").exit_code, ConfigurationError("c").exit_code, RunFailure("r").exit_code) == (2, 2, 1)
    said = ConfigurationError("broken", ["a detail"]).within("the file")
    assert isinstance(said, ConfigurationError) and str(said) == "the file: broken" and said.details == ["a detail"]
    assert isinstance(RunFailure("stopped").within("harbor 0.25.0"), RunFailure)


@pytest.mark.parametrize(("args", "code", "message"), [
    (["gate", "0.25.0", "--since", "0.24.0"], 2, "error: give releases or --since, not both"),
    (["certify", "-c", "nosuch", "--oracle", "recorded"], 2, "error: unknown candidate 'nosuch': use one of "),
    (["certify", "--oracle", "recorded", "--shard", "5/4"], 2, "error: --shard takes I/N with 1 <= I <= N"),
    (["campaign", "--budget", "soon"], 2, "error: --budget: a duration is written like 90s"),
])
def test_a_usage_error_is_one_line_and_exit_status_2(args, code, message):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == code, result.output
    assert not isinstance(result.exception, HarnessError)  # printed and turned into the exit status, not raised
    (line,) = _errors(result.output)
    assert line.startswith(message)


def test_a_configuration_error_found_deep_in_a_layer_is_printed_once_without_a_traceback(tmp_path):
    broken = tmp_path / "known.yaml"
    broken.write_text("candidate: x\ndivergences: [1\n", encoding="utf-8")
    done = run("certify", "--oracle", "recorded", "-s", "pass_at_k", "--expectations", str(broken),
               "--report", str(tmp_path / "r.jsonl"))
    assert done.returncode == 2
    assert _errors(done.stderr) == [line for line in done.stderr.splitlines() if line.strip()]
    (line,) = _errors(done.stderr)
    assert line.startswith(f"error: expectation file: {broken}:3: bad YAML")
    assert "Traceback" not in done.stderr and not done.stdout


def test_an_errors_details_come_before_it_each_on_a_line(tmp_path):
    folder = tmp_path / "cases" / "pass_at_k"
    folder.mkdir(parents=True)
    (folder / "x.yaml").write_text("surface: pass_at_k\ncases:\n  - id: nope\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["certify", "--oracle", "recorded", "--cases", str(tmp_path / "cases")])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert lines[-1].startswith("error: 4 problem(s) in the case corpus") and len(_errors(result.output)) == 1
    assert all(line.startswith(f"{folder / 'x.yaml'}:3: [nope]") for line in lines[:-1])


def test_a_run_failure_is_exit_status_1(tmp_path):
    result = CliRunner().invoke(app, ["schemas", "--check", "--out", str(tmp_path)])
    assert result.exit_code == 1
    (line,) = _errors(result.output)
    assert line.startswith("error: out-of-date schema files (run `conformance schemas`): ")


def test_the_mutant_catalogue_is_a_configuration_error(monkeypatch):
    from conformance.cli import mutants
    from conformance.mutation.mutants import CatalogueError

    def broken():
        raise CatalogueError("reward.parse/x: listed twice")

    monkeypatch.setattr(mutants, "catalogue", broken)
    result = CliRunner().invoke(app, ["mutants", "--list"])
    assert result.exit_code == 2
    assert _errors(result.output) == ["error: the mutant catalogue: reward.parse/x: listed twice"]


# -- no ValueError translated -------------------------------------------------------------------------------


def _family() -> set[str]:
    """The names of the error family's classes, read from the package's class statements."""
    bases: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, set()).update(
                    b.id if isinstance(b, ast.Name) else b.attr for b in node.bases
                    if isinstance(b, (ast.Name, ast.Attribute)))
    family = {kind.__name__ for kind in (HarnessError, UsageError, ConfigurationError, RunFailure)}
    while grown := {name for name, of in bases.items() if of & family} - family:
        family |= grown
    return family


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _harness_names(tree: ast.Module) -> set[str]:
    """What a module calls of the harness: its imports from the package, its own functions and classes, methods."""
    names = {"self", "cls"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("conformance")):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names
                         if alias.name.startswith("conformance"))
    names.update(node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef)))
    return names


def _translations() -> list[str]:
    """Every ``except ValueError`` whose ``try`` calls the harness and whose handler raises an error of the family
    (or ends the command): a user's mistake that crossed a layer as a ValueError, translated where caught. A
    ValueError of the standard library or a dependency (json, int(), a Dask client) caught where it is raised is
    the mistake found, not translated."""
    family, found = _family() | {"Exit", "fail", "refused"}, []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        harness = _harness_names(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Try):
                continue
            calls = {_root(call.func) for part in node.body for call in ast.walk(part) if isinstance(call, ast.Call)}
            for handler in node.handlers:
                caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                if not any(isinstance(t, ast.Name) and t.id == "ValueError" for t in caught):
                    continue
                raised = {_root(r.exc) for part in handler.body for r in ast.walk(part)
                          if isinstance(r, ast.Raise) and r.exc is not None}
                if raised & family and calls & harness:
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{handler.lineno}")
    return found


def test_no_value_error_is_caught_to_translate_a_users_mistake():
    assert _translations() == []


def test_the_check_finds_a_translation(tmp_path, monkeypatch):
    """The check above would see the pattern it forbids (here, the one the command's --shard once had)."""
    module = tmp_path / "conformance" / "translated.py"
    module.parent.mkdir()
    module.write_text("from conformance.run.shards import Shard\nfrom conformance.errors import UsageError\n\n\n"
                      "def shard(text):\n    try:\n        return Shard.parse(text)\n    except ValueError as e:\n"
                      "        raise UsageError(str(e)) from None\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", module.parent)
    assert _translations() == ["conformance/translated.py:8"]
