"""The built package works without a checkout: it carries the corpus, the oracle folder and the schemas.

The wheel is built from this repository, then installed into a fresh
virtualenv in a temporary folder; every command runs there, with the
temporary folder as its working directory, so nothing of the checkout can
be found by accident.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance.oracle.environments import uv_binary

REPO = Path(__file__).resolve().parent.parent
SHIPPED = {"cases": "conformance/shipped/cases", "oracles": "conformance/shipped/oracles"}


def _tracked(folder: str) -> set[str]:
    """The repository's files under a folder, as git knows them (symbolic links listed as files)."""
    out = subprocess.run(["git", "ls-files", folder], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return {line for line in out.splitlines() if line}


def _build(kind: str, out: Path) -> Path:
    if kind == "pip-wheel":
        subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w", str(out)],
                       check=True, capture_output=True)
    else:  # the sdist, and the wheel built from it (what installing from a source release does)
        subprocess.run([uv_binary(), "build", "-q", "--out-dir", str(out), str(REPO)], check=True,
                       capture_output=True)
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.mark.slow
def test_the_wheel_holds_one_package_with_the_corpus_and_the_oracle_folder(tmp_path):
    if not (REPO / ".git").exists():
        pytest.skip("test_the_wheel_holds_one_package...: needs a git checkout to list the tracked files")
    wheel = zipfile.ZipFile(_build("pip-wheel", tmp_path))
    names = set(wheel.namelist())

    tops = {name.split("/")[0] for name in names}
    assert tops == {"conformance", "harbor_conformance-0.1.0.dist-info"}
    assert "conformance/py.typed" in names
    assert "harbor_conformance-0.1.0.dist-info/licenses/LICENSE" in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    for folder, inside in SHIPPED.items():
        wanted = {inside + path.removeprefix(folder) for path in _tracked(folder)}
        assert wanted - names == set(), f"{folder}/ files missing from the wheel"
    # The JSON Schemas users validate reports and case files against.
    assert {"conformance/schemas/report-line.json", "conformance/schemas/case-file.json"} <= names
    # What `conformance site` draws its pages from, read from the installed package.
    site = {path for path in _tracked("conformance/site") if "/templates/" in path or "/assets/" in path}
    assert {"conformance/site/templates/index.html", "conformance/site/assets/site.js"} <= site <= names

    metadata = wheel.read("harbor_conformance-0.1.0.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata
    assert "Typing :: Typed" in metadata
    assert re.search(r"^Project-URL: Source, https://", metadata, re.M)


def test_the_shipped_folders_hold_no_symbolic_link():
    # A wheel cannot carry one, and a checkout on a system without them gets a text file instead.
    links = [p for name in SHIPPED for p in (REPO / name).rglob("*") if p.is_symlink()]
    assert links == []


def _case_ids() -> set[str]:
    """The corpus's case ids, read with a pattern rather than with the suite's loader."""
    found = set()
    for path in (REPO / "cases").glob("*/*.yaml"):
        found |= set(re.findall(r"^  - id: ([\w.]+::[\w.-]+)", path.read_text(), re.M))
    return found


def _report(path: Path) -> tuple[list[dict], dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "footer"
    return [line for line in lines[1:-1] if line["type"] == "case"], lines[-1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """The ``conformance`` command of a fresh virtualenv holding the wheel built from the sdist, and a work folder."""
    root = tmp_path_factory.mktemp("installed")
    wheel = _build("sdist", root / "dist")
    venv = root / "venv"
    subprocess.run([uv_binary(), "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    subprocess.run([uv_binary(), "pip", "install", "-q", "--python", str(venv / "bin" / "python"), str(wheel)],
                   check=True)
    work = root / "work"
    work.mkdir()
    return venv / "bin" / "conformance", work


def _run(installed: tuple[Path, Path], *args: str) -> subprocess.CompletedProcess[str]:
    command, work = installed
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(command), *args], cwd=work, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_installed_wheel_certifies_the_reference_outside_a_checkout(installed, harbor_env):
    version = _run(installed, "--version")
    assert version.returncode == 0 and "harbor-conformance 0.1.0" in version.stdout

    listed = _run(installed, "cases", "list")
    assert listed.returncode == 0, listed.stderr
    ids = {line.split()[0] for line in listed.stdout.splitlines() if "::" in line}
    assert ids == _case_ids()
    assert str(REPO) not in listed.stdout

    smoke = _run(installed, "smoke", "-c", "reference")
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert "reference: speaks the protocol" in smoke.stdout

    recorded = _run(installed, "certify", "-c", "reference", "--oracle", "recorded", "--report", "recorded.jsonl")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    records, footer = _report(installed[1] / "recorded.jsonl")
    assert {r["id"] for r in records} == _case_ids()
    assert {r["outcome"] for r in records} == {"pass"}
    assert footer["conforms"] is True

    live = _run(installed, "certify", "-c", "reference", "-s", "reward.parse", "--profile", "ci",
                "--report", "live.jsonl")
    assert live.returncode == 0, live.stdout + live.stderr
    records, footer = _report(installed[1] / "live.jsonl")
    assert {r["id"] for r in records} == {i for i in _case_ids() if i.startswith("reward.parse::")}
    assert footer["conforms"] is True
    header = json.loads((installed[1] / "live.jsonl").read_text().splitlines()[0])
    assert header["oracle"]["spec"] == "harbor==0.13.1"


@pytest.mark.slow
def test_the_installed_wheel_reproduces_a_case_and_judges_a_reply_with_no_oracle(installed, tmp_path):
    command, work = installed
    recorded = _run(installed, "certify", "-c", "reference", "--oracle", "recorded", "-s", "reward.parse",
                    "--report", "repro.jsonl")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    case_id = sorted(i for i in _case_ids() if i.startswith("reward.parse::"))[0]
    written = _run(installed, "repro", "repro.jsonl", case_id, "--out", "repro")  # its input from the shipped corpus
    assert written.returncode == 0, written.stdout + written.stderr
    (sidecar,) = (work / "repro").glob("*.json")
    requests = sidecar.with_suffix(".jsonl")
    reply = work / "repro-reply.jsonl"
    python = command.parent / "python"
    with requests.open("rb") as stdin, reply.open("wb") as stdout:
        subprocess.run([str(python), "-m", "conformance.reference"], stdin=stdin, stdout=stdout, cwd=work, check=True,
                       timeout=120)
    judged = _run(installed, "check-reply", str(sidecar), str(reply))
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert "the reply conforms" in judged.stdout
