"""Coverage of harbor's own code by the oracle: the instrumented environment,
the targets found in the installed wheel, one measured request, the declarations.

Expected line numbers are found here by plain text search in the wheel's
source, independently of the ``ast`` machinery under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conformance.connection.base import ConnectError
from conformance.connection.connectors import connect
from conformance.connection.harbor import harbor_argv
from conformance.core import surfaces
from conformance.kit import wire
from conformance.oracle import coverage as oracle_coverage
from conformance.oracle import environments as oracle_env
from conformance.oracle.coverage import Never, Span, Target
from conformance.run import coverage as coverage_run

HARBOR = "0.13.1"
VERIFIER = "harbor/verifier/verifier.py"


DOWNSTREAM = {"outcome.summary", "reason.normalize", "evsys.metric"}


def _source(file: str) -> list[str]:
    harbor_dir = oracle_env.ensure(HARBOR, coverage=True).package_dir("harbor")
    return (harbor_dir.parent / file).read_text(encoding="utf-8").splitlines()


def _line(lines: list[str], text: str) -> int:
    """The 1-based number of the only line holding ``text``."""
    found = [n for n, line in enumerate(lines, 1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


def _next_line(lines: list[str], text: str, after: int) -> int:
    return next(n for n, line in enumerate(lines, 1) if n > after and text in line)


@pytest.fixture(scope="session")
def spans(coverage_env):
    return {(s.target.file, s.target.name): s for s in oracle_coverage.resolve(HARBOR)}


@pytest.fixture(scope="session")
def one_txt_reward(coverage_env):
    """An instrumented oracle that answered exactly one request: reward.parse of reward.txt holding "1"."""
    replies = []

    def run(connection):
        replies.append(connection.run(1, "reward.parse", wire.encode({"reward_txt": b"1"})))

    return replies, coverage_run.measure(run, harbor_version=HARBOR)


def _target(result, name):
    (found,) = [t for t in result.targets if t.name == name]
    return found


@pytest.mark.usefixtures("coverage_env")
def test_the_coverage_environment_is_a_separate_one():
    plain = oracle_env.ensure(HARBOR)
    instrumented = oracle_env.ensure(HARBOR, coverage=True)
    assert instrumented.root != plain.root
    assert instrumented.root.name.startswith(f"harbor-{HARBOR}-") and instrumented.root.name.endswith("-coverage")
    marker = instrumented.root / "conformance-env.json"
    stamp = marker.stat().st_mtime_ns
    assert oracle_env.ensure(HARBOR, coverage=True).root == instrumented.root
    assert marker.stat().st_mtime_ns == stamp  # reused, not rebuilt

    def imports(env, module):
        return subprocess.run([str(env.python), "-I", "-c", f"import {module}"], capture_output=True).returncode == 0

    assert imports(instrumented, "coverage") and imports(instrumented, "harbor")
    assert not imports(plain, "coverage")  # the oracle itself is never touched


def test_the_coverage_lock_pins_coverage_with_hashes():
    text = oracle_env.coverage_lock_path().read_text()
    requirements = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    assert [r.split("==")[0] for r in requirements] == ["coverage"]
    assert "--hash=sha256:" in text and "uv pip compile" in text  # says how it is regenerated


@pytest.mark.usefixtures("coverage_env")
def test_only_the_harbor_oracle_runs_under_coverage(tmp_path):
    with pytest.raises(ConnectError):
        connect("reference", coverage_data=tmp_path / "data")
    plain = harbor_argv(HARBOR)
    measured = harbor_argv(HARBOR, coverage_data=tmp_path / "data")
    assert "coverage" not in " ".join(plain)
    assert measured[1:7] == ["-I", "-X", "utf8", "-m", "coverage", "run"] and "--branch" in measured
    assert f"--data-file={(tmp_path / 'data').resolve()}" in measured
    assert measured[-2:] == plain[-2:]  # the same adapter and kit


def test_a_method_target_is_its_body(spans):
    lines = _source(VERIFIER)
    span = spans[(VERIFIER, "Verifier._parse_reward_text")]
    assert span.first == _line(lines, "def _parse_reward_text(") + 1
    following = _line(lines, "def _parse_reward_json(")
    assert span.last == max(n for n in range(1, following) if lines[n - 1].strip())


def test_the_verify_tail_starts_at_the_reward_file_choice(spans):
    lines = _source(VERIFIER)
    span = spans[(VERIFIER, "Verifier.verify")]
    assert span.first == _line(lines, "if self.trial_paths.reward_json_path.exists():")
    assert span.last == _line(lines, "return VerifierResult(rewards=rewards)")
    assert _line(lines, "async def verify(self)") < _line(lines, ".upload_dir(") < span.first
    assert not any(span.contains(n) for n, text in enumerate(lines, 1) if "environment." in text)


def test_one_txt_reward_runs_the_success_path_and_misses_the_empty_file(one_txt_reward):
    replies, result = one_txt_reward
    assert [(r.kind, r.value) for r in replies] == [("output", {"reward": 1.0})]
    assert result.lost_processes == 0
    lines = _source(VERIFIER)
    parse = _target(result, "Verifier._parse_reward_text")
    size_test = _line(lines, "if self.trial_paths.reward_text_path.stat().st_size == 0:")
    empty = _next_line(lines, "raise RewardFileEmptyError(", after=size_test)
    success = _line(lines, 'return {"reward": float(self.trial_paths.reward_text_path.read_text())}')
    assert parse.missing_branches == [(size_test, empty)]
    assert empty in parse.missing_lines and success not in parse.missing_lines
    assert (parse.taken, parse.branches) == (1, 2)  # the size test went one of its two ways
    assert not parse.complete and not result.complete
    # Only what was called counts: pass_at_k's module was imported, none of it ran.
    assert all(t.executed == 0 and t.taken == 0 for t in result.targets if t.surface == "pass_at_k")
    assert _target(result, "Verifier._parse_reward_json").executed == 0
    (as_json,) = [t for t in result.to_json()["targets"] if t["target"] == "Verifier._parse_reward_text"]
    assert as_json["missing_branches"] == [f"{size_test}->{empty}"] and as_json["complete"] is False


def test_unreachable_declarations_point_at_if_lines_that_exist(spans, one_txt_reward):
    _, result = one_txt_reward
    declared = [(span, never) for span in spans.values() for never in span.target.never]
    # Five that harbor's data flow never takes, twenty-six the job pipeline never takes as job.result runs it
    # (its live progress and its resume included), nine that loading a result.json never takes.
    assert len(declared) == 40
    assert {never.way for _, never in declared} == {True, False}
    for span, never in declared:
        lines = _source(span.target.file)
        # the anchor inside this target (the same text may stand in another function of the file)
        (line,) = [n for n in range(span.first, span.last + 1) if oracle_coverage.holds_anchor(lines[n - 1],
                                                                                                never.anchor)]
        assert lines[line - 1].strip().startswith(("if ", "elif ")) and never.reason
        (target,) = [t for t in result.targets if t.file == span.target.file and t.name == span.target.label]
        if not target.imported:
            # harbor imports the module lazily and this run never needed it: reported, not complete
            assert not target.complete and target.executed == 0
            continue
        (resolved,) = [u for u in target.unreachable if u.never == never]
        assert resolved.line == line
        body = span.tests[line][0]  # the body's first statement, below a test written over several lines
        indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
        assert len(lines[body - 1]) - len(lines[body - 1].lstrip()) > indent
        if never.way:
            # The True way: the arc into the body, the indented line right below.
            assert resolved.arcs == {(line, body)} and body in resolved.lines
        else:
            # The False way: out of the test, anywhere but into its body.
            assert resolved.arcs and all(start == line and end != body for start, end in resolved.arcs)
    assert all(t.refuted == [] for t in result.targets)


def test_an_indented_anchor_holds_its_own_depth_only():
    lines = ("        if x in names:", "            if x in names:")
    assert [oracle_coverage.holds_anchor(line, "if x in names:") for line in lines] == [True, True]
    assert [oracle_coverage.holds_anchor(line, "        if x in names:") for line in lines] == [True, False]
    assert [oracle_coverage.holds_anchor(line, "            if x in names:") for line in lines] == [False, True]


def test_a_declared_unreachable_branch_that_runs_is_reported_not_hidden():
    # A made-up target: `if x:` (line 2) declared never true, yet measured taken.
    span = Span("s", Target("f.py", "f", never=(Never("if x:", True, "made up"),)), 2, 4,
                ("def f(x):", "    if x:", "        return 1", "    return 2"), {2: (3, 3, None, None)})
    ran = {"executed_lines": [2, 3, 4], "missing_lines": [], "executed_branches": [[2, 3], [2, 4]],
           "missing_branches": []}
    assert oracle_coverage._target_coverage(span, ran).refuted == ["2->3", "line 3"]
    idle = {"executed_lines": [2, 4], "missing_lines": [3], "executed_branches": [[2, 4]],
            "missing_branches": [[2, 3]]}
    coverage = oracle_coverage._target_coverage(span, idle)
    assert coverage.complete and coverage.refuted == []
    assert (coverage.executed, coverage.statements, coverage.taken, coverage.branches) == (2, 3, 1, 2)


@pytest.mark.slow
@pytest.mark.usefixtures("coverage_env")
def test_the_cases_alone_and_the_ci_profile_alone_each_reach_all_reachable_code(tmp_path):
    # The corpus and the generators are each held to the target on their own: a case
    # deleted or a strategy narrowed shows up here as a missing line or branch.
    figures = tmp_path / "coverage.json"
    proc = subprocess.run([sys.executable, "-m", "conformance.cli.app", "coverage", "--json", str(figures)],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    data = json.loads(figures.read_text())
    assert sorted(data) == ["cases", "ci"]
    for source, result in data.items():
        assert result["complete"] is True, source
        # The downstream surfaces' oracles are transcriptions, not harbor's code (outcome.summary's
        # chained jobs run harbor through job.result's targets).
        assert {t["surface"] for t in result["targets"]} == set(surfaces.SURFACES) - DOWNSTREAM
        for target in result["targets"]:
            assert target["missing_lines"] == [] and target["missing_branches"] == [], (source, target)
            assert target["statements"]["covered"] > 0, (source, target["target"])
