"""A candidate's scope: the inputs it claims, from its handshake (``implementation.scope``).

An implementation that answers part of a surface says so, e.g. an evsys metric
plugin named ``pass@3`` claims ``{"evsys.metric": {"metric": ["pass@3"]}}``. It
is then certified on the scoped surfaces alone, on the cases whose input keys
hold a claimed value, and on generated inputs drawn to hold one; the report's
header carries the scope. No scope (None): every surface and input.
"""

from __future__ import annotations

from typing import Any

Scope = dict[str, dict[str, list[Any]]]


def surfaces(scope: Scope | None, names: list[str]) -> list[str]:
    """Of ``names``, those the scope claims."""
    return names if scope is None else [name for name in names if name in scope]


def claims(scope: Scope | None, surface: str, value: Any) -> bool:
    if scope is None:
        return True
    if surface not in scope:
        return False
    return all(isinstance(value, dict) and value.get(key) in allowed for key, allowed in scope[surface].items())


def restrict(strategy: Any, scope: Scope | None, surface: str) -> Any:
    """Generated inputs within the scope: each scoped key gets one of its claimed values."""
    from hypothesis import strategies as st

    if scope is None or not scope.get(surface):
        return strategy
    keys = scope[surface]
    claimed = st.fixed_dictionaries({key: st.sampled_from(allowed) for key, allowed in keys.items()})
    return st.tuples(strategy, claimed).map(lambda drawn: {**drawn[0], **drawn[1]})
