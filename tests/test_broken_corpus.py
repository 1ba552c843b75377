"""A corpus of broken case files (tests/broken_cases/): each problem is reported where it is.

The table says, by hand, what `conformance cases check` must say about each
file: the line, the case id (None: no case can be named) and part of the message.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.corpus.cases import check_corpus

ROOT = Path(__file__).parent / "broken_cases"
REPO = Path(__file__).parent.parent
MARKER = "broken-corpus-marker"  # what reward.parse/python_tag.yaml would create if its tag were honoured

EXPECTED = [
    ("reward.parse/bad_syntax.yaml", 5, None, "bad YAML: mapping values are not allowed"),
    ("reward.parse/unknown_key.yaml", 4, "reward.parse::unknown-key", "cases.0.colour: Extra inputs are not permitted"),
    ("reward.parse/plain_float.yaml", 9, "reward.parse::plain-float", "plain '1.0' would be a float"),
    ("reward.parse/duplicate_in_file.yaml", 8, "reward.parse::twice-in-a-file",
     "duplicate id (first at "),
    ("reward.parse/duplicate_across_b.yaml", 8, "reward.parse::in-two-files",
     "duplicate_across_a.yaml:4)"),
    ("reward.parse/bad_input.yaml", 4, "reward.parse::string-not-bytes",
     "input.reward_txt: Input should be a valid bytes"),
    ("reward.parse/bad_id.yaml", 4, "reward.parse::Txt-One", "cases.0.id: String should match pattern"),
    ("reward.parse/other_surface_prefix.yaml", 4, "metric.compute::in-a-reward-parse-file",
     "id must start with reward.parse::"),
    ("reward.parse/expect_both.yaml", 4, "reward.parse::expect-both",
     "expect takes exactly one of 'output' and 'raised'"),
    ("reward.parse/bad_harbor.yaml", 4, "reward.parse::bad-harbor", "cases.0.harbor: Value error, Invalid specifier"),
    ("reward.parse/python_tag.yaml", 7, "reward.parse::python-tag",
     "tag !!python/object/apply:os.system is not allowed in a case file"),
    ("reward.parse/alias.yaml", 10, "reward.parse::alias", "anchors and aliases (&name, *name) are not allowed"),
    ("reward.parse/json_too_deep.yaml", 4, "reward.parse::json-too-deep",
     "input.reward_json nests JSON 500 levels deep: out of scope from 500 levels on"),
    ("reward.parse/link_out.yaml", 1, None, "leads out of the corpus (through a symbolic link, to "),
    ("reward.nope/unknown_surface.yaml", 1, None, "unknown surface 'reward.nope'"),
    ("metric.compute/file_escape.yaml", 7, "metric.compute::file-escape",
     "!file '../outside.py' must be a relative path inside the case file's folder"),
    ("metric.compute/file_link_escape.yaml", 7, "metric.compute::file-link-escape",
     "!file 'readme_link' leads out of the corpus"),
    ("metric.compute/script_path_absolute.yaml", 4, "metric.compute::script-path-absolute",
     "input.metric: Value error, kwargs.script_path '/tmp/m.py' must be a relative path"),
    ("job.result/script_path_dotdot.yaml", 4, "job.result::script-path-dotdot",
     "input.datasets.0.metrics.1: Value error, kwargs.script_path '../m.py' must be a relative path"),
]
# Clean on its own: duplicate_across_b.yaml reuses its id, and the error is reported there.
CLEAN = {"reward.parse/duplicate_across_a.yaml"}


@pytest.fixture(scope="module")
def errors():
    return check_corpus(ROOT)[1]


@pytest.mark.parametrize(("name", "line", "case_id", "text"), EXPECTED, ids=[row[0] for row in EXPECTED])
def test_each_broken_file_reports_its_problem(errors, name, line, case_id, text):
    found = [e for e in errors if e.file == ROOT / name]
    assert [(e.line, e.case_id) for e in found] == [(line, case_id)], "\n".join(map(str, found))
    assert text in found[0].message
    where = f"{ROOT / name}:{line}: "
    assert str(found[0]).startswith(where + (f"[{case_id}] " if case_id else ""))


def test_exactly_the_broken_files_have_errors(errors):
    assert sorted(str(e.file.relative_to(ROOT)) for e in errors) == sorted(name for name, *_ in EXPECTED)


def test_every_file_is_listed_and_says_what_is_wrong():
    files = {str(p.relative_to(ROOT)) for p in ROOT.glob("*/*.yaml")}
    assert files == {name for name, *_ in EXPECTED} | CLEAN
    for name in files:
        first = (ROOT / name).read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# ") and len(first) > 20, name


def test_loading_the_broken_corpus_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    check_corpus(ROOT)
    assert not (tmp_path / MARKER).exists()


def test_certify_refuses_the_broken_corpus(tmp_path):
    report = tmp_path / "report.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli.app", "certify", "--candidate", "reference", "--oracle", "recorded",
         "--cases", str(ROOT), "--report", str(report)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    for name, line, case_id, _ in EXPECTED:
        where = f"{ROOT / name}:{line}: " + (f"[{case_id}] " if case_id else "")
        assert where in proc.stderr, where
    assert not report.exists()
    assert not (tmp_path / MARKER).exists()
