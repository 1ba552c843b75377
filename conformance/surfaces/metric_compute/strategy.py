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

The everyday lists, the keyed lists' columns and the odd configs are built
from a seed each draws (a draw per value made generation slow); a keyed list
still shrinks to one column.
"""

from __future__ import annotations

import functools
import random
import struct
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.picks import pick

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
KEY_NAMES = ["reward", "reward", "accuracy", "pass", "a", "b", "Z", "", "ü", "reward_1", "10", "9"]
KEYS = st.sampled_from(KEY_NAMES)

reward_dict = st.dictionaries(KEYS, reward_value, max_size=3)

# -- the everyday lists, built from a seed -----------------------------------------------------------------------
# A list of a dozen trials cost a dozen draws and more: the everyday lists are built from a seed drawn for each,
# with reward_value's branches alike, as it draws them (its floats and ints the ends of their ranges half the time).
SMALL_VALUES = (0, 1, 0.0, 1.0, 0.5)
EDGE_FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 1.1, float("inf"), float("-inf"), float("nan"), 1.7976931348623157e308,
               -1.7976931348623157e308, 5e-324, -5e-324, 2.2250738585072014e-308, 2.0**53, 1e-300, 1e300)
EDGE_INTS = (0, 1, -1, 2**63 - 1, 2**63, -(2**63), 2**64, 2**53, 2**53 + 1, 10**20, -(10**20), 255, 256, 65536)


def _reward(rng: random.Random) -> float | int:
    branch = rng.randrange(7)
    if branch < 3:
        return rng.choice((SMALL_VALUES, AWKWARD_FLOATS, AWKWARD_INTS)[branch])
    if branch == 3:  # any float
        if rng.randrange(2):
            return rng.choice(EDGE_FLOATS)
        return float(struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0])
    if branch == 4:  # a tiny one, subnormals among them
        return rng.choice((5e-324, -5e-324, 0.0, -0.0, 1e-300, -1e-300)) if rng.randrange(2) else rng.uniform(
            -1e-300, 1e-300)
    if branch == 5:
        return rng.randint(-10, 10)
    if rng.randrange(2):  # any int
        return rng.choice(EDGE_INTS)
    bits = rng.choice((8, 16, 32, 64, 128))
    return rng.getrandbits(bits) - (1 << (bits - 1))


def _size(rng: random.Random, most: int) -> int:
    return rng.randint(0, rng.randint(0, most))  # short lists most often, as Hypothesis draws them


def _everyday(seed: int) -> list:
    """One key everywhere (some trials without a result, null or {}), or dicts of up to three keys (some trials
    null), or one key everywhere with only awkward values."""
    rng = random.Random(seed)
    form = rng.randrange(3)
    if form == 0:
        key = rng.choice(KEY_NAMES)
        return [(None, {})[choice] if choice < 2 else {key: _reward(rng)}
                for choice in (rng.randrange(4) for _ in range(_size(rng, 12)))]
    if form == 1:
        return [None if rng.randrange(2) else {rng.choice(KEY_NAMES): _reward(rng) for _ in range(_size(rng, 3))}
                for _ in range(_size(rng, 10))]
    return [{"reward": rng.choice(AWKWARD_FLOATS + AWKWARD_INTS)} for _ in range(_size(rng, 12))]


SEEDS = st.integers(0, 2**32 - 1)
# The everyday lists: one key everywhere or several, null trials and empty dicts, any value.
everyday = SEEDS.map(_everyday)

# -- columns: the values of one reward key, trial by trial ------------------------------------------------

# Few finite magnitudes far apart: the lists on which compensated, exact and
# naive summation give different last bits (two to six of them).
CANCELLING = (1.0, -1.0, 3.0, 0.1, 1e16, -1e16, 1e-16, 2.0**53, -(2.0**53), 1e100, -1e100)

# Multisets whose sum differs, in every order, between left-to-right addition,
# CPython 3.12's compensated sum() and the correctly rounded math.fsum (found by
# exhaustive search over small lists of the magnitudes above).
HARD_SUMS = (
    (1.0, 1e16, 1e-16), (1.0, -1e16, 1e-16), (1.0, 1e-16, 2.0**53), (0.1, -1e100, -1e100, -1e100),
    (0.1,) * 10, (1.0, 1e100, 1.0, -1e100), (0.1, 0.2, 0.3),
)
hard_sums = st.sampled_from(HARD_SUMS).flatmap(st.permutations).map(list)

# Sums that overflow to inf, or come back from it: the compensation is not finite there (two to four of them).
OVERFLOWING = (1e308, -1e308, 1.7976931348623157e308, 1.0, 1e292)

# Ints past 2**53 that a float cannot hold (odd ones): an exact int sum divided once, or converted first.
# Three to eight, as the mean of two is a halving, exact on a float as on an int.
big_int = st.one_of(st.integers(2**52, 2**65).map(lambda v: 2 * v + 1), st.integers(2**52, 2**65).map(
    lambda v: -2 * v - 1), st.integers(-3, 3))

# Across the long boundary: ints whose running total leaves (or nears) the C long, then floats, some cancelling
# that total. CPython's sum() adds ints in a C long, moves to a compensated float sum when a float arrives, and
# falls back to plain addition once the int total has overflowed: which phase a float meets decides whether the
# small floats after it survive the cancellation.
#
# Floats then ints: a float first, then ints near 2**53 and small ones: once the total is a float, CPython adds
# each C-long int to it plainly (no compensation), so small ints next to a large total round away one by one.

# Values that tie (1 and 1.0, 0, 0.0 and -0.0) from a pool small enough that the extreme is often tied,
# and mostly a NaN, first, in the middle or last: min() and max() keep the first of equal values, and a
# NaN only when it comes first (nothing compares greater or less than it).
TIES = (-0.0, 0.0, 0, 1, 1.0, 0.5)


# The columns of a keyed list are built from a seed drawn for it, each of a kind above, by its rule (a draw for
# each value made generation slow); how many columns there are is drawn, so a failing input shrinks to one.
_LONG_VALUES = (2**62, 2**62 + 1, LONG - 1, 1, 3, -(2**62), -LONG + 1)
_SMALL_VALUES = (1.0, -1.0, 0.5, 3.0, 1e-16)


def _column(kind: str, rng: random.Random) -> list:
    if kind == "hard":  # a multiset of HARD_SUMS, in any order
        values = list(rng.choice(HARD_SUMS))
        rng.shuffle(values)
        return values
    if kind in ("cancelling", "overflowing"):
        pool, least, most = (CANCELLING, 2, 6) if kind == "cancelling" else (OVERFLOWING, 2, 4)
        return [rng.choice(pool) for _ in range(rng.randint(least, most))]
    if kind == "big":  # as big_int draws them
        return [(2 * rng.randint(2**52, 2**65) + 1) * (1 if branch == 0 else -1) if branch < 2 else rng.randint(-3, 3)
                for branch in (rng.randrange(3) for _ in range(rng.randint(3, 8)))]
    if kind == "long":  # across the long boundary: ints, small floats, the ints' total negated, small floats
        ints = [rng.choice(_LONG_VALUES) for _ in range(rng.randint(1, 4))]
        values = ints + [rng.choice(_SMALL_VALUES) for _ in range(rng.randint(1, 3))] + [-float(sum(ints))] + [
            rng.choice(_SMALL_VALUES) for _ in range(rng.randint(0, 2))]
        if rng.randrange(2):
            rng.shuffle(values)
        return values
    if kind == "floats-then-ints":
        return [rng.choice((0.5, 1.0, 0.1, -0.0, 3.0)),
                *(rng.choice((2**53, 2**53 + 1, 2**54, -(2**53), 10**16)) for _ in range(rng.randint(1, 2))),
                *(rng.choice((1, 1, 2, 3, -1)) for _ in range(rng.randint(1, 4)))]
    values = [rng.choice(TIES) for _ in range(rng.randint(1, 5))]  # "ties"
    if rng.randrange(4):
        values.insert(rng.randint(0, len(values)), float("nan"))
    return values


COLUMN_KINDS = {"float": ("hard", "cancelling", "overflowing"), "int": ("big", "long", "floats-then-ints"),
                "big": ("big",), "ties": ("ties",)}
ONE_TO_THREE = st.integers(1, 3)


@st.composite
def keyed(draw: st.DrawFn, family: str) -> list:
    """One to three columns of ``family``'s kinds as reward keys, each aggregated on its own; a key a trial lacks
    counts as 0.

    Sometimes a trial without a result (None) or with an empty dict among them: the int 0 it contributes
    joins every key.
    """
    n_columns, rng = draw(ONE_TO_THREE), random.Random(draw(SEEDS))
    columns = [_column(rng.choice(COLUMN_KINDS[family]), rng) for _ in range(n_columns)]
    keys = ("reward", "Z", "a")  # several keys come out in code-point order: Z, a, reward
    trials: list = [{key: values[i] for key, values in zip(keys, columns, strict=False) if i < len(values)}
                    for i in range(max(map(len, columns)))]
    if rng.randrange(4) == 3:
        trials.insert(rng.randint(0, len(trials)), rng.choice((None, {})))
    return trials


float_sums = keyed("float")
int_sums = keyed("int")
tied = keyed("ties")

# -- metric configs ----------------------------------------------------------------------------------------

BUILTIN = ("mean", "max", "min", "sum")
# Metric objects MetricConfig refuses, or reads as a built-in whose constructor refuses its kwargs, or
# reads with a default or while ignoring a key. Each part varies on its own (a fixed list of whole configs
# spreads a small share of the draws too thin): the type, the kwargs, a key harbor does not know.
_ABSENT = object()
# Each kind of type as often as a built-in one: a config with a built-in type is odd by its kwargs only. Type
# names harbor matches case by case.
ODD_TYPES: tuple[tuple[Any, ...], ...] = (BUILTIN, (None,), ("MEAN", "Sum", "mAx"), ("", "median", "uv-script", 1),
                                          (_ABSENT,))
ODD_KWARGS: tuple[tuple[Any, ...], ...] = ((_ABSENT,), (None,),
                                           ({}, [], {"x": 1}, {1: "x"}, {"script_path": "metric.py"}))
ODD_KEYS: tuple[dict[str, Any], ...] = ({}, {}, {}, {"name": "best"}, {"Type": "max"})


def _odd_config(seed: int) -> dict[Any, Any]:
    # From a seed: Hypothesis drew the parts of the few odd configs of a run together, and some came up once.
    rng = random.Random(seed)
    types = rng.choice(ODD_TYPES)
    kind = rng.choice(types)
    # A type that is no built-in one's spelling is odd by itself half the time (no kwargs, or none given): what
    # the type alone does is seen only then.
    kwargs = rng.choice((_ABSENT, {})) if types is not BUILTIN and rng.randrange(2) else rng.choice(
        rng.choice(ODD_KWARGS))
    config: dict[Any, Any] = {} if kind is _ABSENT else {"type": kind}
    if kwargs is not _ABSENT:
        config["kwargs"] = kwargs
    return {**config, **rng.choice(ODD_KEYS)}


odd_configs = SEEDS.map(_odd_config)


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
        # From a seed, each alike: Hypothesis drew the script of the few uv-script inputs of a run together.
        chosen = random.Random(draw(SEEDS)).choice(["missing", *echo, *others])
        name = sorted(shipped)[0] if chosen == "missing" else chosen
        rewards = draw(st.lists(trial, min_size=1, max_size=5)) if chosen == "echo_lines.py" else [{"reward": 1}, None]
        return {"metric": {"type": "uv-script", "kwargs": {"script_path": name}}, "rewards": rewards,
                **({"scripts": {name: shipped[name]}} if chosen != "missing" else {})}

    return inputs()


uv_script_inputs = st.deferred(_uv_script_inputs)  # one strategy, built on its first draw

# -- the inputs --------------------------------------------------------------------------------------------

# What a built-in metric meets, by plan: odd configs (a single choice each), no trials, the sums that tell
# summations apart, the ties and NaNs that tell extremes apart, and the everyday lists.
PLANS: tuple[tuple[str, st.SearchStrategy[list] | None], ...] = (
    ("config", None), ("config", None), ("config", None), ("no-trials", st.just([])), ("sum", float_sums),
    ("mean", float_sums), ("sum", int_sums), ("mean", int_sums), ("mean", keyed("big")), ("min", tied),
    ("max", tied), ("any", everyday), ("any", everyday), ("any", everyday),
)


_PLAN_INDEX = st.integers(0, len(PLANS) - 1)


@st.composite
def builtin_inputs(draw: st.DrawFn) -> dict:
    kind, lists = PLANS[draw(_PLAN_INDEX)]
    if lists is None:  # the config fails, or is read as a built-in
        # Everyday rewards beside it: Hypothesis draws a branch with few distinct values less than its share.
        return {"metric": draw(odd_configs), "rewards": draw(everyday)}
    kind = kind if kind in BUILTIN else pick(draw, BUILTIN)
    return {"metric": pick(draw, ({"type": kind}, {"type": kind, "kwargs": {}})), "rewards": draw(lists)}


_builtin_inputs = builtin_inputs()


ONE_IN_TWELVE = st.integers(0, 11)


@st.composite
def metric_inputs(draw: st.DrawFn) -> dict:
    # A uv-script metric costs a `uv run` on each side: one draw in six (not at an end of the range, which
    # Hypothesis favours).
    return draw(uv_script_inputs if draw(ONE_IN_TWELVE) in (3, 8) else _builtin_inputs)
