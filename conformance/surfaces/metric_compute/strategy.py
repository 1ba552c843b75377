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
import math
import random
import struct
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.picks import pick
from conformance.strategies.weights import weighted

LONG = 2**63
# Magnitudes whose sum depends on the order and method of addition, and ints at
# the C-long boundary where CPython's sum() changes algorithm.
AWKWARD_FLOATS = (0.1, 0.2, 0.3, 0.7, 1.0, 3.0, 1e16, -1e16, 1e100, -1e100, 2.0**53, 2.0**53 + 2, 1e308, -1e308,
                  1e-16, 5e-324, -5e-324, 2.2250738585072014e-308, -0.0, 0.0, float("inf"), float("-inf"),
                  float("nan"), 1 / 3, 2 / 3)
AWKWARD_INTS = (0, 1, -1, 2, LONG - 1, LONG, -LONG, -LONG - 1, 10**20, -(10**20), 2**53 + 1)

# A value is one of these pools, by one drawn index (a one_of of seven strategies, nested in lists and dicts, was
# most of the surface's draws): Hypothesis's own floats and ints, the everyday values, the awkward ones, small
# ints, subnormals, and finite floats of any magnitude (made once from a fixed seed).
_rng = random.Random(0)
_ANY_MAGNITUDE = tuple(v for v in (struct.unpack("<d", _rng.getrandbits(64).to_bytes(8, "little"))[0]
                                   for _ in range(40)) if math.isfinite(v))
SUBNORMALS = (5e-324, -5e-324, 1e-310, -1e-320, 2.2250738585072009e-308, 1e-300, -1e-300)
_VALUE_SOURCES = (
    st.floats(), st.integers(), st.sampled_from([0, 1, 0.0, 1.0, 0.5]), st.sampled_from(AWKWARD_FLOATS),
    st.sampled_from(AWKWARD_INTS), st.integers(-10, 10), st.sampled_from(SUBNORMALS + _ANY_MAGNITUDE),
)
# Hypothesis's own floats and ints one time in ten each, the pools the rest.
_VALUE_PICKS = (0, 1, 2, 2, 3, 3, 4, 5, 6, 6)


@st.composite
def _reward_value(draw: st.DrawFn) -> Any:
    return draw(_VALUE_SOURCES[_VALUE_PICKS[draw(st.integers(0, len(_VALUE_PICKS) - 1))]])


reward_value = _reward_value()
KEY_NAMES = ("reward", "reward", "accuracy", "pass", "a", "b", "Z", "", "ü", "reward_1", "10", "9")
KEYS = st.sampled_from(KEY_NAMES)


@st.composite
def _reward_dict(draw: st.DrawFn) -> dict:
    # Up to three keys, a key drawn twice kept once (st.dictionaries' unique keys cost more than the values).
    return {pick(draw, KEY_NAMES): draw(reward_value) for _ in range(draw(_KEY_COUNTS))}


_KEY_COUNTS = st.integers(0, 3)
reward_dict = _reward_dict()
# A trial of the common job: no result, an empty one, or the job's one key (twice as often).
SAME_KEY_TRIALS = st.lists(st.integers(0, 3), max_size=12)


@st.composite
def _same_key_rewards(draw: st.DrawFn) -> list:
    # The common job: one key everywhere, some trials without a result. The key is drawn first and the trials
    # after it (a flatmap builds a strategy on every draw).
    key = draw(KEYS)
    return [None if kind == 0 else {} if kind == 1 else {key: draw(reward_value)} for kind in draw(SAME_KEY_TRIALS)]


_POOLS: tuple[tuple[float | int, ...], ...] = (
    (0, 1, 0.0, 1.0, 0.5), AWKWARD_FLOATS, AWKWARD_INTS, tuple(range(-10, 11)), SUBNORMALS + _ANY_MAGNITUDE)


def _seeded_value(rng: random.Random) -> float | int:
    pool = rng.randrange(len(_POOLS) + 2)
    if pool == len(_POOLS):  # any float, of any bits but NaN's
        value: float = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        return 0.0 if math.isnan(value) else value
    if pool == len(_POOLS) + 1:  # any int, some past a C long
        return rng.randint(-(2**70), 2**70) if rng.randrange(2) else rng.randint(-1000, 1000)
    return rng.choice(_POOLS[pool])


def _seeded_trial(seed: int) -> dict | None:
    """A trial of several keys: no result (one in five), or up to three keys of any values, from one seed. A
    draw per value was most of the surface's draws; a failing list still shrinks by its trials."""
    rng = random.Random(seed)
    if rng.randrange(5) == 0:
        return None
    return {rng.choice(KEY_NAMES): _seeded_value(rng) for _ in range(rng.randrange(4))}


