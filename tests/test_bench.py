"""The benchmark's parts that are not timings: its corpus and how it reads its own figures against the targets."""

from __future__ import annotations

import json

import pytest

from conformance import bench
from conformance.core import surfaces


def test_the_bench_corpus_is_repeatable_and_has_no_slow_input():
    first = bench.bench_corpus("metric.compute", 200)
    again = bench.bench_corpus("metric.compute", 200)
    assert repr(first) == repr(again)  # a fixed seed: the same inputs every run (repr: NaN is not equal to itself)
    assert 100 < len(first) <= 200
    assert all(surfaces.get("metric.compute").batchable(value) for value in first)
    assert not any(value["metric"].get("type") == "uv-script" for value in first)


def test_figures_are_read_against_the_targets():
    results = bench.Results(
        rates={"metric.compute": {"inputs": "10 generated", "nodes": 3, "in_process": 1, "exec": 1, "raw": 2,
                                  "exec_over_raw": 0.5, "exec_recorded": 12_000, "wire": 50_000},
               "pass_at_k": {"inputs": "10 generated", "nodes": 3, "in_process": 1, "exec": 1, "raw": 2,
                             "exec_over_raw": 0.5, "exec_recorded": 9_999, "wire": 50_000, "oracle_alone": 2,
                             "run_over_slower": 1.25, "plain": 20_000, "wire_over_plain": 2.5},
               "reward.parse": {"inputs": "10 generated", "nodes": 3, "in_process": 1, "exec": 1, "raw": 4,
                                "exec_over_raw": 0.25, "exec_recorded": 1, "wire": 1}},
        runs={"warm": {"seconds": 59.0, "harness_mb": 301.0, "oracle_mb": 1.0},
              "cached": {"seconds": 20.0, "harness_mb": 1.0, "oracle_mb": 1.0},
              "oracle side": {"seconds": 50.0, "harness_mb": 1.0, "oracle_mb": 1.0},
              "fresh": {"seconds": 200.0, "harness_mb": 1.0, "oracle_mb": 1.0}},
        tests={"offline": 44.0, "all": 121.0})
    verdicts = {line.split("|")[1].strip(): line.split("|")[3].strip()
                for line in bench.table(results).splitlines() if line.count("|") == 4 and "target" not in line
                and "---" not in line}
    assert verdicts == {
        "metric.compute exec inputs/s (recorded oracle) ≥ 10,000": "yes",
        "pass_at_k exec inputs/s (recorded oracle) ≥ 10,000": "NO",
        "reward.parse exec / raw ≥ 0.5": "NO",
        "pass_at_k wire / plain JSON ≤ 2.0": "NO",
        "pass_at_k run / slower side ≤ 1.3": "yes",
        "warm certify s ≤ 60": "yes",
        "harness MB ≤ 300": "NO",
        "warm ÷ cached certify ≥ 5": "NO",  # 59 / 20
        "uncached certify ÷ slower side ≤ 1.3": "yes",  # 59 / max(20, 50)
        "fresh certify s ≤ 180": "NO",
        "offline tests s ≤ 45": "yes",
        "tests s ≤ 120": "NO",
    }


def test_a_conforming_candidate_is_sent_one_request_per_input_and_the_figure_says_so(corpus):
    from conformance.run.runner import Input

    recorded = [Input(c.case.id, c.case.surface, c.case.input, c.case.expect.result())
                for c in corpus if c.case.surface == "reward.parse" and c.case.expect is not None]
    assert bench.requests_per_input(recorded) == 1.0
    results = bench.Results(rates={"reward.parse": {"requests_per_input": 1.0},
                                   "pass_at_k": {"requests_per_input": 2.0}})
    verdicts = {name: figure <= target for name, target, figure, _ in bench._against_targets(results)}
    assert verdicts == {"reward.parse candidate requests per conforming input": True,
                        "pass_at_k candidate requests per conforming input": False}


def test_the_request_count_is_read_where_the_candidate_counts_even_run_as_a_script(corpus, monkeypatch):
    """`python -m conformance.bench` runs the module as __main__, a second copy beside conformance.bench: the
    figure must still count the requests the connection's candidate received (it read 0 from its own copy)."""
    import importlib.util
    import sys

    from conformance.run.runner import Input

    spec = importlib.util.spec_from_file_location("bench_as_a_script", bench.__file__)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_as_a_script", script)
    spec.loader.exec_module(script)
    recorded = [Input(c.case.id, c.case.surface, c.case.input, c.case.expect.result())
                for c in corpus if c.case.surface == "pass_at_k" and c.case.expect is not None]
    assert script.requests_per_input(recorded) == 1.0


