"""Drawing from a plain sequence inside a composite strategy, without building a strategy per draw.

``draw(st.sampled_from(items))`` in a composite makes, validates and labels
a new strategy on every draw, which costs more than the draw itself. ``pick``
draws an index with one strategy per length, made once.

Every index is as likely as every other, however long the sequence. Hypothesis
draws an index into a long sequence as it draws an integer, from a
distribution peaked at zero: of 1,000 items, seven in ten draws fell in the
first half; of 100,000, nine in ten. A weighted table of a few hundred
entries (a weight per value) then favoured its first branches over what its
weights say. Past :data:`UNIFORM_UP_TO` items an index is scaled from random
bytes instead: still one choice, shrinking to the first item.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Any, TypeVar

from hypothesis import strategies as st

from conformance.strategies.direct import direct
from conformance.strategies.labels import composite

T = TypeVar("T")


# Up to this many items (measured: 300), Hypothesis's own index is as likely to fall in either half.
UNIFORM_UP_TO = 256


@cache
def _raw_index(length: int) -> tuple[st.SearchStrategy[Any], int]:
    """What an index into ``length`` items is drawn from, and the number of bytes it is scaled from (0: the
    index itself)."""
    if length <= UNIFORM_UP_TO:
        return st.sampled_from(range(length)), 0
    # Enough bytes that no index is likelier than another by more than one part in 256.
    size = (length.bit_length() + 8 + 7) // 8
    return st.binary(min_size=size, max_size=size), size


@cache
def _drawn_index(length: int) -> tuple[st.SearchStrategy[Any], int]:
    """``_raw_index`` made direct: only ever called in a draw (see conformance.strategies.direct)."""
    strategy, size = _raw_index(length)
    return direct(strategy), size


def _scaled(raw: bytes, length: int) -> int:
    return int.from_bytes(raw, "big") * length >> (8 * len(raw))


@cache
def index(length: int) -> st.SearchStrategy[int]:
    """An index into a sequence of ``length`` items (at least one), each as likely as the others."""
    strategy, size = _raw_index(length)
    return strategy.map(lambda raw: _scaled(raw, length)) if size else strategy


def draw_index(draw: st.DrawFn, length: int) -> int:
    """``draw(index(length))`` without the map's layer of Hypothesis's bookkeeping (the same choice, the same
    index): a composite that picks from long tables many times spent more on those layers than on the picks."""
    strategy, size = _drawn_index(length)
    drawn = draw(strategy)
    return _scaled(drawn, length) if size else int(drawn)


def uniform(items: Sequence[T]) -> st.SearchStrategy[T]:
    """One of ``items`` (not empty), each as likely as the others: ``st.sampled_from`` where it is."""
    if len(items) <= UNIFORM_UP_TO:
        return st.sampled_from(items)
    values = tuple(items)
    strategy, _ = _raw_index(len(values))
    return strategy.map(lambda raw: values[_scaled(raw, len(values))])


def pick(draw: st.DrawFn, items: Sequence[T]) -> T:
    """One of ``items`` (not empty), each as likely as the others."""
    return items[draw_index(draw, len(items))]


def pick_each(draw: st.DrawFn, *tables: Sequence[Any]) -> tuple[Any, ...]:
    """One item of each table, as one choice: an index into their product, every combination as likely as the
    others. Where a composite makes several independent picks, each is a choice Hypothesis tracks, and its
    fixed work per choice cost more than the pick. The first table varies slowest: a shrink goes to the first
    item of each, the first table's soonest, mostly: held to an item of a later table, Hypothesis's shrinker can
    stop at a local minimum of the one index with an earlier table at its last item (tests/test_picks.py)."""
    at = draw_index(draw, math.prod(len(table) for table in tables))
    picked: list[Any] = []
    for table in reversed(tables):
        at, item = divmod(at, len(table))
        picked.append(table[item])
    return tuple(reversed(picked))


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


@composite
def lists_of(draw: st.DrawFn, element: st.SearchStrategy[T], min_size: int = 0, max_size: int = 3) -> list[T]:
    """A list of ``min_size`` to ``max_size`` drawn items, its length one pick (every length alike).

    ``st.lists`` draws a choice before each item, whether there is one more; a length drawn first is one
    choice for all of them, and a shrink still drops items from the end.
    """
    return [draw(element) for _ in range(draw(_lengths(min_size, max_size)))]


@cache
def _lengths(min_size: int, max_size: int) -> st.SearchStrategy[int]:
    return st.sampled_from(range(min_size, max_size + 1))
