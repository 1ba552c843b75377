"""Input features: every surface's strategy reaches what it declares, a run counts it, a narrowed strategy fails ci
(and only warns under dev), the counts survive a merge, and --observations writes them for Tyche."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from statistics import NormalDist

import pytest
from hypothesis import strategies as st
from typer.testing import CliRunner

from conformance.cli.app import app
from conformance.connection.connectors import connect, parse
from conformance.connection.in_process import InProcess
from conformance.connection.spec import Spec
from conformance.core import surfaces
from conformance.core.features import Feature, Gate, chance_of_at_most
from conformance.core.outcomes import Outcome
from conformance.corpus import cases as case_corpus
from conformance.kit.candidate import Candidate
from conformance.report.markdown import summary
from conformance.report.model import CaseLine, GeneratedLine
from conformance.report.reader import read
from conformance.report.writer import Tally
from conformance.run import generate
from conformance.run.observations import file_for
from conformance.run.runner import Oracle
from conformance.run.shards import MergedGenerators
from conformance.surfaces.pass_at_k import strategy as pass_at_k_strategy

CI = generate.PROFILES["ci"]
NAMES = surfaces.with_generators()


def _constant() -> InProcess:
    """A candidate answering null on every surface: as oracle and candidate at once, every input passes, so a
    generator draws exactly what a conforming run draws, without the cost of computing any answer."""
    candidate = Candidate("constant", "1")
    for name in surfaces.SURFACES:
        candidate.surface(name)(lambda value: None)
    return InProcess(Spec("constant", "python", "tests:constant"), candidate)


def _drawn(name: str, profile: generate.Profile, seed: int, **options) -> generate.GenerationResult:
    with Oracle(_constant()) as oracle:
        result = generate.generate(name, _constant(), oracle, profile=profile, seed=seed, **options)
    assert result.error is None and not result.findings
    return result


def _below(result: generate.GenerationResult, profile: str) -> dict[str, tuple[float, float]]:
    """Each feature whose share is below its minimum under ``profile``: (share, minimum)."""
    return {f.name: (result.features[f.name] / result.drawn, f.minimum[profile])
            for f in surfaces.get(result.surface).features
            if profile in f.minimum and result.features[f.name] < f.minimum[profile] * result.drawn}


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_ci_budget_and_seed_reach_every_feature_at_its_minimum(name):
    result = _drawn(name, CI, CI.fixed_seed or 0)
    assert result.drawn == generate.surface_budget(CI, name)
    assert _below(result, "ci") == {}
    line = result.line()
    assert line.feature_gate is Gate.FAIL and line.shortfalls() == []
    assert set(line.features) == {f.name for f in surfaces.get(name).features}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [7, 1234, 99991, 100, 129])
@pytest.mark.parametrize("name", NAMES)
def test_any_seed_reaches_every_ci_minimum_with_the_ci_budget(name, seed):
    assert _below(_drawn(name, CI, seed), "ci") == {}


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_dev_budget_mostly_reaches_every_dev_minimum(name):
    # dev only warns: a seed may miss a minimum now and then, two of three seeds may not.
    dev = generate.PROFILES["dev"]
    results = [_drawn(name, dev, seed) for seed in (11, 12, 13)]
    misses = [_below(result, "dev") for result in results]
    assert sum(1 for miss in misses if miss) <= 1, misses
    # A miss is chance, not evidence: no warning is said (the README's first command warns of nothing).
    assert [result.line().shortfalls() for result in results] == [[], [], []]


def _no_non_finite(value) -> bool:
    rewards = [r for trial in value["trials"] if trial["rewards"] for r in trial["rewards"].values()]
    return all(math.isfinite(r) for r in rewards)


@pytest.fixture
def narrowed(monkeypatch):
    """pass_at_k's strategy, deliberately narrowed: it never draws a NaN or infinite reward."""
    whole = pass_at_k_strategy.trial_sets()
    monkeypatch.setattr(pass_at_k_strategy, "trial_sets", lambda: whole.filter(_no_non_finite))
    assert isinstance(surfaces.get("pass_at_k").inputs(), st.SearchStrategy)


