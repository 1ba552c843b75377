"""The oracle's side is type-checked strictly against harbor itself (conformance/oracle/typecheck.py).

`nox -s lint` runs the same check (`python -m conformance.oracle.typecheck`) on the files as they are; here it runs
with one more module, a surface whose oracle side is wrong on purpose, so the test shows the check finds errors
through harbor's annotations, the adapter's Context and the kit, and that they are the only ones.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conformance.core import surfaces
from conformance.oracle import typecheck

ROOT = Path(__file__).resolve().parent.parent

BROKEN = '''\
from __future__ import annotations

from typing import TYPE_CHECKING

import harbor_job
from harbor.models.verifier.result import VerifierResult

if TYPE_CHECKING:
    from conformance_kit.candidate import Handler
    from harbor_adapter import Context


def serve(context: Context) -> Handler:
    context.runner().run_all()
    rewards: dict[str, str] = VerifierResult(rewards={"r": 1}).rewards
    harbor_job.write_task(context.workdir, 1)
    with context.kit.working_folder(["scripts"]):
        pass

    def handler(request):
        return rewards

    return handler
'''
# (line, error code) of each error BROKEN holds: the runner the adapter's Context gives has no such method;
# harbor's VerifierResult.rewards is a dict of numbers or None; harbor_job.write_task takes a name; the kit's
# working_folder takes a table of files; strict mode wants every function annotated.
BROKEN_ERRORS = {(14, "attr-defined"), (15, "assignment"), (16, "arg-type"), (17, "arg-type"),
                 (20, "no-untyped-def")}


@pytest.mark.slow
def test_the_oracle_side_type_checks_and_a_wrong_one_does_not(harbor_env, tmp_path):
    broken = tmp_path / "broken_harbor.py"
    broken.write_text(BROKEN, encoding="utf-8")
    done = typecheck.check(harbor_env.harbor_version, extra={"surface_broken_harbor": broken})
    errors = re.findall(r"^(.+?):(\d+): error: .*\[([a-z-]+)\]$", done.stdout, re.MULTILINE)
    assert done.returncode == 1, done.stdout + done.stderr
    elsewhere = [error for error in errors if Path(error[0]).resolve() != broken.resolve()]
    assert elsewhere == [], done.stdout  # the oracle's side as committed has no type error
    assert {(int(line), code) for _, line, code in errors} == BROKEN_ERRORS, done.stdout


def test_every_oracle_module_is_checked_under_the_name_it_runs_under():
    """The check covers every file the oracle's answers depend on (the answer cache's digest), each under the name
    the adapter loads it as; what a surface imports for the type check is one of them."""
    modules = typecheck.oracle_side()
    files = {path.resolve() for path in modules.values() if path.is_file()}
    oracle_files = {file.resolve() for surface in surfaces.SURFACES.values() for file in surface.oracle_files()}
    oracle_folder = {file.resolve() for file in (ROOT / "oracles").glob("*.py") if file.name != "__init__.py"}
    assert oracle_files and oracle_files | oracle_folder == files
    assert modules["conformance_kit"] == (ROOT / "conformance" / "kit").resolve()
    for file in oracle_files:
        tree = ast.parse(file.read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        named = {name.split(".")[0] for name in imported if name.split(".")[0].startswith(("surface_", "harbor_"))}
        assert named - {"harbor_job", "harbor_adapter"} <= set(modules), file
    # The adapter's Context.load names a folder's module as the check does.
    adapter = (ROOT / "oracles" / "harbor_adapter.py").read_text(encoding="utf-8")
    assert 'f"surface_{surface.replace(\'.\', \'_\')}_{module}"' in adapter
    assert typecheck.surface_module("reason.normalize", "agent_challenge") == "surface_reason_normalize_agent_challenge"


def test_the_lint_session_runs_the_check():
    assert '"-m", "conformance.oracle.typecheck"' in (ROOT / "noxfile.py").read_text(encoding="utf-8")
