"""The strategy Hypothesis draws when it is handed a lazy one.

Most strategies are lazy wrappers (``st.text(...)``, ``st.integers(...)``,
every composite), made at import, that build the real strategy on first use.
Hypothesis looks through the wrapper on every draw, at a cost beyond that of a
small draw itself. Where one strategy is drawn many times (a pool's branches,
a composite's arguments), the suite holds the real one instead from the first
draw on: the same choices and the same labels, so the same inputs.

Never at import: Hypothesis warns when strategies are built while pytest
loads its plugins, and an import should stay cheap.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st


def direct(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``strategy`` without its lazy wrappers (built now if it was not yet)."""
    while (inner := getattr(strategy, "wrapped_strategy", None)) is not None and inner is not strategy:
        strategy = inner
    return strategy


def direct_later(values: Sequence[Any]) -> Callable[[], list[Any]]:
    """A function giving ``values`` with each strategy among them made direct: made on its first call (in a
    draw), the same list on every call after."""
    return functools.cache(lambda: [direct(v) if isinstance(v, st.SearchStrategy) else v for v in values])
