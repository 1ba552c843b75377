"""metric.compute: a metric config and one reward dict (or None) per trial.

Rewards arrive here as harbor's VerifierResult leaves them: ``float`` or
``int`` values, never bools (pydantic has already turned ``true`` into 1.0;
the reward.parse generator covers that step). Each built-in metric meets the
reward lists that tell its plausible reimplementations apart, besides the
everyday ones: ``sum`` and ``mean`` the lists whose sum depends on how it is
added (cancellation, overflow, ints past 2**53 or across the C long), ``min``
and ``max`` the lists of ties (1 and 1.0, 0.0 and -0.0) with a NaN in any
place. Such a list is often one of several reward keys, each aggregated on its
own, so one input holds several chances to tell an implementation apart.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.weights import weighted

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


# The everyday lists: one key everywhere or several, null trials and empty dicts, any value.
everyday = st.one_of(
    KEYS.flatmap(_same_key_rewards),
    st.lists(st.one_of(st.none(), reward_dict), max_size=10),
    st.lists(st.sampled_from(AWKWARD_FLOATS + AWKWARD_INTS).map(lambda v: {"reward": v}), max_size=12),
)

# -- columns: the values of one reward key, trial by trial ------------------------------------------------

# Few finite magnitudes far apart: the lists on which compensated, exact and
# naive summation give different last bits.
CANCELLING = (1.0, -1.0, 3.0, 0.1, 1e16, -1e16, 1e-16, 2.0**53, -(2.0**53), 1e100, -1e100)
cancelling = st.lists(st.sampled_from(CANCELLING), min_size=2, max_size=6)

# Multisets whose sum differs, in every order, between left-to-right addition,
# CPython 3.12's compensated sum() and the correctly rounded math.fsum (found by
# exhaustive search over small lists of the magnitudes above).
HARD_SUMS = (
    (1.0, 1e16, 1e-16), (1.0, -1e16, 1e-16), (1.0, 1e-16, 2.0**53), (0.1, -1e100, -1e100, -1e100),
    (0.1,) * 10, (1.0, 1e100, 1.0, -1e100), (0.1, 0.2, 0.3),
)
hard_sums = st.sampled_from(HARD_SUMS).flatmap(st.permutations).map(list)

# Sums that overflow to inf, or come back from it: the compensation is not finite there.
OVERFLOWING = (1e308, -1e308, 1.7976931348623157e308, 1.0, 1e292)
overflowing = st.lists(st.sampled_from(OVERFLOWING), min_size=2, max_size=4)

# Ints past 2**53 that a float cannot hold (odd ones): an exact int sum divided once, or converted first.
# Three or more, as the mean of two is a halving, exact on a float as on an int.
big_int = st.one_of(st.integers(2**52, 2**65).map(lambda v: 2 * v + 1), st.integers(2**52, 2**65).map(
    lambda v: -2 * v - 1), st.integers(-3, 3))
big_ints = st.lists(big_int, min_size=3, max_size=8)


@st.composite
def across_the_long_boundary(draw: st.DrawFn) -> list:
    """Ints whose running total leaves (or nears) the C long, then floats, some cancelling that total.

    CPython's sum() adds ints in a C long, moves to a compensated float sum when a float arrives, and
    falls back to plain addition once the int total has overflowed: which phase a float meets decides
    whether the small floats after it survive the cancellation.
    """
    ints = draw(st.lists(st.sampled_from([2**62, 2**62 + 1, LONG - 1, 1, 3, -(2**62), -LONG + 1]), min_size=1,
                         max_size=4))
    small = st.sampled_from([1.0, -1.0, 0.5, 3.0, 1e-16])
    # Small floats, the int total negated (the small ones are all that is left, if they were kept), more small ones.
    values = ints + draw(st.lists(small, min_size=1, max_size=3)) + [-float(sum(ints))] + draw(
        st.lists(small, max_size=2))
    if draw(st.booleans()):
        values = draw(st.permutations(values))
    return values


# Values that tie (1 and 1.0, 0, 0.0 and -0.0) from a pool small enough that the extreme is often tied,
# and mostly a NaN, first, in the middle or last: min() and max() keep the first of equal values, and a
# NaN only when it comes first (nothing compares greater or less than it).
TIES = (-0.0, 0.0, 0, 1, 1.0, 0.5)


@st.composite
def ties(draw: st.DrawFn) -> list:
    values = draw(st.lists(st.sampled_from(TIES), min_size=1, max_size=5))
    if draw(st.integers(0, 3)):  # a NaN, at any place
        values.insert(draw(st.integers(0, len(values))), float("nan"))
    return values


@st.composite
def keyed(draw: st.DrawFn, column: st.SearchStrategy[list]) -> list:
    """One to three columns as reward keys, each aggregated on its own; a key a trial lacks counts as 0.

    Sometimes a trial without a result (None) or with an empty dict among them: the int 0 it contributes
    joins every key.
    """
    columns = draw(st.lists(column, min_size=1, max_size=3))
    keys = ("reward", "Z", "a")  # several keys come out in code-point order: Z, a, reward
    trials: list = [{key: values[i] for key, values in zip(keys, columns, strict=False) if i < len(values)}
                    for i in range(max(map(len, columns)))]
    if draw(st.integers(0, 3)) == 3:  # not at 0, so that shrinking leaves it out
        trials.insert(draw(st.integers(0, len(trials))), draw(st.sampled_from([None, {}])))
    return trials


@st.composite
def floats_then_ints(draw: st.DrawFn) -> list:
    """A float first, then ints near 2**53 and small ones: once the total is a float, CPython adds each
    C-long int to it plainly (no compensation), so small ints next to a large total round away one by one."""
    first = draw(st.sampled_from([0.5, 1.0, 0.1, -0.0, 3.0]))
    large = draw(st.lists(st.sampled_from([2**53, 2**53 + 1, 2**54, -(2**53), 10**16]), min_size=1, max_size=2))
    small = draw(st.lists(st.sampled_from([1, 1, 2, 3, -1]), min_size=1, max_size=4))
    return [first, *large, *small]


float_sums = keyed(st.one_of(hard_sums, cancelling, overflowing))
int_sums = keyed(st.one_of(big_ints, across_the_long_boundary(), floats_then_ints()))
tied = keyed(ties())

# -- metric configs ----------------------------------------------------------------------------------------

BUILTIN = ("mean", "max", "min", "sum")
# Metric objects MetricConfig refuses, or reads as a built-in whose constructor refuses its kwargs, or
# reads with a default or while ignoring a key. Each part varies on its own (a fixed list of whole configs
# spreads a small share of the draws too thin): the type, the kwargs, a key harbor does not know.
_ABSENT = object()
# Each kind of type as often as a built-in one: a config with a built-in type is odd by its kwargs only.
ODD_TYPES = weighted(
    (1, st.sampled_from(BUILTIN)),
    (1, st.none()),
    (1, st.sampled_from(["MEAN", "Sum", "mAx"])),  # harbor matches type names case by case
    (1, st.sampled_from(["", "median", "uv-script", 1])),
    (1, st.just(_ABSENT)),
)
ODD_KWARGS = weighted(
    (1, st.just(_ABSENT)),
    (1, st.none()),
    (1, st.sampled_from([{}, [], {"x": 1}, {1: "x"}, {"script_path": "metric.py"}])),
)


@st.composite
def odd_configs(draw: st.DrawFn) -> dict[Any, Any]:
    kind, kwargs = draw(ODD_TYPES), draw(ODD_KWARGS)
    config: dict[Any, Any] = {} if kind is _ABSENT else {"type": kind}
    if kwargs is not _ABSENT:
        config["kwargs"] = kwargs
    return {**config, **draw(st.sampled_from([{}, {}, {}, {"name": "best"}, {"Type": "max"}]))}


# -- uv-script metrics ---------------------------------------------------------------------------------------

# uv-script metrics run the corpus's own scripts (cases/metric.compute/scripts/): one that writes the
# rewards file back as harbor wrote it, one with several outputs, one that fails. Each run costs a
# `uv run` on both sides, so they are a small share of the draws.
UV_SCRIPTS = ("echo_lines.py", "pass_rate.py", "fails.py")
# Scripts whose output is not a metric object: a JSON list, text that is not JSON, no file at all.
ODD_OUTPUT_SCRIPTS = ("writes_list.py", "writes_not_json.py", "writes_nothing.py")


@functools.cache
def shipped_scripts(names: tuple[str, ...] = UV_SCRIPTS) -> dict[str, bytes]:
    """The scripts of ``names`` the corpus has, by name: read once, when a uv-script input is first drawn."""
    from conformance.corpus.cases import default_root

    folder = default_root() / "metric.compute" / "scripts"
    return {name: (folder / name).read_bytes() for name in names if (folder / name).is_file()}


# Keys as JSON writers spell them differently: non-ASCII (ensure_ascii escapes it, a surrogate pair past
# the BMP), quotes, backslashes, control characters, and the line separators JSON allows raw.
JSON_KEYS = st.sampled_from(["reward", "ü", "键", "😀", 'q"uote', "back\\slash", "tab\t", "\u2028", "\x7f"])


def _uv_script_inputs() -> st.SearchStrategy[dict]:
    shipped = shipped_scripts(UV_SCRIPTS + ODD_OUTPUT_SCRIPTS)
    if not shipped:
        return st.nothing()
    # echo_lines.py shows the rewards file byte for byte: it is drawn as often as all the others together,
    # and it alone gets varied rewards (another script's output says little of them). "missing": a script
    # the input names but does not ship.
    others = sorted(name for name in shipped if name != "echo_lines.py")
    echo = ["echo_lines.py"] * (len(others) + 1) if "echo_lines.py" in shipped else []
    # Values as json.dumps spells them: NaN and the infinities as tokens, -0.0, big ints, tiny floats.
    value = st.one_of(reward_value, st.sampled_from((float("nan"), float("inf"), float("-inf"), -0.0, 2**64, 1e-300)))
    trial = st.one_of(st.none(), reward_dict, st.dictionaries(JSON_KEYS, value, min_size=1, max_size=2))

    @st.composite
    def inputs(draw: st.DrawFn) -> dict:
        pick = draw(st.sampled_from(["missing", *echo, *others]))  # first: drawn most, and it costs no uv run
        name = sorted(shipped)[0] if pick == "missing" else pick
        rewards = draw(st.lists(trial, min_size=1, max_size=5)) if pick == "echo_lines.py" else [{"reward": 1}, None]
        return {"metric": {"type": "uv-script", "kwargs": {"script_path": name}}, "rewards": rewards,
                **({"scripts": {name: shipped[name]}} if pick != "missing" else {})}

    return inputs()


uv_script_inputs = st.deferred(_uv_script_inputs)  # one strategy, built on its first draw

# -- the inputs --------------------------------------------------------------------------------------------

# What a built-in metric meets, by plan: odd configs (a single choice each), no trials, the sums that tell
# summations apart, the ties and NaNs that tell extremes apart, and the everyday lists.
PLANS: tuple[tuple[str, st.SearchStrategy[list] | None], ...] = (
    ("config", None), ("config", None), ("config", None), ("no-trials", st.just([])), ("sum", float_sums),
    ("mean", float_sums), ("sum", int_sums), ("mean", int_sums), ("mean", keyed(big_ints)), ("min", tied),
    ("max", tied), ("any", everyday), ("any", everyday), ("any", everyday),
)


@st.composite
def builtin_inputs(draw: st.DrawFn) -> dict:
    kind, lists = PLANS[draw(st.integers(0, len(PLANS) - 1))]
    if lists is None:  # the config fails, or is read as a built-in
        # Everyday rewards beside it: Hypothesis draws a branch with few distinct values less than its share.
        return {"metric": draw(odd_configs()), "rewards": draw(everyday)}
    kind = kind if kind in BUILTIN else draw(st.sampled_from(BUILTIN))
    return {"metric": draw(st.sampled_from([{"type": kind}, {"type": kind, "kwargs": {}}])), "rewards": draw(lists)}


@st.composite
def metric_inputs(draw: st.DrawFn) -> dict:
    # A uv-script metric costs a `uv run` on each side: one draw in six (not at an end of the range, which
    # Hypothesis favours).
    return draw(uv_script_inputs if draw(st.integers(0, 11)) in (3, 8) else builtin_inputs())
