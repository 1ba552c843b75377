"""Drawing from a plain sequence inside a composite strategy, without building a strategy per draw.

``draw(st.sampled_from(items))`` in a composite makes, validates and labels
a new strategy on every draw, which costs more than the draw itself. ``pick``
draws an index with one strategy per length, made once: the same choice
``st.sampled_from`` makes, so the first items are favoured alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


@cache
def index(length: int) -> st.SearchStrategy[int]:
    """An index into a sequence of ``length`` items, drawn as ``st.sampled_from`` draws one."""
    return st.sampled_from(range(length))


def pick(draw: st.DrawFn, items: Sequence[T]) -> T:
    """One of ``items`` (not empty), drawn as ``st.sampled_from(items)`` would."""
    return items[draw(index(len(items)))]
