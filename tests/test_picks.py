"""Picks from long tables are even, weights of a long pool hold, and a list's length is one pick."""

from __future__ import annotations

from collections import Counter
from random import Random
from typing import Any

import pytest
from hypothesis import find, settings
from hypothesis import strategies as st

from conformance.strategies.picks import UNIFORM_UP_TO, draw_index, index, lists_of, pick, pick_each, uniform
from conformance.strategies.weights import pool, pooled
from tests.drawing import drawn


def _drawn(strategy: st.SearchStrategy[Any], seeds: int = 4, examples: int = 300) -> list[Any]:
    """What ``strategy`` draws in the generate phase (as a run draws), over a few seeds."""
    return drawn(strategy, seeds, examples)


@pytest.mark.parametrize("length", [UNIFORM_UP_TO, 1_000, 100_000])
def test_an_index_into_a_long_table_falls_in_either_half_alike(length: int):
    drawn = _drawn(index(length))
    assert all(0 <= at < length for at in drawn)
    late = sum(1 for at in drawn if at >= length // 2)
    assert 0.4 < late / len(drawn) < 0.6, (late, len(drawn))


def test_hypothesis_own_index_into_a_long_table_favours_its_start():
    """Why ``index`` does not leave a long table to sampled_from: its first half is drawn far more often."""
    drawn = _drawn(st.sampled_from(range(100_000)))
    late = sum(1 for at in drawn if at >= 50_000)
    assert late / len(drawn) < 0.3, (late, len(drawn))


def test_a_long_pool_draws_each_branch_by_its_weight():
    # 300 entries of "a" before 700 of "b": past the length where Hypothesis's own index stays even.
    shares = Counter(_drawn(st.tuples(pooled((300, ("a",)), (700, ("b",))), st.integers())))
    assert sum(shares.values()) > 0
    late = sum(count for (value, _), count in shares.items() if value == "b")
    assert 0.6 < late / sum(shares.values()) < 0.8, shares


def test_a_long_pool_with_a_strategy_in_it_weighs_it_too():
    shares = Counter(type(value).__name__ for value in _drawn(pooled((1, range(700)), (300, st.text()))))
    assert 0.2 < shares["str"] / sum(shares.values()) < 0.4, shares


def test_uniform_is_sampled_from_for_a_short_table_and_reaches_the_end_of_a_long_one():
    assert repr(uniform(range(10))) == repr(st.sampled_from(range(10)))
    assert find(uniform(range(5_000)), lambda value: value >= 4_900) >= 4_900


def test_a_long_table_shrinks_to_its_first_item():
    assert find(uniform(tuple(range(5_000))), lambda value: True) == 0
    assert find(index(70_000), lambda at: at > 10) == 11


def test_pool_draws_what_pooled_draws_from_a_composite():
    choices = ((2, ("x", "y")), (1, st.integers(0, 3)))
    drawer = pool(*choices)

    @st.composite
    def with_pool(draw: st.DrawFn) -> object:
        return drawer(draw)

    from_pool, from_pooled = _drawn(with_pool(), seeds=1), _drawn(pooled(*choices), seeds=1)
    assert set(map(repr, from_pool)) == set(map(repr, from_pooled)) == {"'x'", "'y'", "0", "1", "2", "3"}


@pytest.mark.parametrize(("least", "most"), [(0, 3), (1, 5), (3, 6)])
def test_a_counted_list_reaches_every_length_within_its_sizes(least: int, most: int):
    drawn = _drawn(lists_of(st.integers(), least, most), seeds=1)
    lengths = Counter(len(values) for values in drawn)
    assert set(lengths) == set(range(least, most + 1)), lengths


def test_a_counted_list_shrinks_from_its_end():
    assert find(lists_of(st.integers(0, 9), 1, 5), lambda values: True) == [0]
    assert find(lists_of(st.integers(0, 9), 0, 5), lambda values: len(values) >= 2 and values[1] > 3) == [0, 4]


def test_pick_takes_an_item_of_any_length_of_sequence():
    @st.composite
    def picked(draw: st.DrawFn) -> tuple[int, int]:
        return pick(draw, range(3)), pick(draw, range(50_000))

    drawn = _drawn(picked(), seeds=1)
    assert {first for first, _ in drawn} == {0, 1, 2}
    assert max(second for _, second in drawn) > 25_000


def test_draw_index_is_the_index_strategy_as_a_plain_function():
    # The same choice scaled the same way: from one seed, both draw the same indexes.
    @st.composite
    def plain(draw: st.DrawFn) -> int:
        return draw_index(draw, 70_000)

    assert _drawn(plain(), seeds=2, examples=50) == _drawn(index(70_000), seeds=2, examples=50)
    assert find(plain(), lambda at: at > 10) == 11


@st.composite
def _each(draw: st.DrawFn) -> tuple[Any, ...]:
    return pick_each(draw, "abc", range(1_000), (True, False))


def test_pick_each_reaches_every_item_of_every_table_evenly():
    drawn = _drawn(_each())
    letters, numbers, flags = zip(*drawn, strict=True)
    assert set(letters) == set("abc") and set(flags) == {True, False}
    for table, seen in (("abc", letters), ((True, False), flags)):
        shares = Counter(seen)
        assert all(abs(shares[item] / len(seen) - 1 / len(table)) < 0.08 for item in table), shares
    late = sum(1 for number in numbers if number >= 500)
    assert 0.4 < late / len(numbers) < 0.6, late
    # Independent: each letter meets both flags and both halves of the numbers.
    assert {(letter, flag, number >= 500) for letter, number, flag in drawn} == {
        (letter, flag, late) for letter in "abc" for flag in (True, False) for late in (True, False)}


def test_pick_each_shrinks_to_the_first_of_each_table():
    assert find(_each(), lambda drawn: True) == ("a", 0, True)
    # The bound is met within the scaling's granularity every time. The other tables mostly stay at their first:
    # the shrinker can stop at a local minimum of the one index with the first table at its last item (from an
    # empty database, 4 of these 10 seeds end at ("c", 700..707, True)). Seeded: the same ten searches each run.
    found = [find(_each(), lambda drawn: drawn[1] >= 700, settings=settings(database=None), random=Random(seed))
             for seed in range(10)]
    assert all(700 <= number < 710 and flag is True for _, number, flag in found), found
    assert sum(letter == "a" for letter, _, _ in found) >= 5, found
