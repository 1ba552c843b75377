"""What a strategy draws in the generate phase, as a run draws it: for the tests of the strategies' building blocks."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st


def drawn(strategy: st.SearchStrategy[Any], seeds: int = 4, examples: int = 300, first_seed: int = 0) -> list[Any]:
    """Every value ``strategy`` draws in ``examples`` examples from each of ``seeds`` seeds."""
    values: list[Any] = []
    for number in range(first_seed, first_seed + seeds):

        @seed(number)
        @settings(max_examples=examples, database=None, phases=[Phase.generate], deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def draw(value: Any) -> None:
            values.append(value)

        draw()
    return values
