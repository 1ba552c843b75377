"""Choosing among strategies with weights.

``st.one_of`` picks its branches evenly, and a strategy object listed twice
counts once, so repeating a branch does not make it likelier. ``weighted``
draws the branch by its weight instead.

A weight holds only for a branch with many distinct values: Hypothesis
does not draw again what it has fully explored, so a branch of a handful of
fixed values gets fewer draws than its weight once they have all come up.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, each drawn with a chance proportional to its weight (a positive int)."""
    # sampled_from, not integers(0, n - 1): Hypothesis draws integers near their bounds far more often, and
    # gave a first branch of weight 1 in 10 a third of the draws.
    table = [strategy for weight, strategy in choices for _ in range(weight)]
    at = st.sampled_from(range(len(table)))

    # A composite, not `flatmap`, which checks and draws the branch through another layer on every draw
    # (multi_step.reward drew a fifth faster without it). Hypothesis makes the same choices: an index, the branch.
    @st.composite
    def branch(draw: st.DrawFn) -> Any:
        return draw(table[draw(at)])

    return branch()
