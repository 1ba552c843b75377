"""The extension points: registries, entry points, a third party's package, evsys metric plugins, scope."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.core import registry as registry_module
from conformance.core import scope
from conformance.core.registry import Registry, RegistryError
from conformance.report.reader import read

EXAMPLE = Path(__file__).parent / "plugin_example"


def test_the_decorator_registers_by_name_and_refuses_a_second_object_under_one_name():
    reg = Registry("thing", "no.such.group")
    first = reg.register("a", origin="pkg one")(object())
    assert reg.get("a") is first and "a" in reg and reg.names() == ["a"]
    reg.register("a")(first)  # the same object again is harmless (a module imported twice)
    with pytest.raises(RegistryError, match="'a' is registered twice.*pkg one"):
        reg.register("a")(object())
    with pytest.raises(RegistryError, match="unknown thing 'b'; known: a"):
        reg.get("b")


def test_entry_points_are_read_once_and_a_broken_one_is_named(monkeypatch):
    reg = Registry("thing", "test.group")
    good = metadata.EntryPoint("json-dumps", "json:dumps", "test.group")
    broken = metadata.EntryPoint("broken", "no_such_module_anywhere:x", "test.group")
    calls = []

    def entry_points(group):
        calls.append(group)
        return [good]

    monkeypatch.setattr(registry_module.metadata, "entry_points", entry_points)
    assert reg.get("json-dumps") is json.dumps  # an object: registered under the entry point's name
    assert reg.names() == ["json-dumps"] and calls == ["test.group"]
    other = Registry("thing", "test.group")
    monkeypatch.setattr(registry_module.metadata, "entry_points", lambda group: [broken])
    with pytest.raises(RegistryError, match="entry point 'broken'.*does not load"):
        other.get("anything")


def _cli(*args: str) -> subprocess.CompletedProcess:
    # Without --oracle, certify starts the live oracle: the tests that use it take the harbor_env fixture.
    # The example package is "installed" by putting it (and its dist-info) on the path.
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "conformance.cli.app", *args], capture_output=True, text=True, env=env)


@pytest.mark.usefixtures("harbor_env")
def test_a_third_party_surface_candidate_and_policy_work_through_entry_points(tmp_path):
    report = tmp_path / "r.jsonl"
    proc = _cli("certify", "-c", "example-runner", "--cases", str(EXAMPLE / "cases"), "-s", "example.worst_task",
                "--profile", "ci", "--max-examples", "50", "--nan-policy", "nan-sign", "--report", str(report))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = read(report)
    assert data.header.nan_policy == "nan-sign"
    assert data.header.candidate.implementation.name == "example-runner"
    assert [r.outcome for r in data.records] == ["pass", "pass"]  # the package's own two cases
    assert data.generated[0].surface == "example.worst_task" and data.generated[0].inputs_run == 50


@pytest.mark.usefixtures("harbor_env")
def test_a_third_party_surface_catches_its_wrong_candidate(tmp_path):
    report = tmp_path / "r.jsonl"
    proc = _cli("certify", "-c", "example-runner-sloppy", "--cases", str(EXAMPLE / "cases"), "-s", "example.worst_task",
                "--no-generate", "--report", str(report))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = {r.id: r for r in read(report).records if r.outcome == "fail"}
    assert list(failed) == ["example.worst_task::empty-tasks-dropped"]
    # 0.0 for 1.0: another formula, not a last bit
    assert [m.cls for m in failed["example.worst_task::empty-tasks-dropped"].mismatches] == ["float-far"]


@pytest.mark.usefixtures("harbor_env")
def test_an_evsys_metric_plugin_is_certified_on_its_own_metric_only(tmp_path):
    report = tmp_path / "r.jsonl"
    proc = _cli("certify", "-c", "evsys:pass@3", "--profile", "ci", "--max-examples", "60", "--report", str(report))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = read(report)
    assert data.header.candidate.implementation.scope == {"evsys.metric": {"metric": ["pass@3"]}}
    assert data.header.surfaces == ["evsys.metric"]
    assert data.records, "the corpus's pass@3 cases run"
    assert {r.surface for r in data.records} == {"evsys.metric"} and {r.outcome for r in data.records} == {"pass"}


@pytest.mark.slow
@pytest.mark.usefixtures("harbor_env")
def test_a_wrong_evsys_plugin_is_caught_and_one_without_semantics_is_refused(tmp_path):
    report = tmp_path / "r.jsonl"
    proc = _cli("certify", "-c", "evsys:pass_rate", "--no-generate", "--report", str(report))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    classes = {m.cls for r in read(report).records for m in r.mismatches}
    assert classes == {"float-far"}  # averaged per task, not pooled: another formula
    refused = _cli("certify", "-c", "evsys:worst_task")
    assert refused.returncode == 2 and "no built-in semantics" in refused.stderr + refused.stdout
    missing = _cli("certify", "-c", "evsys:no-such-metric")
    assert missing.returncode == 2 and "evsys_sdk.metrics" in missing.stderr + missing.stdout


SCOPE = {"evsys.metric": {"metric": ["pass@3", "avg"]}}


def test_scope_selects_surfaces_and_inputs():
    assert scope.surfaces(SCOPE, ["reward.parse", "evsys.metric"]) == ["evsys.metric"]
    assert scope.surfaces(None, ["reward.parse"]) == ["reward.parse"]
    assert scope.claims(SCOPE, "evsys.metric", {"metric": "avg", "task_rewards": []})
    assert not scope.claims(SCOPE, "evsys.metric", {"metric": "pass_rate", "task_rewards": []})
    assert not scope.claims(SCOPE, "reward.parse", {})
    assert scope.claims(None, "reward.parse", {})


@settings(max_examples=50, database=None)
@given(scope.restrict(st.fixed_dictionaries({"metric": st.text(), "task_rewards": st.just([])}),
                      SCOPE, "evsys.metric"))
def test_restricted_generators_draw_only_claimed_values(value):
    assert value["metric"] in ("pass@3", "avg") and value["task_rewards"] == []


def test_an_installed_evsys_sdk_registry_is_asked_after_the_entry_points(monkeypatch):
    import types

    from conformance.surfaces.evsys_metric import connector as metric_plugin

    class PassHat3:
        name = "pass^3"

        def compute(self, task_rewards):
            return 0.0

    registry = types.ModuleType("evsys_sdk.registry")
    registry.get_metric = lambda name: {"pass^3": PassHat3}[name]  # evsys-sdk raises KeyError for unknown names
    monkeypatch.setitem(sys.modules, "evsys_sdk", types.ModuleType("evsys_sdk"))
    monkeypatch.setitem(sys.modules, "evsys_sdk.registry", registry)
    monkeypatch.setattr(metric_plugin.metadata, "entry_points", lambda group: [])
    monkeypatch.setattr(metric_plugin.metadata, "version", lambda dist: "0.1.0")
    wrapped = metric_plugin.candidate("pass^3")
    assert wrapped.scope == {"evsys.metric": {"metric": ["pass^3"]}} and wrapped.version == "0.1.0"
    assert wrapped.handlers["evsys.metric"]({"metric": "pass^3", "task_rewards": [[1.0]]}) == 0.0
    with pytest.raises(metric_plugin.PluginError, match="no metric plugin 'avg'"):
        metric_plugin.candidate("avg")


def test_a_surface_whose_own_oracle_cannot_start_gives_errors_not_a_crash():
    from conformance.connection.connectors import connect
    from conformance.core import surfaces
    from conformance.run.runner import Oracle, run_input

    @surface_for_test("test.broken-oracle", oracle="no_such_module_anywhere:oracle")
    class _Input(surfaces.BaseModel):
        value: int

    try:
        record = run_input("test.broken-oracle::a", "test.broken-oracle", {"value": 1}, connect("reference"),
                           Oracle(connect("reference")))
        assert record.outcome == "error" and "cannot import" in record.detail
    finally:
        surfaces.SURFACES._items.pop("test.broken-oracle", None)


def surface_for_test(name: str, **declaration):
    from conformance.core.surfaces import surface

    return surface(name, summary="a test surface", output="int", spec="none", **declaration)
