"""Choosing among strategies with weights.

``st.one_of`` picks its branches evenly, and a strategy object listed twice
counts once, so repeating a branch does not make it likelier. ``weighted``
draws the branch by its weight instead.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, each drawn with a chance proportional to its weight (a positive int)."""
    table = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.integers(0, len(table) - 1).flatmap(lambda at: table[at])
