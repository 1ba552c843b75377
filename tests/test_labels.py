"""Strategies built from one function with other arguments are other strategies to Hypothesis (their labels
differ), so its variations never copy choices from one into the other; and lists of fixed values are one
choice that shrinks to the first item."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, find, given, seed, settings
from hypothesis import strategies as st

from conformance.strategies.labels import composite
from conformance.strategies.picks import sequence_of
from conformance.strategies.weights import pooled, weighted
from tests.test_weights import _strategy_modules


def _label(strategy: st.SearchStrategy[object]) -> int:
    return strategy.label


@composite
def _wrapped(draw: st.DrawFn, inner: st.SearchStrategy[str], mark: str) -> str:
    return mark + draw(inner) + mark


@st.composite
def _plain(draw: st.DrawFn, inner: st.SearchStrategy[str]) -> str:
    return draw(inner)


def test_st_composite_labels_a_strategy_by_its_function_alone():
    """Why ``labels.composite`` exists: with st.composite, other arguments make the same label."""
    assert _label(_plain(st.text())) == _label(_plain(st.integers().map(str)))


def test_other_arguments_make_another_label():
    assert _label(_wrapped(st.text(), "x")) != _label(_wrapped(st.integers().map(str), "x"))
    assert _label(_wrapped(st.text(), "x")) != _label(_wrapped(st.text(), "y"))


def test_the_same_arguments_make_the_same_label():
    text = st.text(max_size=3)
    assert _label(_wrapped(text, "x")) == _label(_wrapped(text, "x"))
    assert _label(_wrapped(st.text(max_size=3), "x")) == _label(_wrapped(st.text(max_size=3), "x"))


def test_each_pool_and_weighting_has_a_label_of_its_own():
    assert _label(pooled((1, ("a", "b")), (2, st.text()))) != _label(pooled((1, ("c",)), (2, st.text())))
    assert _label(pooled((1, ("a",)), (2, st.text()))) != _label(pooled((2, ("a",)), (2, st.text())))
    assert _label(weighted((1, st.text()), (2, st.none()))) != _label(weighted((2, st.text()), (1, st.none())))
    assert _label(weighted((1, st.text()), (2, st.none()))) == _label(weighted((1, st.text()), (2, st.none())))


def test_a_labelled_composite_draws_what_its_function_returns():
    @seed(0)
    @settings(max_examples=50, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(_wrapped(st.sampled_from(["a", "b"]), "|"))
    def check(value: str) -> None:
        assert value in ("|a|", "|b|")

    check()


def _composites_with_arguments(path: Path) -> list[str]:
    """Functions decorated with ``st.composite`` that take more than ``draw`` (and ``_key``, a label's own)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.FunctionDef):
            continue
        arguments = {arg.arg for arg in node.args.args[1:] + node.args.kwonlyargs} - {"_key"}
        if arguments and any(ast.unparse(decorator) == "st.composite" for decorator in node.decorator_list):
            found.append(f"{path.name}:{node.lineno} {node.name}")
    return found


def test_no_composite_of_the_suite_with_arguments_shares_its_label():
    """Every composite of the surfaces' and the shared strategies that takes arguments is labelled by them."""
    modules = _strategy_modules()
    found = [hit for module in modules for hit in _composites_with_arguments(Path(inspect.getfile(module)))]
    assert found == []


def test_the_guard_sees_an_unlabelled_composite_with_arguments():
    line = Path(__file__).read_text(encoding="utf-8").splitlines().index(
        "def _plain(draw: st.DrawFn, inner: st.SearchStrategy[str]) -> str:") + 1
    assert _composites_with_arguments(Path(__file__)) == [f"{Path(__file__).name}:{line} _plain"]


ITEMS = (0.5, -0.0, 7, "x")


def test_a_sequence_holds_items_within_its_sizes():
    @seed(0)
    @settings(max_examples=100, database=None, deadline=None)
    @given(sequence_of(ITEMS, min_size=2, max_size=5))
    def check(values: list[object]) -> None:
        assert 2 <= len(values) <= 5
        assert all(any(value is item for item in ITEMS) for value in values)

    check()


def test_a_sequence_shrinks_to_the_first_item():
    assert find(sequence_of(ITEMS, min_size=3, max_size=6), lambda values: True) == [0.5, 0.5, 0.5]
    assert find(sequence_of(ITEMS, max_size=6), lambda values: len(values) >= 2) == [0.5, 0.5]


def test_a_sequence_reaches_every_item():
    seen = find(sequence_of(ITEMS, max_size=8), lambda values: {repr(v) for v in values} >= {repr(v) for v in ITEMS},
                settings=settings(database=None, max_examples=2000))
    assert len(seen) >= len(ITEMS)


@pytest.mark.parametrize("items", [(), tuple(range(0xD800))])
def test_a_sequence_of_no_items_or_too_many_is_refused(items: tuple[object, ...]):
    with pytest.raises(ValueError, match="sequence_of takes"):
        sequence_of(items)
