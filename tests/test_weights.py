"""``weighted``: a branch's weight shows in how often it is drawn, where repeating it in ``one_of`` does not."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from conformance.strategies.weights import weighted


def _shares(strategy: st.SearchStrategy[str]) -> Counter[str]:
    drawn: Counter[str] = Counter()

    @seed(0)
    @settings(max_examples=400, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.tuples(strategy, st.integers()))  # the integer keeps equal draws of a branch distinct examples
    def draw(pair: tuple[str, int]) -> None:
        drawn[pair[0]] += 1

    draw()
    return drawn


def test_a_heavier_branch_is_drawn_more():
    common, rare = st.just("common"), st.just("rare")
    shares = _shares(weighted((6, common), (1, rare)))
    assert shares["common"] > 3 * shares["rare"] > 0


def test_one_of_counts_a_repeated_branch_once():
    """Why ``weighted`` exists: the same strategy object listed six times weighs as much as once."""
    common, rare = st.just("common"), st.just("rare")
    shares = _shares(st.one_of(*[common] * 6, rare))
    assert shares["common"] < 2 * shares["rare"]


def _strategy_modules() -> list:
    import importlib
    import pkgutil

    import conformance.strategies
    import conformance.surfaces

    names = [f"conformance.strategies.{info.name}" for info in pkgutil.iter_modules(conformance.strategies.__path__)]
    names += [f"conformance.surfaces.{info.name}.strategy"
              for info in pkgutil.iter_modules(conformance.surfaces.__path__) if info.ispkg]
    return [importlib.import_module(name) for name in names]


def test_no_strategy_of_the_suite_repeats_a_branch_in_one_of():
    """A branch listed twice in ``one_of`` reads as a weight and is none: every such module-level strategy of
    the surfaces and the shared strategies lists each branch once (``weighted`` is for weights)."""
    from hypothesis.strategies._internal.strategies import OneOfStrategy

    modules = _strategy_modules()
    assert len(modules) >= 10
    repeated = [f"{module.__name__}.{name}" for module in modules for name, value in vars(module).items()
                if isinstance(value, OneOfStrategy)
                and len({id(branch) for branch in value.original_strategies}) < len(value.original_strategies)]
    assert repeated == []


def test_the_guard_sees_a_repeated_branch():
    from hypothesis.strategies._internal.strategies import OneOfStrategy

    branch = st.integers()
    strategy = st.one_of(branch, branch, st.none())
    assert isinstance(strategy, OneOfStrategy)
    assert len({id(b) for b in strategy.original_strategies}) < len(strategy.original_strategies)
