"""evsys.metric: per-task sample rewards, as a benchmark's verifiers leave them.

Tasks with uneven sample counts (macro and micro means differ), empty tasks,
rewards at and around the pass threshold 1.0, NaN and inf, ints (some past
2**53, some too large for a float), samples whose sum depends on how it is
added; the metric names evsys-sdk registers, other members of the pass@k /
pass^k families, and names one step away from one.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.picks import lists_of, pick
from conformance.strategies.weights import pooled
from conformance.surfaces.metric_compute.strategy import CANCELLING, HARD_SUMS

OTHER_NAMES = ["pass@0", "Pass@1", "mean", "worst_task"]
NEAR = [0.0, 1.0, 1, 0, 0.5, 0.1, 0.9999999999999999, 1.0000000000000002, 2, -0.0, -1.0,
        float("nan"), float("inf"), float("-inf")]
# A sixth each (pooled: one choice for a fixed value, where one_of builds a strategy on every draw): values near
# the rules' edges, 0.0 and 1.0, any float, small ints, any int, ints too large for a float.
reward = pooled(
    (1, NEAR), (7, (0.0, 1.0)), (14, st.floats()), (14, st.integers(-3, 3)), (14, st.integers()),
    (14, st.integers(min_value=2**1030, max_value=2**1040)),
)
# Samples on either side of the pass threshold, on it in both types, and the values no comparison passes
# (NaN) or every one does (inf): the pass rule is all that tells a task solved from one that is not.
THRESHOLD = [1.0, 1, 0.0, 0.9999999999999999, 1.0000000000000002, 1.5, 2, float("nan"), float("inf"),
             float("-inf"), -0.0]
around_threshold = st.sampled_from(THRESHOLD)


# The samples of binary, threshold, window and summation tasks come from a seed the input draws, not from a draw
# each (they were most of the draws); how many tasks there are is drawn, so a failing input still shrinks by it.
# So do big-int tasks. Tasks of any float or int draw a few values (Hypothesis's own choice of floats and ints
# is what they reach) and spread them over the tasks from a seed: a failing input shrinks by its values and count.
SEEDS = st.integers(0, 2**32 - 1)
TASK_COUNTS = st.sampled_from(range(7))


def _seeded(rng: random.Random, count: int, values: Sequence[Any], fewest: int, most: int) -> list[list]:
    """``count`` tasks of ``fewest`` to ``most`` samples each, every sample one of ``values``."""
    return [[rng.choice(values) for _ in range(rng.randint(fewest, most))] for _ in range(count)]


@st.composite
def summation_tasks(draw: st.DrawFn) -> list[list]:
    """Tasks whose sums differ between left-to-right, compensated and correctly rounded addition: the hard
    sums, each in an order of its own, or samples that cancel."""
    rng = random.Random(draw(SEEDS))
    if rng.randrange(2):
        return _seeded(rng, draw(TASK_COUNTS), CANCELLING, 0, 6)
    tasks = [list(rng.choice(HARD_SUMS)) for _ in range(draw(st.integers(1, 4)))]
    for task in tasks:
        rng.shuffle(task)
    return tasks



def _big_int(rng: random.Random) -> int:
    """An odd int past 2**53 (no float holds it), of either sign, or a small int: a third each."""
    form = rng.randrange(3)
    if form == 2:
        return rng.randint(-3, 3)
    value = 2 * rng.randint(2**52, 2**65) + 1
    return value if form == 0 else -value


def _big_int_tasks(rng: random.Random) -> list[list]:
    """One or two tasks of three samples or more (the mean of two is a halving, exact on a float as on an int),
    from one to three big ints."""
    values = [_big_int(rng) for _ in range(rng.randint(1, 3))]
    return _seeded(rng, rng.randint(1, 2), values, 3, 6)

# Digits of other scripts that int() and \d accept: Arabic-Indic, fullwidth, Devanagari.
_OTHER_DIGITS = [str.maketrans("0123456789", "".join(chr(base + d) for d in range(10)))
                 for base in (0x660, 0xFF10, 0x966)]


def _near_names(change: str) -> list[str]:
    """Every pass@k or pass^k name (k from 1 to 12) with one change of the kind named."""
    names = []
    for sep in "@^":
        for k in range(1, 13):
            name = f"pass{sep}{k}"
            names += {
                "case": ["P" + name[1:], name.upper()],
                "space-before": [" " + name], "newline-after": [name + "\n"], "space-after": [name + " "],
                "text-after": [name + text for text in ("x", ".0", "@1")],
                "zero": [f"pass{sep}0", f"pass{sep}0{k}"],  # k of 0, or a leading zero
                "plus": [f"pass{sep}+{k}"],
                # Non-ASCII digits after an ASCII 1 (a pattern [1-9]\d* reads them), or all of them.
                "other-digits": [f"pass{sep}" + prefix + str(k).translate(table)
                                 for table in _OTHER_DIGITS for prefix in ("1", "")],
                "separator": ["pass" + other + str(k) for other in (sep + sep, "", "#")],
            }[change]
    return names


CHANGES = ("case", "space-before", "newline-after", "space-after", "text-after", "zero", "plus", "other-digits",
           "separator")
# A pass@k or pass^k name with one change that makes it no name evsys-sdk reads: each kind of change alike, then
# one of its names (two picks, from lists made once).
NEAR_NAMES = [_near_names(change) for change in CHANGES]
# A registered name or another member of a family: each family alike, whatever its number of members.
registered_name = st.sampled_from([family for family in ("mean_reward", "avg", "pass_rate") for _ in range(6)]
                                  + [f"pass{sep}{k}" for sep in "@^" for k in range(1, 7)])
ONE_IN_FOUR = st.sampled_from(range(4))


KINDS = ("binary", "threshold", "any", "windows", "nothing", "big-ints", "summation", "names", "names")
NAMES_BY_K = {k: (f"pass@{k}", f"pass^{k}", "pass_rate", f"pass@{k}", f"pass^{k}", "mean_reward") for k in range(1, 5)}
# No task or up to three empty ones; half the time one with samples among them, at any place (one pick).
NOTHING = [(empty, None) for empty in range(4) for _ in range(empty + 1)] + [
    (empty, at) for empty in range(4) for at in range(empty + 1)]
# Strategies made once: a strategy built inside a draw costs more than the draw.
SUMMATION_TASKS = summation_tasks()
ANY_VALUES = lists_of(reward, min_size=1, max_size=3)
SEEDED = {"binary": [0.0, 1.0], "threshold": THRESHOLD}
FEW_TASKS: tuple[list[list[float]], ...] = ([[1.0, 0.0], [0.0, 1.0, 1.0]], [], [[1.0]])


@st.composite
def evsys_inputs(draw: st.DrawFn) -> dict:
    kind = pick(draw, KINDS)
    if kind in ("big-ints", "summation"):  # what they tell apart is in the sums: mostly the mean
        tasks = _big_int_tasks(random.Random(draw(SEEDS))) if kind == "big-ints" else draw(SUMMATION_TASKS)
        name = pick(draw, ["mean_reward", "avg"]) if draw(ONE_IN_FOUR) else draw(registered_name)
    elif kind == "windows":  # tasks shorter and longer than k: only the first k samples count for pass@k and pass^k
        k = pick(draw, (1, 2, 3, 4))
        name = pick(draw, NAMES_BY_K[k])
        tasks = _seeded(random.Random(draw(SEEDS)), pick(draw, (1, 2, 3, 4)), THRESHOLD, 1, k + 4)
    elif kind == "nothing":  # no task, or tasks without samples (sometimes one with samples among them)
        empty, at = pick(draw, NOTHING)
        tasks = [[] for _ in range(empty)]
        if at is not None:
            tasks.insert(at, _seeded(random.Random(draw(SEEDS)), 1, THRESHOLD, 1, 3)[0])
        name = draw(registered_name)
    elif kind == "names":  # a name one step from a registered one, over a few fixed tasks: the name is what varies
        tasks = copy.deepcopy(pick(draw, FEW_TASKS))
        name = pick(draw, pick(draw, NEAR_NAMES))
    else:
        most = pick(draw, (0, 3, 6))
        values = draw(ANY_VALUES) if kind == "any" else SEEDED[kind]
        tasks = _seeded(random.Random(draw(SEEDS)), draw(TASK_COUNTS), values, 0, most)
        name = draw(registered_name) if draw(ONE_IN_FOUR) else pick(draw, OTHER_NAMES)
    return {"metric": name, "task_rewards": tasks}
