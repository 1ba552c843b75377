"""Rewards dicts of a few keys, in any order: the order is what a wrong implementation gets wrong."""

from hypothesis import strategies as st

inputs = st.fixed_dictionaries({
    "rewards": st.dictionaries(st.text("abcxyz", min_size=1, max_size=3), st.integers(0, 1), max_size=4),
})
