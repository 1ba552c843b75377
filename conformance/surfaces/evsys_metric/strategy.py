"""evsys.metric: per-task sample rewards, as a benchmark's verifiers leave them.

Tasks with uneven sample counts (macro and micro means differ), empty tasks,
rewards at and around the pass threshold 1.0, NaN and inf, ints (some past
2**53, some too large for a float), samples whose sum depends on how it is
added; the metric names evsys-sdk registers, other members of the pass@k /
pass^k families, and names one step away from one.
"""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.surfaces.metric_compute.strategy import CANCELLING, HARD_SUMS, big_int

OTHER_NAMES = ["pass@0", "Pass@1", "mean", "worst_task"]
NEAR = [0.0, 1.0, 1, 0, 0.5, 0.1, 0.9999999999999999, 1.0000000000000002, 2, -0.0, -1.0,
        float("nan"), float("inf"), float("-inf")]
reward = st.one_of(
    st.sampled_from(NEAR), st.sampled_from([0.0, 1.0]), st.floats(), st.integers(-3, 3), st.integers(),
    st.integers(min_value=2**1030, max_value=2**1040),  # too large for a float
)
binary = st.sampled_from([0.0, 1.0])
# Samples on either side of the pass threshold, on it in both types, and the values no comparison passes
# (NaN) or every one does (inf): the pass rule is all that tells a task solved from one that is not.
THRESHOLD = [1.0, 1, 0.0, 0.9999999999999999, 1.0000000000000002, 1.5, 2, float("nan"), float("inf"),
             float("-inf"), -0.0]
around_threshold = st.sampled_from(THRESHOLD)


def _tasks(samples: st.SearchStrategy, max_samples: int) -> st.SearchStrategy[list]:
    return st.lists(st.lists(samples, max_size=max_samples), max_size=6)


# Tasks whose sums differ between left-to-right, compensated and correctly rounded addition.
summation_tasks = st.one_of(
    st.lists(st.sampled_from(HARD_SUMS).flatmap(st.permutations).map(list), min_size=1, max_size=4),
    _tasks(st.sampled_from(CANCELLING), 6),
)
# Three samples or more: the mean of two is a halving, exact on a float as on an int.
big_int_tasks = st.lists(st.lists(big_int, min_size=3, max_size=6), min_size=1, max_size=2)

# Digits of other scripts that int() and \d accept: Arabic-Indic, fullwidth, Devanagari.
_OTHER_DIGITS = [str.maketrans("0123456789", "".join(chr(base + d) for d in range(10)))
                 for base in (0x660, 0xFF10, 0x966)]


@st.composite
def near_names(draw: st.DrawFn) -> str:
    """A pass@k or pass^k name with one change that makes it no name evsys-sdk reads."""
    sep, k = draw(st.sampled_from("@^")), draw(st.integers(1, 12))
    name = f"pass{sep}{k}"
    change = draw(st.sampled_from(["case", "space-before", "newline-after", "space-after", "text-after", "zero", "plus",
                                   "other-digits", "separator"]))
    if change == "case":
        return draw(st.sampled_from(["P" + name[1:], name.upper()]))
    if change in ("space-before", "newline-after", "space-after"):
        return {"space-before": " " + name, "newline-after": name + "\n", "space-after": name + " "}[change]
    if change == "text-after":
        return name + draw(st.sampled_from(["x", ".0", "@1"]))
    if change == "zero":  # k of 0, or a leading zero
        return f"pass{sep}0" + draw(st.sampled_from(["", str(k)]))
    if change == "plus":
        return f"pass{sep}+{k}"
    if change == "other-digits":  # after an ASCII 1 (a pattern [1-9]\d* reads them), or all of them
        digits = str(k).translate(draw(st.sampled_from(_OTHER_DIGITS)))
        return f"pass{sep}" + draw(st.sampled_from(["1" + digits, digits]))
    return "pass" + draw(st.sampled_from([sep + sep, "", "#"])) + str(k)


# A registered name or another member of a family: each family alike, whatever its number of members.
registered_name = st.sampled_from(["mean_reward", "avg", "pass_rate", "pass@", "pass^"]).flatmap(
    lambda family: st.integers(1, 6).map(lambda k: f"{family}{k}") if family[-1] in "@^" else st.just(family))


@st.composite
def evsys_inputs(draw: st.DrawFn) -> dict:
    kind = draw(st.sampled_from(["binary", "threshold", "any", "windows", "nothing", "big-ints", "summation", "names",
                                 "names"]))
    if kind in ("big-ints", "summation"):  # what they tell apart is in the sums: mostly the mean
        tasks = draw(big_int_tasks if kind == "big-ints" else summation_tasks)
        name = draw(st.sampled_from(["mean_reward", "avg"]) if draw(st.integers(0, 3)) else registered_name)
    elif kind == "windows":  # tasks shorter and longer than k: only the first k samples count for pass@k and pass^k
        k = draw(st.integers(1, 4))
        name = draw(st.sampled_from([f"pass@{k}", f"pass^{k}", "pass_rate", f"pass@{k}", f"pass^{k}", "mean_reward"]))
        tasks = draw(st.lists(st.lists(around_threshold, min_size=1, max_size=k + 4), min_size=1, max_size=4))
    elif kind == "nothing":  # no task, or tasks without samples (sometimes one with samples among them)
        tasks = [[] for _ in range(draw(st.integers(0, 3)))]
        if draw(st.booleans()):
            tasks.insert(draw(st.integers(0, len(tasks))), draw(st.lists(around_threshold, min_size=1, max_size=3)))
        name = draw(registered_name)
    elif kind == "names":  # a name one step from a registered one, over a few fixed tasks: the name is what varies
        tasks = draw(st.sampled_from([[[1.0, 0.0], [0.0, 1.0, 1.0]], [], [[1.0]]]))
        name = draw(near_names())
    else:
        samples = {"binary": binary, "threshold": around_threshold, "any": reward}[kind]
        tasks = draw(_tasks(samples, draw(st.sampled_from([0, 3, 6]))))
        name = draw(registered_name if draw(st.integers(0, 3)) else st.sampled_from(OTHER_NAMES))
    return {"metric": name, "task_rewards": tasks}