def _certify(tmp_path, profile: str, *more: str):
    report = tmp_path / "report.jsonl"
    # --no-input-cache: the strategy is narrowed in this process, which no stored sequence's key can see (its
    # fingerprint is of the strategy's files); drawn, the inputs are the narrowed strategy's.
    result = CliRunner().invoke(app, ["certify", "--candidate", "reference", "--oracle", "reference", "--no-cases",
                                      "--surface", "pass_at_k", "--profile", profile, "--report", str(report),
                                      "--progress", "none", "--no-config", "--no-input-cache", *more])
    return result, read(report)


@pytest.mark.slow
def test_a_narrowed_strategy_fails_a_ci_run_naming_the_feature_and_its_share(tmp_path, narrowed):
    result, report = _certify(tmp_path, "ci")
    assert result.exit_code == 1, result.output
    footer = report.footer
    assert footer is not None and not footer.conforms and footer.findings == 0
    [short] = footer.feature_shortfalls
    minimum = next(f.minimum["ci"] for f in surfaces.get("pass_at_k").features if f.name == "non-finite reward")
    assert (short.surface, short.feature, short.count, short.share, short.minimum, short.gate) == (
        "pass_at_k", "non-finite reward", 0, 0.0, minimum, Gate.FAIL)
    assert short.drawn == footer.generated["pass_at_k"].drawn == 250
    output = " ".join(result.output.split())
    assert "feature shortfall" in output and "'non-finite reward' in 0.0% of 250" in output
    assert "does not conform" in output
    markdown = summary(report)
    assert "**Feature shortfall** (the run fails)" in markdown and "'non-finite reward' in 0.0%" in markdown


@pytest.mark.slow
def test_a_dev_run_of_a_narrowed_strategy_warns_and_conforms(tmp_path, narrowed):
    # dev's minimum for non-finite rewards is 1%: none in 100 inputs happens to a third of the strategies at that
    # share, so it takes a larger sample to tell (none in 1,000: 1 time in 23,000).
    result, report = _certify(tmp_path, "dev", "--seed", "5", "--max-examples", "1000")
    assert result.exit_code == 0, result.output
    assert report.footer is not None and report.footer.conforms
    shortfalls = report.footer.feature_shortfalls
    assert "non-finite reward" in [s.feature for s in shortfalls] and {s.gate for s in shortfalls} == {Gate.WARN}
    [short] = [s for s in shortfalls if s.feature == "non-finite reward"]
    assert short.count == 0 and short.chance is not None and short.chance == pytest.approx(0.99 ** 1000)
    assert "feature warning" in result.output and "Note: feature below its minimum" in summary(report)
    assert "draws this few 1 time in 23," in " ".join(result.output.split())


def test_a_smaller_budget_than_the_profiles_only_warns():
    assert generate.feature_gate("ci", "pass_at_k", 250) is Gate.FAIL
    assert generate.feature_gate("ci", "pass_at_k", 249) is Gate.WARN
    assert generate.feature_gate("ci", "reward.parse", 250) is Gate.WARN  # its budget is scaled: 1000
    assert generate.feature_gate("dev", "pass_at_k", 10_000) is Gate.WARN
    assert generate.feature_gate("explore", "pass_at_k", 10_000) is Gate.WARN


def _line(seed: int, budget: int, drawn: int, count: int, gate: Gate) -> GeneratedLine:
    return GeneratedLine(surface="pass_at_k", profile="ci", seed=seed, max_examples=budget, inputs_run=drawn,
                         drawn=drawn, features={"non-finite reward": count, "several groups": drawn},
                         feature_minimums={"non-finite reward": 0.02}, feature_gate=gate)


def test_a_line_below_a_minimum_is_a_shortfall_that_fails_only_under_a_failing_gate():
    tally = Tally.of([], [_line(0, 250, 250, 4, Gate.FAIL)])  # 1.6% of 250, below 2%
    [short] = tally.footer().feature_shortfalls
    assert (short.count, short.drawn, short.share, short.gate, short.chance) == (4, 250, 4 / 250, Gate.FAIL, None)
    assert not tally.conforms
    assert Tally.of([], [_line(0, 250, 250, 5, Gate.FAIL)]).footer().feature_shortfalls == []  # 2% exactly
    # A warning needs evidence: 4 in 250 is what a strategy at 2% draws 44 times in a hundred; none in 250 once
    # in 156 (0.98 ** 250).
    assert Tally.of([], [_line(0, 250, 250, 4, Gate.WARN)]).footer().feature_shortfalls == []
    tally = Tally.of([], [_line(0, 250, 250, 0, Gate.WARN)])
    [short] = tally.footer().feature_shortfalls
    assert (short.count, short.gate) == (0, Gate.WARN) and short.chance == pytest.approx(0.98 ** 250)
    assert tally.conforms
    assert "a strategy at its minimum draws this few 1 time in 156" in short.describe()


