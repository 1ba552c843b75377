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


def sequence_of(items: Sequence[T], min_size: int = 0, max_size: int | None = None) -> st.SearchStrategy[list[T]]:
    """A list of ``items`` (repeats allowed) as one string choice, a character standing for an item.

    ``st.lists(st.sampled_from(items))`` makes two choices an item (one more, which one); a text over an
    alphabet of ``len(items)`` characters is one choice for the whole list. Its characters count up from
    "0", which Hypothesis takes as the simplest: a shrink goes to the first item, as with sampled_from.
    """
    if not 0 < len(items) <= _MOST_ITEMS:
        raise ValueError(f"sequence_of takes 1 to {_MOST_ITEMS} items, not {len(items)}")
    values = tuple(items)
    alphabet = "".join(chr(_FIRST + i) for i in range(len(values)))
    return st.text(alphabet, min_size=min_size, max_size=max_size).map(
        lambda text: [values[ord(char) - _FIRST] for char in text])


_FIRST = ord("0")
_MOST_ITEMS = 0xD800 - _FIRST  # below the surrogates, which are no text