def test_draw_shares_are_read_against_twice_the_baseline_and_result_load_has_no_target():
    results = bench.Results(draw_shares={"reward.parse": 1.35, "evsys.metric": 2.10, "result.load": 0.1})
    verdicts = {name: (target, figure >= target) for name, target, figure, _ in bench._against_targets(results)}
    # Twice the shares measured at 3bc0f84 by four seeds: reward.parse 0.66, evsys.metric 1.07.
    assert verdicts == {"reward.parse draws ÷ yardstick": (1.32, True),
                        "evsys.metric draws ÷ yardstick": (2.14, False)}


def test_the_draws_are_measured_only_for_the_surfaces_asked():
    results = bench.Results()
    bench.measure_draws(results, ["evsys.metric"], count=5)
    assert set(results.draws_per_second) == set(results.draw_shares) == {"evsys.metric"}
    assert results.yardstick_draws_per_second > 0
    assert "| draws ÷ yardstick |" in bench.table(results).splitlines()[0]


def test_a_fresh_machine_run_and_the_generators_rates_are_read_against_their_targets():
    results = bench.Results(
        examples_per_second={"reward.parse": 600.0, "job.result": 30.0},
        campaign_rate={"reward.parse": 300.0, "job.result": 20.0},
        runs={"cached": {"seconds": 10.0, "harness_mb": 1.0, "oracle_mb": 1.0},
              "fresh machine": {"seconds": 16.0, "harness_mb": 1.0, "oracle_mb": 1.0, "environments_made": 1}})
    verdicts = {name: (target, figure) for name, target, figure, _ in bench._against_targets(results)}
    assert verdicts == {
        "reward.parse ci examples/s": (566, 600.0),  # 2 × 283
        "job.result ci examples/s": (48, 30.0),  # 2 × 24
        "reward.parse campaign inputs/s (one worker)": (190, 300.0),  # 2 × 95
        "job.result campaign inputs/s (one worker)": (30, 20.0),  # 2 × 15
        "fresh machine ÷ cached certify": (1.5, 1.6),
        "oracle environments a fresh machine makes": (0, 1),
    }
    assert "| campaign worker /s |" in bench.table(results).splitlines()[0]


def test_a_failing_test_suite_ends_the_bench_after_its_figures_are_written(tmp_path, monkeypatch, capsys):
    """Whole runs take minutes: tests that fail at the end (or cannot start) cost none of the figures before."""
    measured = bench.Results(machine={"cpus": 2})
    measured.draws_per_second = {"reward.parse": 123.0}
    monkeypatch.setattr(bench, "measure", lambda *args: measured)

    def failing(checkout):
        raise RuntimeError("the tests failed (offline): No module named pytest")

    monkeypatch.setattr(bench, "test_suite_times", failing)
    written = tmp_path / "bench.json"
    with pytest.raises(SystemExit, match="No module named pytest"):
        bench.main(["--json", str(written)])
    assert json.loads(written.read_text())["draws_per_second"] == {"reward.parse": 123.0}
    assert "| surface |" in capsys.readouterr().out


def test_a_campaign_worker_is_measured_on_whole_tasks_as_a_campaign_gives_them(monkeypatch):
    """Even with no time left, one whole task runs: the explore profile, a campaign's task seeds and example
    count, an example database (a campaign always has one)."""
    from conformance.campaign.plan import DEFAULT_TASK_EXAMPLES, task_seed
    from conformance.connection.connectors import connect, parse
    from conformance.run import generate
    from conformance.run.runner import Oracle

    calls = []
    real = generate.generate

    def counted(surface, candidate, oracle, **options):
        result = real(surface, candidate, oracle, **options)
        calls.append((surface, options["profile"].name, options["seed"], options["max_examples"],
                      options["database"] is not None, result.inputs_run))
        return result

    monkeypatch.setattr(generate, "generate", counted)
    with connect(parse("reference")) as candidate, Oracle(connect(parse("reference"))) as oracle:
        rate = bench.campaign_rate("reason.normalize", candidate, oracle, seconds=0)
    task = ("reason.normalize", "explore", task_seed(1, "reason.normalize", 0), DEFAULT_TASK_EXAMPLES, True)
    assert [call[:5] for call in calls] == [task]
    assert rate > 0 and calls[0][5] == DEFAULT_TASK_EXAMPLES
