"""The generators: wrong candidates are caught by generated inputs alone, shrunk, reproducible, promotable."""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings

from conformance.connection.connectors import connect
from conformance.connection.in_process import InProcess
from conformance.core import surfaces
from conformance.corpus import cases as case_corpus
from conformance.corpus.yaml_values import CaseLoader, render
from conformance.kit import wire
from conformance.kit.candidate import Candidate
from conformance.reference import candidate as reference
from conformance.report.reader import read
from conformance.run import generate, shapes
from conformance.run.runner import run_cases
from conformance.surfaces.metric_compute import reference as metrics
from conformance.surfaces.reward_parse import reference as reward_files
from tests import wrong_candidates

CI = generate.PROFILES["ci"]


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "conformance.cli.app", *args], capture_output=True, text=True, cwd=cwd)


def _same(a, b) -> bool:
    """Equal, with floats compared by their bits (so -0.0 and NaN payloads count)."""
    if isinstance(a, float) and isinstance(b, float):
        return wire.float_to_bits(a) == wire.float_to_bits(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b


# -- the strategies ---------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(surfaces.SURFACES))
def test_generated_inputs_are_valid_and_survive_the_wire_and_a_case_file(name):
    surface = surfaces.get(name)

    @settings(max_examples=150, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(surface.inputs())
    def check(value):
        surface.validate_input(value)
        assert _same(wire.decode(json.loads(json.dumps(wire.encode(value)))), value)
        # promote writes inputs with render(); the case loader must read back the same value
        assert _same(CaseLoader(f"x: {render(value)}\n").get_single_data()["x"], value)

    check()


# -- wrong candidates, generated inputs only -----------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(wrong_candidates.CAUGHT_AS))
@pytest.mark.usefixtures("harbor_env")
def test_generators_alone_catch_each_wrong_candidate_within_the_ci_budget(name, tmp_path):
    surface, expected_class = wrong_candidates.CAUGHT_AS[name]
    report = tmp_path / "report.jsonl"
    proc = _cli("certify", "--candidate", f"tests.wrong_candidates:{name}", "--no-cases", "--profile", "ci",
                "--surface", surface, "--report", str(report))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = read(report)
    assert data.header.generation.profile == "ci"
    assert data.header.generation.max_examples == CI.max_examples
    assert [line.inputs_run for line in data.generated] and not data.generated[0].error
    findings = [r for r in data.records if r.origin == "generated"]
    assert findings, f"{name} went unnoticed by the generators"
    assert {r.outcome for r in findings} == {"fail"}
    classes = {m.cls for r in findings for m in r.mismatches}
    assert expected_class in classes, f"{name}: generators caught it as {sorted(classes)}"


@pytest.mark.slow
def test_the_reference_agrees_with_the_oracle_on_the_ci_profile(live_oracle):
    candidate = connect("reference")
    for name, surface in surfaces.SURFACES.items():
        if surface.strategy:
            result = generate.generate(name, candidate, live_oracle, profile=CI, seed=CI.fixed_seed)
            assert result.conforms, [(r.id, r.input, r.mismatches, r.detail) for r in result.findings] + [result.error]
            assert result.inputs_run >= CI.max_examples


# -- shrinking keeps the class ------------------------------------------------------------


def _two_bugs(request: dict) -> dict:
    # Bug A: a NaN anywhere gives a string instead of the mean (class "type").
    # Bug B: three or more trials put the mean one ulp off (class "ulp").
    values = [v for r in request["rewards"] if r for v in r.values() if isinstance(v, float)]
    result = metrics.compute(request)
    if any(math.isnan(v) for v in values):
        return {key: "nan" for key in result}
    if len(request["rewards"]) >= 3:
        return {key: math.nextafter(v, math.inf) if isinstance(v, float) and math.isfinite(v) else v
                for key, v in result.items()}
    return result


two_bugs = reference.derive("two-bugs", **{"metric.compute": _two_bugs})


@pytest.mark.slow
def test_each_divergence_shrinks_within_its_own_mismatch_class(live_oracle):
    # A shrinker free to change the class would fold one bug into the other (a NaN
    # list shrinks below three trials, an ulp list gains a NaN); both must survive.
    result = generate.generate("metric.compute", connect("tests.test_generate:two_bugs"), live_oracle,
                               profile=CI, seed=3, max_examples=400)
    kinds = {generate.kind_of(r): r for r in result.findings}
    assert ("fail", "type") in kinds and ("fail", "ulp") in kinds, sorted(kinds)
    for kind, record in kinds.items():
        assert generate.kind_of(record) == kind
        assert record.origin == "generated" and record.input is not None
    ulp = kinds[("fail", "ulp")].decoded_input
    assert len(ulp["rewards"]) == 3  # minimal: exactly the trigger


@pytest.mark.slow
def test_a_minimal_finding_is_small(live_oracle):
    result = generate.generate("reward.parse", connect("tests.wrong_candidates:negative_zero_lost"), live_oracle,
                               profile=CI, seed=CI.fixed_seed)
    findings = [r for r in result.findings if generate.kind_of(r) == ("fail", "sign-of-zero")]
    # One per shape of input (reward.txt alone; reward.json alone, holding a number or a numeric string: two
    # kinds of value, see shapes.py), each shrunk to a single short file.
    inputs = [f.decoded_input for f in findings]
    assert findings and len({shapes.shape_of("reward.parse", found) for found in inputs}) == len(findings), inputs
    for finding in findings:
        ((name, data),) = finding.decoded_input.items()
        assert len(data) <= (4 if name == "reward_txt" else 20), finding.decoded_input


@pytest.mark.slow
def test_the_same_profile_and_seed_repeat_the_run(live_oracle):
    def run():
        result = generate.generate("reward.parse", connect("tests.wrong_candidates:txt_before_json"), live_oracle,
                                   profile=CI, seed=7, max_examples=60)
        return result.inputs_run, [(r.id, r.outcome) for r in result.findings]

    first = run()
    assert first[1] and run() == first


@pytest.mark.slow
def test_a_finding_saved_in_an_example_database_replays_first_on_any_seed(live_oracle, tmp_path):
    from conformance.run.examples import open_database

    def run(spec: str, seed: int, max_examples: int | None = None, database=None):
        return generate.generate("metric.compute", connect(spec), live_oracle, profile=CI, seed=seed,
                                 max_examples=max_examples, database=database)

    database = open_database(tmp_path / "examples")
    found = run("tests.wrong_candidates:sum_naive", CI.fixed_seed, database=database)
    assert found.findings
    # One input from another seed: without the database it finds nothing, with it a saved finding.
    assert not run("tests.wrong_candidates:sum_naive", 12345, 1).findings
    replayed = run("tests.wrong_candidates:sum_naive", 12345, 1, database)
    assert {r.id for r in replayed.findings} & {r.id for r in found.findings}
    # To a candidate without the bug the saved inputs are inputs like any other.
    assert run("reference", 12345, 1, database).conforms


def test_each_surface_keeps_its_own_examples_and_a_later_round_deletes_none():
    from hypothesis.database import InMemoryExampleDatabase

    from conformance.run.examples import SurfaceDatabase

    shared = InMemoryExampleDatabase()
    SurfaceDatabase(shared, "metric.compute").save(b"k", b"v")
    assert list(SurfaceDatabase(shared, "metric.compute").fetch(b"k")) == [b"v"]
    assert list(SurfaceDatabase(shared, "pass_at_k").fetch(b"k")) == []
    later = SurfaceDatabase(shared, "metric.compute", keep=True)
    assert list(later.fetch(b"k")) == []  # a later round replays nothing
    later.delete(b"k", b"v")
    later.move(b"k", b"k.secondary", b"v")
    later.save(b"k", b"w")  # but saves what it finds
    assert sorted(SurfaceDatabase(shared, "metric.compute").fetch(b"k")) == [b"v", b"w"]


def test_an_example_database_that_is_a_file_is_a_usage_error(tmp_path):
    from conformance.errors import UsageError
    from conformance.run.examples import open_database

    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        open_database(tmp_path / "f")


def test_an_example_database_folder_is_made_when_opened(tmp_path):
    """A run that saves nothing (a conforming candidate) still leaves the folder its report names, for a replay."""
    from conformance.errors import UsageError
    from conformance.run.examples import open_database

    open_database(tmp_path / "runs" / "examples")
    assert (tmp_path / "runs" / "examples").is_dir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="file/examples"):
        open_database(tmp_path / "file" / "examples")


# -- a misbehaving candidate is an outcome, not the end of the run ---------------------


flaky = Candidate("flaky", "0")


@flaky.surface("pass_at_k")
def _random_answer(request: dict) -> dict:
    return {} if random.random() < 0.5 else {"x": {2: 1.0}}


@pytest.mark.slow
def test_a_nondeterministic_candidate_is_reported_not_raised(live_oracle):
    result = generate.generate("pass_at_k", connect("tests.test_generate:flaky"), live_oracle,
                               profile=CI, seed=1, max_examples=30)
    assert not result.conforms
    assert result.findings or result.error


def test_generated_inputs_need_a_live_oracle():
    from conformance.errors import UsageError
    from conformance.run.runner import Oracle

    with pytest.raises(UsageError, match="live oracle"):
        generate.generate("pass_at_k", connect("reference"), Oracle(None), profile=CI, seed=0)


# -- promote ----------------------------------------------------------------------------


@pytest.mark.slow
def test_promote_writes_cases_that_hold_the_oracle_result(tmp_path, live_oracle):
    root = tmp_path / "cases"
    shutil.copytree(case_corpus.default_root(), root)
    report = tmp_path / "report.jsonl"
    found = _cli("certify", "-c", "tests.wrong_candidates:empty_by_strip", "--no-cases", "--profile", "ci",
                 "--surface", "reward.parse", "--report", str(report), "--cases", str(root))
    assert found.returncode == 1, found.stderr
    findings = [r for r in read(report).records if r.origin == "generated"]
    assert findings

    first = _cli("promote", str(report), "--cases", str(root))
    assert first.returncode == 0, first.stderr
    target = root / "reward.parse" / "generated.yaml"
    loaded, errors = case_corpus.load_file(target)
    assert errors == []
    assert sorted(c.id for c in loaded) == sorted(r.id for r in findings)

    # Promoting again changes nothing.
    before = target.read_text()
    again = _cli("promote", str(report), "--cases", str(root))
    assert again.returncode == 0 and "already in the corpus" in again.stdout
    assert target.read_text() == before

    # The expectation is the oracle's: the reference passes the new cases, the wrong candidate does not,
    # and the live oracle agrees with what was recorded.
    by_spec = {}
    for spec in ("reference", "tests.wrong_candidates:empty_by_strip"):
        by_spec[spec] = list(run_cases(loaded, connect(spec), live_oracle))
    assert {r.outcome for r in by_spec["reference"]} == {"pass"}
    assert {r.recording for r in by_spec["reference"]} == {"agrees"}
    assert {r.outcome for r in by_spec["tests.wrong_candidates:empty_by_strip"]} == {"fail"}


@pytest.mark.slow
def test_promote_without_findings_says_so(tmp_path):
    report = tmp_path / "ok.jsonl"
    ok = _cli("certify", "--oracle", "recorded", "--surface", "pass_at_k", "--report", str(report))
    assert ok.returncode == 0, ok.stderr
    (tmp_path / "cases").mkdir()  # an empty corpus: --cases names a folder that is there
    out = _cli("promote", str(report), "--cases", str(tmp_path / "cases"))
    assert out.returncode == 0 and "no generated divergences" in out.stdout
    assert read(report).header.generation is None  # a recorded oracle cannot generate


@pytest.mark.slow
@pytest.mark.usefixtures("harbor_env")
def test_profile_and_seed_are_checked_and_recorded(tmp_path):
    bad = _cli("certify", "--profile", "nightly", "--oracle", "recorded")
    assert bad.returncode == 2 and "unknown profile" in bad.stderr
    nothing = _cli("certify", "--no-cases", "--no-generate", "--oracle", "recorded")
    assert nothing.returncode == 2
    report = tmp_path / "r.jsonl"
    run = _cli("certify", "--no-cases", "--profile", "dev", "--seed", "12345", "--max-examples", "5",
               "--surface", "pass_at_k", "--report", str(report))
    assert run.returncode == 0, run.stdout + run.stderr
    data = read(report)
    assert data.header.generation.profile == "dev" and data.header.generation.seed == 12345
    assert data.generated[0].seed == 12345 and data.generated[0].inputs_run >= 5
    assert data.footer.conforms is True
    summary = _cli("summary", str(report))
    assert summary.returncode == 0 and "generated inputs" in summary.stdout


def test_a_seed_draws_the_same_inputs_whatever_modules_are_loaded(tmp_path, live_oracle, monkeypatch):
    # Hypothesis mixes literals from locally imported modules into its draws; an
    # in-process candidate's module must not change what a seed generates.
    seen: list = []
    recorder = reference.derive("recorder", **{"reward.parse": lambda d: seen.append(d) or reward_files.parse(d)})

    def inputs():
        seen.clear()
        generate.generate("reward.parse", InProcess("recorder", recorder), live_oracle,
                          profile=CI, seed=5, max_examples=60)
        return list(seen)

    before = inputs()
    module = tmp_path / "candidate_with_literals.py"
    # a module with a few literals (Hypothesis skips modules with very many)
    module.write_text('WORDS = ["0.5e-3", "NaN", "-0", "reward", "1_0", " 1 "]\nNUMBERS = [12345, 99999, 2**70]\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("candidate_with_literals")
    assert inputs() == before


@pytest.mark.slow
@pytest.mark.usefixtures("harbor_env")
def test_a_skipped_generated_input_is_a_skip_not_a_divergence(tmp_path):
    """A candidate that declines a surface: its generated inputs are counted as skipped, nothing is shrunk or
    promoted, and the run does not conform (a skip counts against conformance)."""
    report = tmp_path / "skips.jsonl"
    done = _cli("certify", "-c", "tests.test_cli:one_surface_only", "--no-cases", "--profile", "ci",
                "--max-examples", "15", "--surface", "evsys.metric", "--report", str(report), "--progress", "lines")
    assert done.returncode == 1, done.stderr
    data = read(report)
    (line,) = data.generated
    assert line.divergences == [] and line.error is None
    assert line.skipped == line.inputs_run == 15
    assert line.skip_reason == "not implemented yet"
    assert [r for r in data.records if r.origin == "generated"] == []
    assert data.footer.conforms is False and data.footer.findings == 0
    assert "evsys.metric: 15 generated input(s), 0 divergence(s), 15 skipped: not implemented yet" in done.stderr
    (tmp_path / "cases").mkdir()  # an empty corpus: --cases names a folder that is there
    promoted = _cli("promote", str(report), "--cases", str(tmp_path / "cases"))
    assert promoted.returncode == 0 and "no generated divergences" in promoted.stdout
