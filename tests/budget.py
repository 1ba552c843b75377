"""How many examples a property test draws.

A test states the count it was written for. The quick runs (the README's
command, the offline tier) draw a quarter of it, at least 50: most bugs a
property test finds, it finds in its first examples. CI then runs every
property test again under the ``thorough`` Hypothesis profile, where each
draws its whole count (``pytest -m "slow or property" --hypothesis-profile
thorough``; ``nox -s slow`` does the same). Tests whose assertions are
statistics over their draws keep a fixed count instead.
"""

from __future__ import annotations

from hypothesis import settings

THOROUGH = "thorough"
settings.register_profile(THOROUGH)  # the default settings: every test keeps the count it states


def examples(full: int) -> int:
    """``full`` in the thorough profile, a quarter of it (at least 50) otherwise."""
    if settings.get_current_profile_name() == THOROUGH:
        return full
    return min(full, max(50, full // 4))
