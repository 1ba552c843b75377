"""A certification's plan is decided before anything starts: tested here without a single process."""

from __future__ import annotations

import subprocess

import pytest

from conformance import ORACLE_RELEASE
from conformance.connection.spec import Spec
from conformance.errors import UsageError
from conformance.run.plan import Options, make_plan
from conformance.run.shards import Shard


@pytest.fixture(autouse=True)
def no_process(monkeypatch):
    """Planning starts nothing: any process started here fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was started while planning: {args[:1]}")

    monkeypatch.setattr(subprocess, "Popen", refuse)


def plan(tmp_path, **options):
    return make_plan(Options(**options), tmp_path / "report.jsonl")


def test_specs_are_parsed_once_at_the_edge(tmp_path):
    p = plan(tmp_path, candidate="reference", oracle="recorded", surfaces=["pass_at_k"])
    assert p.options.candidate == Spec("reference", "registered", "reference")
    assert p.options.oracle is None  # recorded: no live oracle
    assert plan(tmp_path, oracle=f"harbor=={ORACLE_RELEASE}", no_generate=True).options.oracle == Spec(
        f"harbor=={ORACLE_RELEASE}", "harbor", ORACLE_RELEASE)


def test_a_recorded_oracle_runs_the_cases_and_no_generator(tmp_path):
    p = plan(tmp_path, oracle="recorded", surfaces=["reason.normalize", "pass_at_k"])
    assert p.cases and {i.case.surface for i in p.cases} == {"reason.normalize", "pass_at_k"}
    assert p.generators == ()
    assert p.header(oracle=_party("recorded"), candidate=_party("reference")).generation is None


def test_a_live_oracle_adds_each_surfaces_generator_with_the_profiles_seed_and_budget(tmp_path):
    p = plan(tmp_path, surfaces=["pass_at_k", "reward.parse"], profile="ci")
    assert set(p.generators) == {"pass_at_k", "reward.parse"}
    assert (p.seed, p.base_seed, p.budget) == (0, 0, 250)  # the ci profile: seed 0, 250 inputs a surface
    head = p.header(oracle=_party("harbor==0.13.1"), candidate=_party("reference"))
    assert head.generation is not None and (head.generation.seed, head.generation.max_examples) == (0, 250)


def test_a_case_glob_selects_by_id_and_generates_nothing(tmp_path):
    p = plan(tmp_path, case_globs=["pass_at_k::*"])
    assert p.cases and all(i.id.startswith("pass_at_k::") for i in p.cases) and p.generators == ()


CORPUS = """surface: reason.normalize
cases:
  - id: reason.normalize::every-release
    description: applies to every release
    spec: s
    input: {value: "x"}
  - id: reason.normalize::from-0-20
    description: applies from 0.20 on
    spec: s
    harbor: ">=0.20"
    input: {value: "y"}
"""


def test_the_oracles_release_decides_which_cases_apply(tmp_path):
    (tmp_path / "cases" / "reason.normalize").mkdir(parents=True)
    (tmp_path / "cases" / "reason.normalize" / "two.yaml").write_text(CORPUS)

    def ids(oracle: str) -> list[str]:
        return [i.id for i in plan(tmp_path, oracle=oracle, no_generate=True, cases_root=tmp_path / "cases").cases]

    assert ids("harbor==0.25.0") == ["reason.normalize::every-release", "reason.normalize::from-0-20"]
    assert ids(f"harbor=={ORACLE_RELEASE}") == ids("recorded") == ["reason.normalize::every-release"]


def test_a_shard_takes_its_cases_a_seed_of_its_own_and_its_share_of_the_budget(tmp_path):
    whole = plan(tmp_path, oracle="recorded")
    parts = [plan(tmp_path, oracle="recorded", shard=Shard(i, 3)) for i in (1, 2, 3)]
    ids = [i.id for part in parts for i in part.cases]
    assert sorted(ids) == sorted(i.id for i in whole.cases) and len(ids) == len(set(ids))
    generated = plan(tmp_path, surfaces=["pass_at_k"], profile="ci", shard=Shard(2, 3))
    assert generated.budget == 84  # ceil(250 / 3)
    assert generated.base_seed == 0 and generated.seed == Shard(2, 3).seed(0) != 0


def test_a_scope_narrows_the_plan_and_an_empty_one_is_refused(tmp_path):
    p = plan(tmp_path, surfaces=["evsys.metric", "pass_at_k"], profile="ci")
    narrowed = p.within({"evsys.metric": {"metric": ["pass@3"]}})
    assert narrowed.cases and all(i.case.input["metric"] == "pass@3" for i in narrowed.cases)
    assert narrowed.generators == ("evsys.metric",)
    assert p.within(None) is p
    with pytest.raises(UsageError, match="nothing selected falls within it"):
        p.within({"reward.parse": {"no-such-key": ["x"]}})


@pytest.mark.parametrize(("options", "said"), [
    ({"surfaces": ["no.such"]}, "unknown surface 'no.such'"),
    ({"no_cases": True, "no_generate": True}, "leave nothing to run"),
    ({"profile": "fast"}, "unknown profile 'fast'"),
    ({"nan_policy": "nope"}, "unknown comparison policy 'nope'"),
    ({"case_globs": ["nothing::matches"]}, "no case selected"),
    ({"oracle": "recorded", "no_cases": True}, "generated inputs need a live oracle"),
    ({"shard": Shard(1, 2), "profile": "dev"}, "needs --seed"),
])
def test_a_run_that_cannot_start_is_refused_before_anything_starts(tmp_path, options, said):
    with pytest.raises(UsageError, match=said) as refused:
        plan(tmp_path, **options)
    assert refused.value.exit_code == 2


def _party(spec: str):
    from conformance.report.model import Party

    return Party(spec=spec)