def _exact_lower_tail(count: int, drawn: int, share: Fraction) -> Fraction:
    return sum((math.comb(drawn, k) * share ** k * (1 - share) ** (drawn - k) for k in range(count + 1)), Fraction(0))


@pytest.mark.parametrize(("count", "drawn", "share"), [
    (0, 1, "1/2"), (3, 10, "1/3"), (9, 100, "11/100"), (0, 100, "1/100"), (1, 100, "7/100"), (40, 250, "1/5"),
    (249, 250, "1/2"), (0, 400, "1/1000"), (12, 60, "1/4"),
])
def test_the_chance_of_so_few_is_the_binomial_lower_tail(count, drawn, share):
    exact = _exact_lower_tail(count, drawn, Fraction(share))
    assert chance_of_at_most(count, drawn, float(Fraction(share))) == pytest.approx(float(exact), rel=1e-9)


def test_the_chance_of_so_few_holds_for_a_campaigns_counts():
    # Single terms of 100,000 draws underflow a float; the tail does not. The normal approximation (with its
    # continuity correction) is within a few percent this far from the mean: P(X <= 9800), X ~ B(100000, 0.1).
    approx = NormalDist(10_000, math.sqrt(100_000 * 0.1 * 0.9)).cdf(9800.5)
    assert chance_of_at_most(9800, 100_000, 0.1) == pytest.approx(approx, rel=0.05)
    assert chance_of_at_most(0, 100_000, 1e-4) == pytest.approx(math.exp(-10.0005), rel=1e-3)
    assert chance_of_at_most(8_000, 100_000, 0.1) < 1e-80
    assert (chance_of_at_most(5, 5, 0.3), chance_of_at_most(2, 10, 0.0), chance_of_at_most(9, 10, 1.0)) == (1, 1, 0)
    errored = _line(0, 250, 3, 0, Gate.FAIL).model_copy(update={"error": "not run: broken"})
    assert errored.shortfalls() == []  # judged by its error


def test_shards_counts_add_up_and_their_sum_is_judged_by_the_profiles_gate():
    merged = MergedGenerators()
    merged.generator(_line(1, 125, 125, 1, Gate.WARN))  # each shard alone: a smaller budget, a warning
    merged.generator(_line(2, 125, 125, 2, Gate.WARN))
    [line] = merged.lines()
    assert (line.drawn, line.features, line.max_examples) == (250, {"non-finite reward": 3, "several groups": 250}, 250)
    assert line.feature_gate is Gate.FAIL
    tally = Tally.of([], [line])
    assert [(s.count, s.drawn) for s in tally.footer().feature_shortfalls] == [(3, 250)] and not tally.conforms


def test_a_run_whose_findings_cut_its_draws_short_is_a_smaller_sample_that_only_warns():
    # Shrinking findings uses the run's work (generate.WORK_PER_EXAMPLE): an upgrade gate whose release changed
    # a behaviour drew 9 of its 250 inputs, and its listed changes are its verdict, not the shares of 9 draws.
    finding = CaseLine(id="pass_at_k::gen-1", surface="pass_at_k", outcome=Outcome.FAIL, origin="generated")

    def line(drawn: int, findings: list[CaseLine]) -> GeneratedLine:
        result = generate.GenerationResult(surface="pass_at_k", profile="ci", seed=0, max_examples=250, drawn=drawn,
                                           findings=findings)
        return result.line()

    assert line(9, [finding]).feature_gate is Gate.WARN
    assert line(250, [finding]).feature_gate is Gate.FAIL  # findings, but the whole budget drawn
    assert line(250, []).feature_gate is Gate.FAIL
    merged = MergedGenerators()
    for seed in (1, 2):
        part = _line(seed, 125, 120, 0, Gate.WARN)
        merged.generator(part.model_copy(update={"divergences": [f"pass_at_k::gen-{seed}"]}))
    [short] = merged.lines()
    assert short.drawn == 240 and short.feature_gate is Gate.WARN
    tally = Tally.of([], [short])
    assert tally.footer().feature_shortfalls and tally.footer().feature_shortfalls[0].gate is Gate.WARN


