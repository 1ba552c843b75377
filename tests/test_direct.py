"""``direct``: pools, weightings and labelled composites hold the strategies they draw without their lazy
wrappers, from the first draw on (never at import), and draw exactly what the wrapped ones would."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import strategies as st

from conformance.core import surfaces
from conformance.strategies.direct import direct
from conformance.strategies.labels import composite
from conformance.strategies.picks import draw_index, lists_of
from conformance.strategies.weights import pooled, weighted
from tests.drawing import drawn


def _drawn(strategy: st.SearchStrategy[Any], count: int = 150) -> list[Any]:
    return drawn(strategy, seeds=1, examples=count, first_seed=3)


def test_a_lazy_strategy_loses_its_wrapper_and_keeps_its_draws():
    lazy = st.text("ab", max_size=4)
    assert hasattr(lazy, "wrapped_strategy")
    unwrapped = direct(lazy)
    assert not hasattr(unwrapped, "wrapped_strategy")
    assert _drawn(unwrapped) == _drawn(st.text("ab", max_size=4))


def test_a_strategy_that_is_not_lazy_is_itself():
    plain = st.sampled_from([1, 2, 3])
    assert direct(plain) is plain


class _Built:
    """A strategy that counts how often it is built (``st.deferred`` builds on first use)."""

    def __init__(self) -> None:
        self.times = 0

    def strategy(self) -> st.SearchStrategy[int]:
        def build() -> st.SearchStrategy[int]:
            self.times += 1
            return st.integers(0, 9)

        return st.deferred(build)


@composite
def _pair(draw: st.DrawFn, inner: st.SearchStrategy[int]) -> tuple[int, int]:
    return draw(inner), draw(inner)


@pytest.mark.parametrize("make", [
    lambda s: pooled((1, s), (1, ("fixed",))),
    lambda s: weighted((2, s), (1, st.just(-1))),
    lambda s: _pair(s),
    lambda s: lists_of(s),
], ids=["pooled", "weighted", "composite argument", "lists_of"])
def test_nothing_is_built_before_the_first_draw_and_it_is_built_once(make):
    built = _Built()
    strategy = make(built.strategy())
    assert built.times == 0  # an import makes no strategy (Hypothesis warns of it during pytest's set-up)
    _drawn(strategy, 60)
    assert built.times == 1


@st.composite
def _index(draw: st.DrawFn, length: int) -> int:
    return draw_index(draw, length)


@pytest.mark.parametrize("length", [7, 1000])  # sampled_from, then bytes scaled (past UNIFORM_UP_TO)
def test_an_index_through_the_direct_strategy_stays_in_its_table_and_reaches_across_it(length):
    drawn = _drawn(_index(length))
    assert all(0 <= i < length for i in drawn)
    assert len(set(drawn)) >= min(length, 50)
    assert max(drawn) >= length // 2


_DIGESTS = """
import hashlib, sys
import conformance.strategies.direct as module
if sys.argv[1] == "off":
    module.direct = lambda strategy: strategy  # before the strategies import it
from hypothesis import HealthCheck, Phase, given, seed, settings
from conformance.core import surfaces
for name in surfaces.SURFACES:
    values = []
    @seed(3)
    @settings(max_examples=40, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(surfaces.get(name).inputs())
    def draw(value):
        values.append(value)
    draw()
    print(name, hashlib.sha256(repr(values).encode()).hexdigest())
"""


@pytest.mark.slow
def test_every_surface_draws_the_same_inputs_with_the_wrappers_left_in():
    """The suite's own strategies drawn with ``direct`` and with it doing nothing, each in a process of its
    own: the same inputs, so stored inputs and shipped answers hold across it."""
    runs = [subprocess.run([sys.executable, "-c", _DIGESTS, how], capture_output=True, text=True, check=True)
            for how in ("on", "off")]
    on, off = (run.stdout.splitlines() for run in runs)
    assert len(on) == len(list(surfaces.SURFACES))
    assert on == off
