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
import itertools
import math
import random
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.labels import composite
from conformance.strategies.picks import lists_of, pick, pick_each, sequence_of
from conformance.strategies.weights import pool, pooled, weighted

LONG = 2**63
# Magnitudes whose sum depends on the order and method of addition, and ints at
# the C-long boundary where CPython's sum() changes algorithm.
AWKWARD_FLOATS = (0.1, 0.2, 0.3, 0.7, 1.0, 3.0, 1e16, -1e16, 1e100, -1e100, 2.0**53, 2.0**53 + 2, 1e308, -1e308,
                  1e-16, 5e-324, -5e-324, 2.2250738585072014e-308, -0.0, 0.0, float("inf"), float("-inf"),
                  float("nan"), 1 / 3, 2 / 3)
AWKWARD_INTS = (0, 1, -1, 2, LONG - 1, LONG, -LONG, -LONG - 1, 10**20, -(10**20), 2**53 + 1)

# Seven families alike: common values, awkward floats, awkward ints, any float, tiny floats, small ints, any int.
# The fixed values are pooled (one choice each, where a branch then a value is two): a list of rewards is most
# of a draw, and Hypothesis's cost is by the choice.
REWARD_VALUES: tuple[tuple[int, Any], ...] = (
    (5, (0, 1, 0.0, 1.0, 0.5)),
    (1, AWKWARD_FLOATS),
    (2, AWKWARD_INTS),
    (25, st.floats()),
    (25, st.floats(allow_subnormal=True, min_value=-1e-300, max_value=1e-300)),
    (1, range(-10, 11)),
    (25, st.integers()),
)
reward_value = pooled(*REWARD_VALUES)
KEY_NAMES = ("reward", "reward", "accuracy", "pass", "a", "b", "Z", "", "ü", "reward_1", "10", "9")
KEYS = st.sampled_from(KEY_NAMES)