# The everyday lists: one key everywhere (its values drawn one by one) or several, null trials and empty dicts,
# any value.
everyday = st.one_of(
    _same_key_rewards(),
    st.lists(st.integers(0, 2**32 - 1).map(_seeded_trial), max_size=10),
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
_HARD_SUM_ORDERS = tuple(st.permutations(values) for values in HARD_SUMS)  # built once: a flatmap builds one a draw


@st.composite
def _hard_sums(draw: st.DrawFn) -> list:
    return list(draw(_HARD_SUM_ORDERS[draw(st.integers(0, len(HARD_SUMS) - 1))]))


hard_sums = _hard_sums()

# Sums that overflow to inf, or come back from it: the compensation is not finite there.
OVERFLOWING = (1e308, -1e308, 1.7976931348623157e308, 1.0, 1e292)
overflowing = st.lists(st.sampled_from(OVERFLOWING), min_size=2, max_size=4)

# Ints past 2**53 that a float cannot hold (odd ones): an exact int sum divided once, or converted first.
# Three or more, as the mean of two is a halving, exact on a float as on an int.
def _big_odd(seed: int) -> int:
    """An odd int between 2**53 and 2**66 (no float holds it), of either sign. From one drawn seed: drawing its
    bits was most of these lists' draws, and any such int tells the sums apart alike."""
    rng = random.Random(seed)
    value = 2 * rng.randrange(2**52, 2**65) + 1
    return value if rng.randrange(2) else -value


big_int = weighted((2, st.integers(0, 2**32 - 1).map(_big_odd)), (1, st.integers(-3, 3)))
big_ints = st.lists(big_int, min_size=3, max_size=8)


# Strategies a composite draws from are made once, here: one made in the draw is made and validated on every draw.
_LONG_INTS = st.lists(st.sampled_from((2**62, 2**62 + 1, LONG - 1, 1, 3, -(2**62), -LONG + 1)), min_size=1, max_size=4)
_SMALL = st.sampled_from((1.0, -1.0, 0.5, 3.0, 1e-16))
_SMALL_FLOATS = st.lists(_SMALL, min_size=1, max_size=3)
_MORE_SMALL_FLOATS = st.lists(_SMALL, max_size=2)
SHUFFLES = st.integers(0, 2**32 - 1)


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
    if draw(st.booleans()):  # in another order: from a drawn seed (an order needs no shrinking of its own)
        random.Random(draw(SHUFFLES)).shuffle(values)
    return values


# Values that tie (1 and 1.0, 0, 0.0 and -0.0) from a pool small enough that the extreme is often tied,
# and mostly a NaN, first, in the middle or last: min() and max() keep the first of equal values, and a
# NaN only when it comes first (nothing compares greater or less than it).
TIES = (-0.0, 0.0, 0, 1, 1.0, 0.5)
_TIE_LISTS = st.lists(st.sampled_from(TIES), min_size=1, max_size=5)


@st.composite
def ties(draw: st.DrawFn) -> list:
    values = draw(_TIE_LISTS)
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
        trials.insert(draw(st.integers(0, len(trials))), pick(draw, (None, {})))
    return trials


_LARGE_INTS = st.lists(st.sampled_from((2**53, 2**53 + 1, 2**54, -(2**53), 10**16)), min_size=1, max_size=2)
_SMALL_INTS = st.lists(st.sampled_from((1, 1, 2, 3, -1)), min_size=1, max_size=4)


@st.composite
def floats_then_ints(draw: st.DrawFn) -> list:
    """A float first, then ints near 2**53 and small ones: once the total is a float, CPython adds each
    C-long int to it plainly (no compensation), so small ints next to a large total round away one by one."""
    return [pick(draw, (0.5, 1.0, 0.1, -0.0, 3.0)), *draw(_LARGE_INTS), *draw(_SMALL_INTS)]


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
    trials = st.lists(trial, min_size=1, max_size=5)
    choices = ("missing", *echo, *others)

    @st.composite
    def inputs(draw: st.DrawFn) -> dict:
        chosen = pick(draw, choices)  # the first, "missing", drawn most: it costs no uv run
        name = sorted(shipped)[0] if chosen == "missing" else chosen
        rewards = draw(trials) if chosen == "echo_lines.py" else [{"reward": 1}, None]
        return {"metric": {"type": "uv-script", "kwargs": {"script_path": name}}, "rewards": rewards,
                **({"scripts": {name: shipped[name]}} if chosen != "missing" else {})}

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
    kind = kind if kind in BUILTIN else pick(draw, BUILTIN)
    metric = {"type": kind, "kwargs": {}} if draw(st.booleans()) else {"type": kind}
    return {"metric": metric, "rewards": draw(lists)}


@st.composite
def metric_inputs(draw: st.DrawFn) -> dict:
    # A uv-script metric costs a `uv run` on each side: one draw in six (not at an end of the range, which
    # Hypothesis favours).
    return draw(uv_script_inputs if draw(st.integers(0, 11)) in (3, 8) else builtin_inputs())
