"""Choosing among strategies with weights.

``st.one_of`` picks its branches evenly, and a strategy object listed twice
counts once, so repeating a branch does not make it likelier. ``weighted``
draws the branch by its weight instead.

The branch is an index into a table holding each branch as many times as
its weight, every entry as likely as the others however long the table
(:func:`conformance.strategies.picks.index`). A weight holds only for a
branch with many distinct values: Hypothesis does not draw again what it has
fully explored, so a branch of a handful of fixed values gets fewer draws
than its weight once they have all come up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.direct import direct_later
from conformance.strategies.labels import argument_key
from conformance.strategies.picks import draw_index, uniform


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, each drawn with a chance proportional to its weight (a positive int)."""
    # sampled_from, not integers(0, n - 1): Hypothesis draws integers near their bounds far more often, and
    # gave a first branch of weight 1 in 10 a third of the draws.
    branches = direct_later([strategy for weight, strategy in choices for _ in range(weight)])

    # A composite, not `flatmap`, which checks and draws the branch through another layer on every draw
    # (multi_step.reward drew a fifth faster without it). Hypothesis makes the same choices: an index, the branch.
    # Labelled by its table: every weighted() shares the function (see conformance.strategies.labels).
    @st.composite
    def branch(draw: st.DrawFn, _key: str = argument_key(weighted, choices, {})) -> Any:
        table = branches()
        return draw(table[draw_index(draw, len(table))])

    return branch()


def table(*choices: tuple[int, Sequence[Any] | st.SearchStrategy[Any]]) -> list[Any]:
    """The entries a pool draws from: each strategy, and each plain value, as many times as its weight."""
    entries: list[Any] = []
    for weight, branch in choices:
        if isinstance(branch, st.SearchStrategy):
            entries += [branch] * weight
        else:
            entries += [value for value in branch for _ in range(weight)]
    return entries


def pooled(*choices: tuple[int, Sequence[Any] | st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One value: ``weighted``, where a branch may also be a sequence of plain values, each its own branch of
    that weight (a weight per value, not per sequence).

    A pooled value costs Hypothesis one choice (its place in the table), where a ``sampled_from`` branch costs
    two (the branch, then the value): in a list of values the choices are most of what a draw costs. The first
    value of the first branch is the one a shrink goes to.
    """
    if not any(isinstance(branch, st.SearchStrategy) for _, branch in choices):
        return uniform(table(*choices))  # the same one choice, without the composite's layer
    value = pool(*choices)

    @st.composite
    def drawn(draw: st.DrawFn, _key: str = argument_key(pooled, choices, {})) -> Any:
        return value(draw)

    return drawn()


def pool(*choices: tuple[int, Sequence[Any] | st.SearchStrategy[Any]]) -> Callable[[st.DrawFn], Any]:
    """``pooled`` as a plain function of a composite's ``draw``: the same choices, without a strategy's layer of
    Hypothesis's bookkeeping around them (where many values are drawn, that layer cost more than the choices)."""
    plain = table(*choices)
    drawn = [isinstance(entry, st.SearchStrategy) for entry in plain]
    entries, length = direct_later(plain), len(plain)

    def value(draw: st.DrawFn) -> Any:
        where = draw_index(draw, length)
        entry = entries()[where]
        return draw(entry) if drawn[where] else entry

    return value