def test_shards_combined_count_what_one_run_of_their_seeds_draws(tmp_path):
    """Two shards of a ci run through certify and combine: the combined line's counts are the shards' sums."""
    parts = []
    for index in (1, 2):
        report = tmp_path / f"shard{index}.jsonl"
        result = CliRunner().invoke(app, ["certify", "--candidate", "reference", "--oracle", "reference",
                                          "--no-cases", "--surface", "reason.normalize", "--profile", "ci",
                                          "--shard", f"{index}/2", "--report", str(report), "--progress", "none",
                                          "--no-config"])
        assert result.exit_code == 0, result.output
        parts.append(read(report).generated[0])
    assert all(part.feature_gate is Gate.WARN and part.drawn == 125 for part in parts)
    combined = tmp_path / "combined.jsonl"
    result = CliRunner().invoke(app, ["combine", str(tmp_path / "shard1.jsonl"), str(tmp_path / "shard2.jsonl"),
                                      "--out", str(combined)])
    assert result.exit_code == 0, result.output
    [line] = read(combined).generated
    assert line.drawn == 250 and line.feature_gate is Gate.FAIL
    assert line.features == {name: parts[0].features[name] + parts[1].features[name] for name in line.features}
    assert read(combined).footer.generated["reason.normalize"].features == line.features


def test_the_observations_are_tyche_jsonl_with_each_inputs_features(tmp_path):
    result = _drawn("pass_at_k", CI, 0, max_examples=60, observations=tmp_path)
    lines = [json.loads(text) for text in file_for(tmp_path, "pass_at_k").read_text(encoding="utf-8").splitlines()]
    # Hypothesis observes the draws a filter refused too (status gave_up): the inputs run are the others.
    cases = [line for line in lines if line["type"] == "test_case" and line["status"] != "gave_up"]
    assert len(cases) == result.drawn == 60
    declared = {f.name for f in surfaces.get("pass_at_k").features}
    for case in cases:
        assert case["property"] == "generated_pass_at_k" and case["status"] == "passed"
        assert set(case["features"]) <= declared and "value" in case["arguments"]
    for name in declared:  # each case's features, as the generator counted them
        assert sum(name in case["features"] for case in cases) == result.features[name]


def test_features_are_the_same_with_and_without_observations(tmp_path):
    plain = _drawn("reason.normalize", CI, 3, max_examples=40)
    observed = _drawn("reason.normalize", CI, 3, max_examples=40, observations=tmp_path)
    assert plain.features == observed.features and plain.drawn == observed.drawn == 40


def test_a_feature_minimum_is_a_share():
    with pytest.raises(ValueError, match="share between 0 and 1"):
        Feature("x", "y", lambda value: True, minimum={"ci": 5})


def test_the_reference_oracle_counts_as_the_constant_pair_does():
    """The counts are of the inputs drawn, not of the answers: the reference on both sides draws the same."""
    with Oracle(connect(parse("reference"))) as oracle:
        real = generate.generate("pass_at_k", connect(parse("reference")), oracle, profile=CI, seed=2, max_examples=50)
    assert real.features == _drawn("pass_at_k", CI, 2, max_examples=50).features


@pytest.mark.parametrize("name", NAMES)
def test_every_feature_is_a_total_predicate_of_the_surfaces_inputs(name):
    """Each case input of the corpus (defaults left out, hand-written oddities) is judged without an error."""
    loaded, _ = case_corpus.check_corpus(case_corpus.default_root())
    values = [case.case.input for case in loaded if case.case.surface == name]
    assert values
    for value in values:
        for feature in surfaces.get(name).features:
            assert isinstance(feature.has(value), bool), (feature.name, value)
