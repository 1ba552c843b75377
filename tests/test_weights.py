"""``weighted``: a branch's weight shows in how often it is drawn, where repeating it in ``one_of`` does not."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from conformance.strategies.weights import weighted


def _shares(strategy: st.SearchStrategy[str]) -> Counter[str]:
    drawn: Counter[str] = Counter()

    @seed(0)
    @settings(max_examples=400, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.tuples(strategy, st.integers()))  # the integer keeps equal draws of a branch distinct examples
    def draw(pair: tuple[str, int]) -> None:
        drawn[pair[0]] += 1

    draw()
    return drawn


def test_a_heavier_branch_is_drawn_more():
    common, rare = st.just("common"), st.just("rare")
    shares = _shares(weighted((6, common), (1, rare)))
    assert shares["common"] > 3 * shares["rare"] > 0


def test_one_of_counts_a_repeated_branch_once():
    """Why ``weighted`` exists: the same strategy object listed six times weighs as much as once."""
    common, rare = st.just("common"), st.just("rare")
    shares = _shares(st.one_of(*[common] * 6, rare))
    assert shares["common"] < 2 * shares["rare"]
