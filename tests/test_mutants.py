"""The mutation measurement: the catalogue applies, a mutant is served as written, and the verdicts follow the targets.

The whole catalogue runs in ``nox -s mutants``; here a fast subset runs: one
mutant of each surface by the cases (offline, against the recordings), and
by both columns against the live oracle.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from dataclasses import replace

import pytest

from conformance.core import surfaces
from conformance.kit import wire
from conformance.mutation import table
from conformance.mutation.measure import Column, Measured, measure
from conformance.mutation.mutants import CatalogueError, Mutant, catalogue, named

MINIMUM = 80


def test_the_catalogue_has_enough_mutants_on_every_surface():
    every = catalogue()
    assert len(every) >= MINIMUM
    per_surface = Counter(m.surface for m in every)
    assert set(per_surface) == set(surfaces.SURFACES)
    assert min(per_surface.values()) >= 5, per_surface


def test_every_equivalent_mutant_carries_an_argument_and_every_mutant_a_bug():
    for mutant in catalogue():
        assert mutant.bug.strip()
        assert mutant.equivalent is None or len(mutant.equivalent.split()) >= 8, mutant.id


def test_an_edit_that_does_not_apply_exactly_once_is_a_catalogue_error():
    some = catalogue()[0]
    with pytest.raises(CatalogueError, match="not found"):
        replace(some, find="no reference module holds this text").check()
    with pytest.raises(CatalogueError, match="found [0-9]+ times"):
        replace(some, find="\n").check()
    with pytest.raises(CatalogueError, match="does not compile"):
        replace(some, replace=some.find + "\n)(").check()
    with pytest.raises(CatalogueError, match="no surface"):
        replace(some, surface="reward.parsed").check()


def test_a_served_mutant_differs_from_the_reference_only_by_its_edit(tmp_path):
    """The server answers with the mutated module: reward.txt read first when both files exist."""
    mutant = named("reward.parse/txt-before-json")
    request = wire.encode({"reward_json": b'{"reward": 2}', "reward_txt": b"0.5"})
    lines = [json.dumps({"cmd": "start", "protocol": 1}),
             json.dumps({"cmd": "run", "seq": 1, "surface": "reward.parse", "input": request}),
             json.dumps({"cmd": "stop"})]

    def answer(*command: str) -> dict:
        done = subprocess.run([sys.executable, "-m", *command], input="\n".join(lines) + "\n", capture_output=True,
                              text=True, timeout=60, check=True)
        replies = [json.loads(line) for line in done.stdout.splitlines()]
        return wire.decode(next(r for r in replies if r.get("seq") == 1)["output"])

    assert answer("conformance.reference") == {"reward": 2}
    assert answer("conformance.mutation.serve", mutant.id) == {"reward": 0.5}


def _measured(slug: str, cases: tuple[str, ...], generated: tuple[str, ...] | None, equivalent: str | None = None,
              surface: str = "pass_at_k") -> Measured:
    mutant = Mutant(slug, surface, "pass_at_k", "x", "y", "a bug", equivalent)
    return Measured(mutant, Column(10, cases), None if generated is None else Column(10, generated), 0.0)


def test_the_targets():
    killed_twice = _measured("a", ("c1",), ("g1",))
    assert table.shortfalls([killed_twice]) == []
    assert "survives" in table.shortfalls([_measured("b", (), ())])[0]
    assert "by 1 input only" in table.shortfalls([_measured("c", ("c1",), ())])[0]
    assert "argument is wrong" in table.shortfalls([_measured("d", ("c1",), (), equivalent="why " * 8)])[0]
    assert table.shortfalls([_measured("e", (), (), equivalent="why " * 8)]) == []
    # 9 of 10 killed by the generators is the target; 8 of 10 is not.
    nine = [_measured(f"k{i}", ("c1", "c2"), ("g",) if i < 9 else ()) for i in range(10)]
    assert table.shortfalls(nine) == []
    eight = [_measured(f"k{i}", ("c1", "c2"), ("g",) if i < 8 else ()) for i in range(10)]
    assert table.shortfalls(eight) == ["pass_at_k: the ci generators alone kill 8 of 10 (80%; target 90%)"]
    # An equivalent mutant is left out of the rate.
    assert table.shortfalls([*nine[:9], _measured("q", (), (), equivalent="why " * 8)]) == []


def test_a_stopped_run_is_a_kill_by_one_input():
    stopped = Measured(Mutant("s", "pass_at_k", "pass_at_k", "x", "y", "a bug"), Column(0, (), "crash"), None, 0.0)
    assert stopped.killed and stopped.killing_inputs == 1


def _subset() -> list[Mutant]:
    """The first mutant not argued equivalent on each surface."""
    first: dict[str, Mutant] = {}
    for mutant in catalogue():
        if mutant.equivalent is None:
            first.setdefault(mutant.surface, mutant)
    return list(first.values())


@pytest.mark.slow
def test_the_cases_kill_a_mutant_of_each_surface():
    results = list(measure(_subset(), generators=False))
    assert [r.mutant.id for r in results if not r.killed] == []
    assert all(r.generators is None and r.cases is not None and r.cases.inputs_run > 0 for r in results)


@pytest.mark.slow
def test_both_columns_on_a_mutant_of_each_surface(harbor_env):
    results = list(measure(_subset()))
    assert table.shortfalls(results) == [s for s in table.shortfalls(results) if "generators alone" in s]
    assert all(r.generators is not None and r.generators.inputs_run > 0 for r in results)


def test_a_reference_that_does_not_conform_makes_the_measurement_refuse(monkeypatch):
    """Kills mean nothing where the unmutated candidate already diverges: the run stops before any mutant."""
    from conformance.errors import RunFailure
    from conformance.mutation import measure as measuring

    monkeypatch.setattr(measuring, "REFERENCE", "tests.wrong_candidates:txt_before_json")
    mutant = next(m for m in catalogue() if m.surface == "reward.parse")
    with pytest.raises(RunFailure, match="does not conform on reward.parse by the cases"):
        list(measure([mutant], generators=False))
