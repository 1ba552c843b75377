"""metric.compute: a metric config and one reward dict (or None) per trial.

Rewards arrive here as harbor's VerifierResult leaves them: ``float`` or
``int`` values, never bools (pydantic has already turned ``true`` into 1.0;
the reward.parse generator covers that step).
"""

from __future__ import annotations

import functools

from hypothesis import strategies as st

LONG = 2**63
# Magnitudes whose sum depends on the order and method of addition, and ints at
# the C-long boundary where CPython's sum() changes algorithm.
AWKWARD_FLOATS = (0.1, 0.2, 0.3, 0.7, 1.0, 3.0, 1e16, -1e16, 1e100, -1e100, 2.0**53, 2.0**53 + 2, 1e308, -1e308,
                  1e-16, 5e-324, -5e-324, 2.2250738585072014e-308, -0.0, 0.0, float("inf"), float("-inf"),
                  float("nan"), 1 / 3, 2 / 3)
AWKWARD_INTS = (0, 1, -1, 2, LONG - 1, LONG, -LONG, -LONG - 1, 10**20, -(10**20), 2**53 + 1)

reward_value = st.one_of(
    st.sampled_from([0, 1, 0.0, 1.0, 0.5]),
    st.sampled_from(AWKWARD_FLOATS),
    st.sampled_from(AWKWARD_INTS),
    st.floats(),
    st.floats(allow_subnormal=True, min_value=-1e-300, max_value=1e-300),
    st.integers(-10, 10),
    st.integers(),
)
KEYS = st.sampled_from(["reward", "reward", "accuracy", "pass", "a", "b", "Z", "", "ü", "reward_1", "10", "9"])

reward_dict = st.dictionaries(KEYS, reward_value, max_size=3)


def _same_key_rewards(key: str) -> st.SearchStrategy[list]:
    # The common job: one key everywhere, some trials without a result.
    return st.lists(st.one_of(st.none(), st.just({}), reward_value.map(lambda v: {key: v}),
                              reward_value.map(lambda v: {key: v})), max_size=12)


# Few finite magnitudes far apart: the lists on which compensated, exact and
# naive summation give different last bits.
CANCELLING = (1.0, -1.0, 3.0, 0.1, 1e16, -1e16, 1e-16, 2.0**53, -(2.0**53), 1e100, -1e100)
cancelling = st.lists(st.sampled_from(CANCELLING).map(lambda v: {"reward": v}), min_size=2, max_size=6)

# Multisets whose sum differs, in every order, between left-to-right addition,
# CPython 3.12's compensated sum() and the correctly rounded math.fsum (found by
# exhaustive search over small lists of the magnitudes above).
HARD_SUMS = (
    (1.0, 1e16, 1e-16), (1.0, -1e16, 1e-16), (1.0, 1e-16, 2.0**53), (0.1, -1e100, -1e100, -1e100),
    (0.1,) * 10, (1.0, 1e100, 1.0, -1e100), (0.1, 0.2, 0.3),
)
hard_sums = st.sampled_from(HARD_SUMS).flatmap(st.permutations).map(lambda vs: [{"reward": v} for v in vs])

rewards = st.one_of(
    cancelling,
    hard_sums,
    KEYS.flatmap(_same_key_rewards),
    st.lists(st.one_of(st.none(), reward_dict), max_size=10),
    st.lists(st.sampled_from(AWKWARD_FLOATS + AWKWARD_INTS).map(lambda v: {"reward": v}), max_size=12),
)

BUILTIN = ("mean", "max", "min", "sum")
metric_config = st.one_of(
    st.sampled_from(BUILTIN).map(lambda t: {"type": t}),
    st.sampled_from(BUILTIN).map(lambda t: {"type": t}),
    st.sampled_from(BUILTIN).map(lambda t: {"type": t, "kwargs": {}}),
    st.just({}),
    st.sampled_from([{"type": "median"}, {"type": "MEAN"}, {"type": None}, {"type": "mean", "kwargs": {"x": 1}},
                     {"type": "max", "extra": 1}, {"kwargs": {}}]),
)

# uv-script metrics run the corpus's own scripts (cases/metric.compute/scripts/): one that writes the
# rewards file back as harbor wrote it, one with several outputs, one that fails. Each run costs a
# `uv run` on both sides, so they are a small share of the draws.
UV_SCRIPTS = ("echo_lines.py", "pass_rate.py", "fails.py")


@functools.cache
def shipped_scripts() -> dict[str, bytes]:
    """The UV_SCRIPTS the corpus has, by name: read once, when a uv-script input is first drawn."""
    from conformance.corpus.cases import default_root

    folder = default_root() / "metric.compute" / "scripts"
    return {name: (folder / name).read_bytes() for name in UV_SCRIPTS if (folder / name).is_file()}


def _uv_script_inputs() -> st.SearchStrategy[dict]:
    shipped = shipped_scripts()
    if not shipped:
        return st.nothing()
    return st.builds(
        lambda name, rewards, ship: {"metric": {"type": "uv-script", "kwargs": {"script_path": name}},
                                     "rewards": rewards, **({"scripts": {name: shipped[name]}} if ship else {})},
        st.sampled_from(sorted(shipped)),
        st.lists(st.one_of(st.none(), reward_dict), max_size=5),
        st.sampled_from([True, True, True, False]),  # sometimes the named script is missing
    )


builtin_inputs = st.fixed_dictionaries({"metric": metric_config, "rewards": rewards})
# one_of weighs distinct branches alike (a repeated branch counts once): pick uv-script one time in ten.
uv_script_inputs = st.deferred(_uv_script_inputs)  # one strategy, built on its first draw
metric_inputs = st.sampled_from(range(10)).flatmap(lambda i: uv_script_inputs if i == 9 else builtin_inputs)
