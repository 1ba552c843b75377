"""Composite strategies that Hypothesis tells apart by what they were built from.

Hypothesis labels a composite strategy by its function alone: ``padded(a, b)``
and ``padded(c, d)`` share one label, as do all the strategies a factory
builds from one inner function (every ``pooled`` table). Its generate phase
follows each fresh input with variations that copy one span of choices over
another span of the same label. Across strategies that share a label by
accident, the copy lands on choices of another shape, and the run spends its
calls on inputs it throws away (an overrun) or has already seen: on
reward.parse a third of the calls and two in three of the variations were
spent so, before each strategy had a label of its own.

``composite`` is ``st.composite`` with the arguments in the label: the same
function with other arguments is another strategy to Hypothesis; with the
same arguments, the same one (within a process, as Hypothesis's own labels).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Concatenate, ParamSpec, TypeVar

from hypothesis import strategies as st

from conformance.strategies.direct import direct_later

P = ParamSpec("P")
T = TypeVar("T")

_PLAIN = (str, bytes, int, float, bool, type(None))


def argument_key(definition: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str:
    """What a strategy was built from, as text: the function's name and each argument (a strategy by its
    label, a plain value by its repr, anything else by its type)."""
    parts = [definition.__module__, definition.__qualname__, *map(_part, args)]
    parts += [f"{name}={_part(value)}" for name, value in sorted(kwargs.items())]
    return "|".join(parts)


def _part(value: Any) -> str:
    if isinstance(value, st.SearchStrategy):
        return f"<{value.label}>"
    if isinstance(value, (*_PLAIN, range)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(map(_part, value)) + ")"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_part(key)}:{_part(item)}" for key, item in value.items()) + "}"
    return type(value).__qualname__  # an object() marker: no repr that is the same in every process


def composite(definition: Callable[Concatenate[st.DrawFn, P], T]) -> Callable[P, st.SearchStrategy[T]]:
    """``st.composite``, labelled by its arguments as well as its function."""

    @functools.wraps(definition)
    def factory(*args: P.args, **kwargs: P.kwargs) -> st.SearchStrategy[T]:
        key = argument_key(definition, args, kwargs)

        # The strategies among the arguments, direct from the first draw on.
        positional, named = direct_later(args), direct_later(list(kwargs.values()))

        # Hypothesis's label of a function counts its defaults: the key makes this one's label.
        def draw_with(draw: st.DrawFn, _key: str = key) -> T:
            return definition(draw, *positional(), **dict(zip(kwargs, named(), strict=True)))

        draw_with.__name__, draw_with.__qualname__ = definition.__name__, definition.__qualname__
        return st.composite(draw_with)()

    return factory
