"""What the suite leaves out: JSON nested so deep that the interpreter, not harbor, decides the outcome.

Declared once (conformance.core.scope), never generated, refused in a case file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings, target
from hypothesis import strategies as st

from conformance.core import scope, surfaces
from conformance.corpus.cases import check_corpus
from conformance.kit import wire
from conformance.surfaces.reward_parse import VerifierDir
from conformance.surfaces.reward_parse import reference as reward_files
from tests.budget import examples

REPO = Path(__file__).parent.parent
LIMIT = scope.JSON_DEPTH_LIMIT


def _nested(depth: int) -> bytes:
    return b'{"a": ' * (depth // 2) + b"[" * (depth - depth // 2) + b"]" * (depth - depth // 2) + b"}" * (depth // 2)


def test_json_depth_counts_brackets_open_at_once_outside_strings():
    assert scope.json_depth(b"") == scope.json_depth(b"1") == scope.json_depth(b'"[[["') == 0
    assert scope.json_depth(b'{"reward": 1, "b": [1, [2]]}') == 3
    assert scope.json_depth(b"[[]] [[[]]]") == 3
    assert scope.json_depth(_nested(LIMIT)) == LIMIT
    assert scope.json_depth(b'["\\"[[", ["]"]]') == 2  # an escaped quote does not end the string
    assert scope.json_depth(b'["\\\\", [[1]]]') == 3  # an escaped backslash does not escape the quote
    # Not JSON: an upper bound, never less than a parser could reach. Unclosed brackets, bytes that are not UTF-8.
    assert scope.json_depth(b"[" * 2000) == 2000
    assert scope.json_depth(b"\xff[\xc3[\x80]") == 2


def test_out_of_scope_names_the_file_and_the_depth():
    assert scope.out_of_scope({"reward_json": _nested(LIMIT - 1)}) is None
    problem = scope.out_of_scope({"reward_json": _nested(LIMIT)})
    assert problem is not None and problem.startswith(f"input.reward_json nests JSON {LIMIT} levels deep")
    # any *_json field, wherever it is in the input
    deep = _nested(LIMIT + 7)
    assert "input.steps.1.reward_json" in scope.out_of_scope({"steps": [{}, {"reward_json": deep}]})
    job = {"tasks": [{"name": "a", "trials": [{"before_verifier": {"reward_json": deep}}]}]}
    assert "input.tasks.0.trials.0.before_verifier.reward_json" in scope.out_of_scope(job)
    assert "input.result_json" in scope.out_of_scope({"result_json": deep})
    # reward.txt is read by float(), which does not recurse; a uv-script's source is not JSON
    assert scope.out_of_scope({"reward_txt": deep, "scripts": {"m.py": deep}}) is None


def test_the_limit_is_below_every_interpreter_s_and_the_reference_reads_in_scope_json_deep_in_a_stack():
    # Python's recursion limit (1000) bounds json.loads up to 3.11, the harness's interpreter included;
    # the limit leaves half of it to the frames already on the stack.
    assert LIMIT * 2 <= sys.getrecursionlimit()

    def deep_in_the_stack(frames: int):
        if frames:
            return deep_in_the_stack(frames - 1)
        return reward_files.parse({"reward_json": b"[" * (LIMIT - 1) + b"]" * (LIMIT - 1)})

    with pytest.raises(reward_files.ValidationError):  # harbor's answer, not RecursionError
        deep_in_the_stack(300)


def _documented_interpreter(harbor_env) -> None:
    version = subprocess.run([str(harbor_env.python), "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    if version != "3.12.1":
        pytest.skip(f"the oracle runs CPython {version}: the documented depths are 3.12.1's")


def test_the_oracle_decides_by_harbor_below_the_limit_and_by_its_interpreter_far_above(live_oracle, harbor_env):
    """The depths docs/generators.md states, measured on the oracle: harbor 0.13.1 on CPython 3.12.1."""
    def raised(depth: int) -> str:
        reply = live_oracle.connection.run(1, "reward.parse", wire.encode({"reward_json": _nested(depth)}))
        return reply.value

    assert raised(LIMIT - 1) == raised(1000) == "ValidationError"
    _documented_interpreter(harbor_env)
    assert raised(1490) == "ValidationError" and raised(1491) == "RecursionError"


# -- never generated ------------------------------------------------------------------------------------------


def _deepest(value) -> int:
    return max((scope.json_depth(data) for _, data in scope.json_files(value)), default=0)


@pytest.mark.property  # a property test inside: its count of examples is the budget's (tests/budget.py)
@pytest.mark.parametrize("name", surfaces.with_generators())
def test_no_generator_comes_near_the_limit_even_steered_toward_depth(name):
    deepest = [0]

    @settings(max_examples=examples(150), database=None, deadline=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.generate, Phase.target])
    @given(surfaces.get(name).inputs())
    def check(value):
        depth = _deepest(value)
        target(float(depth))
        deepest[0] = max(deepest[0], depth)
        assert scope.out_of_scope(value) is None

    check()
    assert deepest[0] < LIMIT // 10, f"{name}: JSON nested {deepest[0]} deep"


def sometimes_too_deep() -> st.SearchStrategy[dict]:
    """A strategy that draws out-of-scope inputs: half of its reward.json files nest past the limit."""
    return st.builds(lambda depth: {"reward_json": b"[" * depth + b"]" * depth}, st.sampled_from([1, 2, LIMIT, 4000]))


def test_a_surface_s_inputs_are_in_scope_whatever_its_strategy_draws():
    raw = surfaces.Surface(name="x", summary="", input_model=VerifierDir, output="", spec="",
                           strategy="tests.test_input_scope:sometimes_too_deep")
    drawn: list[dict] = []

    @settings(max_examples=100, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(raw.inputs())
    def check(value):
        drawn.append(value)
        assert scope.out_of_scope(value) is None

    check()
    assert {len(value["reward_json"]) for value in drawn} == {2, 4}
    # while the strategy itself draws them
    assert scope.out_of_scope(find(sometimes_too_deep(), lambda value: scope.out_of_scope(value) is not None))


# -- refused in a case file ---------------------------------------------------------------------------------


def test_a_case_holding_json_past_the_limit_is_refused_with_its_file_and_line(tmp_path):
    root = tmp_path / "cases"
    (root / "multi_step.reward").mkdir(parents=True)
    (root / "multi_step.reward" / "deep.json").write_bytes(_nested(LIMIT + 1))
    (root / "multi_step.reward" / "shallow.json").write_bytes(_nested(LIMIT - 1))
    case = root / "multi_step.reward" / "deep.yaml"
    case.write_text(
        "surface: multi_step.reward\n"
        "cases:\n"
        "  - id: multi_step.reward::in-scope\n"
        "    description: reward.json nested just below the limit\n"
        "    spec: seed-003 §5\n"
        "    input: {strategy: mean, steps: [{reward_json: !file shallow.json}]}\n"
        "  - id: multi_step.reward::too-deep\n"
        "    description: reward.json nested past the limit\n"
        "    spec: seed-003 §5\n"
        "    input: {strategy: mean, steps: [{reward_txt: !bytes '1'}, {reward_json: !file deep.json}]}\n"
    )
    errors = check_corpus(root)[1]
    assert [(e.line, e.case_id) for e in errors] == [(7, "multi_step.reward::too-deep")]
    assert errors[0].message.startswith(f"input.steps.1.reward_json nests JSON {LIMIT + 1} levels deep: out of scope")

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    checked = subprocess.run([sys.executable, "-m", "conformance.cli.app", "cases", "check", str(root)],
                             capture_output=True, text=True, env=env, timeout=120)
    assert checked.returncode == 2
    assert f"{case}:7: [multi_step.reward::too-deep] input.steps.1.reward_json nests JSON" in checked.stdout + \
        checked.stderr


def test_the_shipped_corpus_is_in_scope():
    loaded, errors = check_corpus(REPO / "cases")
    assert errors == []
    assert max(_deepest(item.case.input) for item in loaded) < LIMIT


def test_the_measured_depths_need_no_candidate(harbor_env):
    """harbor's own json.loads, on the oracle's interpreter, bare: where the C recursion limit stops it."""
    probe = ("import json\n"
             "def fails(n):\n"
             "    try: json.loads('[' * n + ']' * n); return False\n"
             "    except RecursionError: return True\n"
             "print(json.dumps([fails(1497), fails(1498)]))\n")
    _documented_interpreter(harbor_env)
    done = subprocess.run([str(harbor_env.python), "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [False, True]