# A reward dict: no key or up to three distinct ones in any order, each size alike, as one pick; then a value
# each (st.dictionaries draws a choice for each key's being there, and draws again a key already drawn).
def _key_orders(names: Sequence[str], least: int, most: int) -> list[tuple[str, ...]]:
    """Every order of ``least`` to ``most`` distinct ``names``, each size as likely as the others."""
    return [order for size in range(least, most + 1) for order in itertools.permutations(names, size)
            for _ in range(math.perm(len(names), most) // math.perm(len(names), size))]


KEY_ORDERS = _key_orders(tuple(dict.fromkeys(KEY_NAMES)), 0, 3)
_REWARD_VALUE = pool(*REWARD_VALUES)


@st.composite
def _reward_dict(draw: st.DrawFn) -> dict:
    return {key: _REWARD_VALUE(draw) for key in pick(draw, KEY_ORDERS)}


reward_dict = _reward_dict()

# A trial of the common job, one key everywhere: without a result (null or {}) half the time, else a value.
_NULL, _EMPTY = object(), object()
same_key_trial = pooled((81, (_NULL, _EMPTY)), *REWARD_VALUES)
same_key_trials = lists_of(same_key_trial, max_size=12)


@st.composite
def same_key_rewards(draw: st.DrawFn) -> list:
    key = pick(draw, KEY_NAMES)
    return [None if value is _NULL else {} if value is _EMPTY else {key: value} for value in draw(same_key_trials)]


# The everyday lists: one key everywhere or several, null trials and empty dicts, any value.
everyday = weighted(
    (1, same_key_rewards()),
    (1, lists_of(weighted((1, st.none()), (1, reward_dict)), max_size=10)),
    (1, sequence_of(AWKWARD_FLOATS + AWKWARD_INTS, max_size=12).map(
        lambda values: [{"reward": value} for value in values])),
)

# -- columns: the values of one reward key, trial by trial ------------------------------------------------

# Few finite magnitudes far apart: the lists on which compensated, exact and
# naive summation give different last bits.
CANCELLING = (1.0, -1.0, 3.0, 0.1, 1e16, -1e16, 1e-16, 2.0**53, -(2.0**53), 1e100, -1e100)
cancelling = sequence_of(CANCELLING, min_size=2, max_size=6)

# Multisets on which CPython 3.12's compensated sum() parts from another way of
# adding: the correctly rounded math.fsum, or left-to-right addition (found by
# exhaustive search over small lists of the magnitudes above).
HARD_SUMS = (
    (1.0, 1e16, 1e-16), (1.0, -1e16, 1e-16), (1.0, 1e-16, 2.0**53), (0.1, -1e100, -1e100, -1e100),
    (0.1,) * 10, (1.0, 1e100, 1.0, -1e100), (0.1, 0.2, 0.3),
)


def _orders(values: tuple[float, ...]) -> list[tuple[float, ...]]:
    """Every distinct order of ``values``, the given one first."""
    if not values:
        return [()]
    orders = []
    for first in dict.fromkeys(values):
        rest = list(values)
        rest.remove(first)
        orders += [(first, *tail) for tail in _orders(tuple(rest))]
    return orders


# Every order of each, one choice in all (a permutation drawn item by item costs a choice an item).
hard_sums = st.sampled_from([order for values in HARD_SUMS for order in _orders(values)]).map(list)
# Which wrong summation each tells: the first four are summed alike left to right and compensated but not by
# math.fsum (in every order); the others a left-to-right addition gets wrong (in most orders: 15 of 19), the
# shortest first, where a shrink goes.
FSUM_APART = HARD_SUMS[:4]
NAIVE_APART = tuple(sorted(HARD_SUMS[4:], key=len))
fsum_apart = st.sampled_from([order for values in FSUM_APART for order in _orders(values)]).map(list)
naive_apart = st.sampled_from([order for values in NAIVE_APART for order in _orders(values)]).map(list)

# Sums that overflow to inf, or come back from it: the compensation is not finite there.
OVERFLOWING = (1e308, -1e308, 1.7976931348623157e308, 1.0, 1e292)
overflowing = sequence_of(OVERFLOWING, min_size=2, max_size=4)

# Ints past 2**53 that a float cannot hold (odd ones): an exact int sum divided once, or converted first.
# Three or more, as the mean of two is a halving, exact on a float as on an int.
# Three to six, each an odd int past 2**53 of either sign or a small int (a third each), from a seed: their
# values need no shrinking of their own (a failing list shrinks by the plan and the columns), and a draw each
# was most of the plan's cost.
def _big_ints(seed: int) -> list[int]:
    rng = random.Random(seed)
    values = []
    for _ in range(rng.randint(3, 6)):
        form = rng.randrange(3)
        value = 2 * rng.randint(2**52, 2**65) + 1
        values.append(rng.randint(-3, 3) if form == 2 else value if form == 0 else -value)
    return values


big_ints = st.integers(0, 2**32 - 1).map(_big_ints)


@st.composite
def across_the_long_boundary(draw: st.DrawFn) -> list:
    """Ints whose running total leaves (or nears) the C long, then floats, some cancelling that total.

    CPython's sum() adds ints in a C long, moves to a compensated float sum when a float arrives, and
    falls back to plain addition once the int total has overflowed: which phase a float meets decides
    whether the small floats after it survive the cancellation.
    """
    ints = draw(_LONG_INTS)
    # Small floats, the int total negated (the small ones are all that is left, if they were kept), more small ones.
    values = ints + draw(_SMALL_FLOATS) + [-float(sum(ints))] + draw(_MORE_SMALL_FLOATS)
    if draw(st.booleans()):
        values = draw(st.permutations(values))
    return values


# Strategies a composite draws from are made once: one made in the draw is made and checked on every draw.
# Lists of fixed values are one choice each (sequence_of), where a list of picks is two choices an item.
_LONG_INTS = sequence_of([2**62, 2**62 + 1, LONG - 1, 1, 3, -(2**62), -LONG + 1], min_size=2, max_size=4)
_SMALL = (1.0, -1.0, 0.5, 3.0, 1e-16)
_SMALL_FLOATS = sequence_of(_SMALL, min_size=1, max_size=3)
_MORE_SMALL_FLOATS = sequence_of(_SMALL, max_size=2)


# Values that tie (1 and 1.0, 0, 0.0 and -0.0) from a pool small enough that the extreme is often tied,
# and mostly a NaN, first or between two values: min() and max() keep the first of equal values, and a NaN
# only when it comes first (nothing compares greater or less than it); a NaN inside the list splits what a
# sort orders, so the first or last of the sorted values is not min() or max().
TIES = (-0.0, 0.0, 0, 1, 1.0, 0.5)


@st.composite
def ties(draw: st.DrawFn) -> list:
    values = draw(_TIED)
    where = pick(draw, range(4))
    if where:  # a NaN: first (one in three of them), or between two values, where a sort puts it apart
        values.insert(0 if where == 1 else 1 + draw(_place(len(values) - 2)), float("nan"))
    return values


_TIED = sequence_of(TIES, min_size=2, max_size=5)  # a tie takes two


@functools.cache
def _place(length: int) -> st.SearchStrategy[int]:
    """A place to insert an item in a list of ``length``: before the first, between two, or after the last."""
    return st.integers(0, length)


@composite
def keyed(draw: st.DrawFn, column: st.SearchStrategy[list]) -> list:
    """One to three columns as reward keys, each aggregated on its own; a key a trial lacks counts as 0.

    Sometimes a trial without a result (None) or with an empty dict among them: the int 0 it contributes
    joins every key.
    """
    columns = draw(_columns(column))
    keys = ("reward", "Z", "a")  # several keys come out in code-point order: Z, a, reward
    trials: list = [{key: values[i] for key, values in zip(keys, columns, strict=False) if i < len(values)}
                    for i in range(max(map(len, columns)))]
    extra = pick(draw, EXTRA_TRIALS)  # the first is none, so that shrinking leaves it out
    if extra is not _NOT_ADDED:
        trials.insert(draw(_place(len(trials))), extra)
    return trials


# One time in three a trial without a result among them: null or an empty dict alike.
_NOT_ADDED = object()
EXTRA_TRIALS: tuple[object, ...] = (_NOT_ADDED,) * 4 + (None, {})


@functools.cache
def _columns(column: st.SearchStrategy[list]) -> st.SearchStrategy[list[list]]:
    return lists_of(column, min_size=1, max_size=3)


@st.composite
def floats_then_ints(draw: st.DrawFn) -> list:
    """A float first, then ints near 2**53 and small ones: once the total is a float, CPython adds each
    C-long int to it plainly (no compensation), so small ints next to a large total round away one by one."""
    return [pick(draw, (0.5, 1.0, 0.1, -0.0, 3.0)), *draw(_LARGE_INTS), *draw(_SMALL_INTS)]


_LARGE_INTS = sequence_of([2**53, 2**53 + 1, 2**54, -(2**53), 10**16], min_size=1, max_size=2)
_SMALL_INTS = sequence_of([1, 1, 2, 3, -1], min_size=1, max_size=4)


# The rarer families weigh more: a sum past the largest float, and ints whose running total leaves the C long;
# the hard sums each wrong summation gets wrong weigh as much as the cancelling lists.
float_sums = keyed(weighted((1, naive_apart), (1, fsum_apart), (1, cancelling), (2, overflowing)))
int_sums = keyed(weighted((1, big_ints), (2, across_the_long_boundary()), (1, floats_then_ints())))
tied = keyed(ties())

# -- metric configs ----------------------------------------------------------------------------------------

BUILTIN = ("mean", "max", "min", "sum")
# Metric objects MetricConfig refuses, or reads as a built-in whose constructor refuses its kwargs, or
# reads with a default or while ignoring a key. Each part varies on its own (a fixed list of whole configs
# spreads a small share of the draws too thin): the type, the kwargs, a key harbor does not know.
_ABSENT = object()
# Each kind of type as often as a built-in one: a config with a built-in type is odd by its kwargs only.
# Pooled: one choice each. Weights per value: built-ins a third, null, other cases (harbor matches type names
# case by case), other names and an absent type a sixth each.
ODD_TYPES = pooled((6, BUILTIN), (12, (None,)), (4, ("MEAN", "Sum", "mAx")), (3, ("", "median", "uv-script", 1)),
                   (12, (_ABSENT,)))
ODD_KWARGS = pooled((5, (_ABSENT, None)), (1, ({}, [], {"x": 1}, {1: "x"}, {"script_path": "metric.py"})))


@st.composite
def odd_configs(draw: st.DrawFn) -> dict[Any, Any]:
    kind, kwargs = draw(ODD_TYPES), draw(ODD_KWARGS)
    config: dict[Any, Any] = {} if kind is _ABSENT else {"type": kind}
    if kwargs is not _ABSENT:
        config["kwargs"] = kwargs
    return {**config, **pick(draw, ({}, {}, {}, {"name": "best"}, {"Type": "max"}))}


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
JSON_KEYS = ("reward", "ü", "键", "😀", 'q"uote', "back\\slash", "tab\t", "\u2028", "\x7f")
# One or two of them in any order, each size alike (one pick).
_JSON_KEY_ORDERS = _key_orders(JSON_KEYS, 1, 2)


def _uv_script_inputs() -> st.SearchStrategy[dict]:
    shipped = shipped_scripts(UV_SCRIPTS + ODD_OUTPUT_SCRIPTS)
    if not shipped:
        return st.nothing()
    # echo_lines.py shows the rewards file byte for byte, and pass_rate.py reads them: they get drawn rewards.
    # "missing": a script the input names but does not ship. The others' output does not depend on the rewards:
    # they get fixed ones, as drawn ones only made Hypothesis vary the input into runs of the same script, each
    # a uv run that tells nothing new. An input with fixed rewards has no variations, so these weigh more: every
    # name twice, echo_lines.py three times.
    names = ("missing", "missing",
             *(name for name in sorted(shipped) for _ in range(3 if name == "echo_lines.py" else 2)))
    drawn_rewards = {"echo_lines.py", "pass_rate.py"}
    # Values as json.dumps spells them: NaN and the infinities as tokens, -0.0, big ints, tiny floats.
    value = pool((6, reward_value), (1, (float("nan"), float("inf"), float("-inf"), -0.0, 2**64, 1e-300)))

    @st.composite
    def json_keyed(draw: st.DrawFn) -> dict:
        return {key: value(draw) for key in pick(draw, _JSON_KEY_ORDERS)}

    trial = pooled((2, (None,)), (2, reward_dict), (2, json_keyed()))
    trials = lists_of(trial, min_size=1, max_size=5)

    @st.composite
    def inputs(draw: st.DrawFn) -> dict:
        chosen = pick(draw, names)  # "missing" first: it costs no uv run
        name = sorted(shipped)[0] if chosen == "missing" else chosen
        rewards = draw(trials) if chosen in drawn_rewards else [{"reward": 1}, None]
        return {"metric": {"type": "uv-script", "kwargs": {"script_path": name}}, "rewards": rewards,
                **({"scripts": {name: shipped[name]}} if chosen != "missing" else {})}

    return inputs()


uv_script_inputs = st.deferred(_uv_script_inputs)  # one strategy, built on its first draw

# -- the inputs --------------------------------------------------------------------------------------------

# Configs with one telling thing odd, each a plan of its own (in odd_configs() it is one draw in many): a
# built-in type with kwargs its constructor refuses or null kwargs (read as none), a type in another case, a
# null type.
kwargs_refused = st.builds(lambda kind, kwargs: {"type": kind, "kwargs": kwargs}, st.sampled_from(BUILTIN),
                           st.sampled_from([{"x": 1}, {1: "x"}, {"script_path": "metric.py"}, [], None]))
miscased = st.builds(lambda kind: {"type": kind}, st.sampled_from(["MEAN", "Sum", "mAx", "Min"]))
null_type: st.SearchStrategy[dict] = st.sampled_from([{"type": None}, {"type": None, "kwargs": {}}])

# What a built-in metric meets, by plan: odd configs, no trials for each type, the sums that tell summations
# apart, the ties and NaNs that tell extremes apart, and the everyday lists. A plan names its type where one
# tells: a type drawn within a plan comes out uneven (Hypothesis favours the first), and no trials under
# `min` is a single input, which a run then draws at most once. Hypothesis draws a few variations of each
# input it draws afresh, so a plan has about a fifth of its share of fresh draws: each weighs in, and the float
# sums, which tell the summations a reimplementation most often gets wrong, weigh twice.
PLANS: tuple[tuple[str | st.SearchStrategy[dict], st.SearchStrategy[list]], ...] = (
    (odd_configs(), same_key_rewards()), (kwargs_refused, same_key_rewards()), (miscased, same_key_rewards()),
    (null_type, same_key_rewards()),
    ("mean", st.just([])), ("sum", st.just([])), ("min", st.just([])), ("max", st.just([])),
    ("sum", float_sums), ("sum", float_sums), ("mean", float_sums), ("mean", float_sums), ("sum", int_sums),
    ("mean", int_sums), ("sum", keyed(big_ints)), ("mean", keyed(big_ints)), ("min", tied), ("min", tied),
    ("max", tied), ("max", tied), ("any", everyday), ("any", everyday),
)


# A uv-script metric costs a `uv run` on each side: one input in six (after the others in the table, so that a
# shrink leaves it out).
UV_SHARE = (False,) * 5 + (True,)


@st.composite
def metric_inputs(draw: st.DrawFn) -> dict:
    # Whether it is a uv-script metric, the plan, the type a plan leaves open and whether a built-in config
    # spells out empty kwargs: one pick (each a choice of its own cost more than the picks).
    uv, (config, lists), kind, spelled = pick_each(draw, UV_SHARE, PLANS, BUILTIN, (False, True))
    if uv:
        return draw(uv_script_inputs)
    if isinstance(config, st.SearchStrategy):  # the config fails, or is read as a built-in
        return {"metric": draw(config), "rewards": draw(lists)}
    kind = config if config in BUILTIN else kind
    return {"metric": {"type": kind, "kwargs": {}} if spelled else {"type": kind}, "rewards": draw(lists)}
