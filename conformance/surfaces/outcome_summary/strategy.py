"""outcome.summary: what agent-challenge finds where harbor's result.json should be.

Mostly result files shaped as harbor writes them (counts, evals groups with
metric lists, values that make ``score * total`` land on a half), with the
spellings a reader trips on: null and NaN values, strings, bools, floats for
counts, missing parts; then damaged bytes, no file at all, and sometimes a
whole job run through harbor whose result.json is read.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from conformance.strategies.picks import pick, pick_each, sequence_of
from conformance.strategies.weights import pool, weighted
from conformance.surfaces.job_result.strategy import jobs_without_own_sources
from conformance.surfaces.metric_compute.strategy import hard_sums

# Values whose means, times small totals, often land exactly on .5 (banker's rounding); and magnitudes
# far apart, whose sum depends on how it is added (left to right, compensated, correctly rounded).
EVEN = [0.0, 0.25, 0.5, 0.5, 0.75, 1.0, 1, 0, 0.1, 1 / 3]
MAGNITUDES = [2.0**53, 1e16, -1e16, 1.0, 1e-16, 5e-324, 0.1, 1e308, -1e308]
ODD = [None, float("nan"), float("inf"), "0.5", True, [0.5], 10**400, -0.0, "x"]
# In tenths: one odd value, one magnitude, five even values, three any float in [0, 1]; the rest must parse, or
# the rounding and the mean are never reached. Pooled: a fixed value is one choice (weights are per value).
value = pool((10, ODD), (10, MAGNITUDES), (45, EVEN), (270, st.floats(0, 1)))
ODD_COUNTS = (None, "3", 2.7, "2.5", -1, True)
COUNTS = [*ODD_COUNTS, *(n for n in range(8) for _ in range(7))]  # one in ten odd
# A metric that is no object: the reader tests membership on whatever it is, then indexes it.
NOT_OBJECTS: tuple[object, ...] = ({}, [], "mean", ["mean"], "max", 0.5)
# Metric names beside a mean, or instead of it.
OTHER_METRICS = [(name,) for name in ("max", "min", "sum", "correctness", "speed")] + [
    ("max", "min"), ("sum", "correctness"), ("speed", "max")]
# One in ten no object; else a mean (half), other metrics, or a mean and a max: as one pick of what the metric
# holds (names whose values are drawn after it, or a whole value that is no object).
METRIC_FORMS = pool((4 * 8, [(None, thing) for thing in NOT_OBJECTS]), (108 * 8, ((("mean",), None),)),
                      (54, [(names, None) for names in OTHER_METRICS]), (54 * 8, ((("mean", "max"), None),)))


# Parts of a document are drawn by plain functions of ``draw``, not strategies of their own: every strategy drawn
# from is another layer of Hypothesis's bookkeeping, which cost more than the choices within.
def _metric(draw: st.DrawFn) -> object:
    names, thing = METRIC_FORMS(draw)
    return thing if names is None else {name: value(draw) for name in names}


# The evals groups of a result: one key (half the time) or two, each with one metric (two times in three) or
# two: a pick for the keys and their numbers of metrics, where a dictionary of lists drew a choice for each
# entry's being there.
EVALS_KEYS = ("a__adhoc", "a__m__ds", "b__adhoc", "oracle__terminal-bench")
METRIC_COUNTS = (1, 1, 2)
EVALS_SHAPES = (
    [((key, n),) for key in EVALS_KEYS for n in METRIC_COUNTS for _ in range(3 * (len(EVALS_KEYS) - 1))]
    + [((key, n), (other, m)) for key in EVALS_KEYS for other in EVALS_KEYS if other != key
       for n in METRIC_COUNTS for m in METRIC_COUNTS])


# Fields harbor writes that the summary never reads: what they hold matters only to how strictly it parses.
# Half the parts have none, half one.
UNREAD_KEYS = ("id", "started_at", "n_trials", "reward_stats")
UNREAD: list[dict[str, object]] = [{}] * (len(UNREAD_KEYS) * len(ODD))
UNREAD += [{key: odd} for key in UNREAD_KEYS for odd in ODD]
# Which of the five parts a document has, each nine times in ten: the digits of a number, a digit a part (0
# leaves it out).
PARTS = ("n_completed_trials", "n_errored_trials", "evals", "stats", "n_total_trials")
PRESENT = range(10 ** len(PARTS))
# How a document is written: as harbor writes it (five in eight), or with a byte-order mark before it, CRLF
# line ends, no indentation.
WRITERS = range(8)
# A document's frame as one pick (pick_each): its parts, the two counts in stats, the total, the document's and
# stats' unread fields, the evals' shape, how it is written. A shrink leaves every part out.
_FRAMES = (PRESENT, COUNTS, COUNTS, COUNTS, UNREAD, UNREAD, EVALS_SHAPES, WRITERS)


def _document(draw: st.DrawFn) -> tuple[dict, int]:
    """A result document, and how it is written."""
    digits, completed, errored, total, outer, inner, shape, writer = pick_each(draw, *_FRAMES)
    present = {part for at, part in enumerate(PARTS) if digits // 10**at % 10}
    stats: dict = {name: drawn for name, drawn in (("n_completed_trials", completed), ("n_errored_trials", errored))
                   if name in present}
    if "evals" in present:
        stats["evals"] = {key: {"metrics": [_metric(draw) for _ in range(n)]} for key, n in shape}
    document: dict = {"stats": stats} if "stats" in present else {}
    if "n_total_trials" in present:
        document["n_total_trials"] = total
    document.update(outer)
    stats.update(inner)
    return document, writer


def _bytes(document: dict) -> bytes:
    return json.dumps(document, indent=4).encode()


def _written(draw: st.DrawFn) -> bytes:
    """A result document as harbor writes it, or now and then as another writer would: a byte-order mark before
    it, CRLF line ends, no indentation."""
    document, writer = _document(draw)
    data = _bytes(document)
    if writer == 5:
        return b"\xef\xbb\xbf" + data
    if writer == 6:
        return data.replace(b"\n", b"\r\n")
    return json.dumps(document).encode() if writer == 7 else data


# A damaged file: no JSON object at all, random bytes, a byte-order mark before a document, a document cut short.
# The damage, the file that is no document and the length cut to are one pick.
DAMAGES = ("plain", "random", "marked", "cut")
NOT_DOCUMENTS = (b"", b"[]", b"null")
CUTS = range(1, 41)
RANDOM_BYTES = st.binary(max_size=20)


def _damaged(draw: st.DrawFn) -> bytes:
    damage, not_document, cut = pick_each(draw, DAMAGES, NOT_DOCUMENTS, CUTS)
    if damage == "plain":
        return bytes(not_document)
    if damage == "random":
        return draw(RANDOM_BYTES)
    data = _bytes(_document(draw)[0])
    return b"\xef\xbb\xbf" + data if damage == "marked" else data[:cut]


# One job, one mean, a small total: score * total often lands exactly on a half (one pick of the three).
HALVES = [{"n_total_trials": total,
           "stats": {"n_completed_trials": total, "n_errored_trials": errored,
                     "evals": {"a__adhoc": {"metrics": [{"mean": mean}]}}}}
          for mean in (0.5, 0.25, 0.75, 0.125, 1 / 6) for total in range(1, 9) for errored in (0, 1)]
halves = st.sampled_from(HALVES)
# Several means of magnitudes far apart: how they are summed shows in the score. A third of the lists are
# multisets whose sum differs, in every order, between left-to-right, compensated and correctly rounded addition
# (metric.compute's hard sums). A third hold a large value, a small one and the large one's negative in some
# order (left to right the small one is lost, compensated it is kept), with more values beside them that a
# correctly rounded sum adds otherwise.
# st.permutations favours orders near the one given, where the small value sits between the large one and its
# negative: an order drawn uniformly mostly puts it elsewhere, and the sums agree.
cancelling = st.builds(
    lambda big, small, rest: [big, small, -big, *rest],
    st.sampled_from([1e16, 2.0**53, 1e20, 1e100]), st.sampled_from([1.0, 0.1, 3.0, 1e-16, -0.5]),
    sequence_of(MAGNITUDES[:7], max_size=2),
).flatmap(st.permutations)
sums = st.builds(
    lambda means, total: {"n_total_trials": total,
                          "stats": {"evals": {"a__adhoc": {"metrics": [{"mean": m} for m in means]}}}},
    weighted((1, cancelling), (1, sequence_of(MAGNITUDES, min_size=3, max_size=5)), (1, hard_sums)),
    st.integers(1, 4),
)
# In twenty draws: one without a file, two damaged files, two whole jobs, three halves, two sums, ten result files.
KINDS = ("none",) + ("damaged",) * 2 + ("job",) * 2 + ("halves",) * 3 + ("sums",) * 2 + ("written",) * 10


@st.composite
def _outcome_input(draw: st.DrawFn) -> dict:
    kind = pick(draw, KINDS)
    if kind == "none":
        return {}
    if kind == "job":
        return {"job": draw(jobs_without_own_sources)}
    if kind == "written":
        return {"result_json": _written(draw)}
    if kind == "damaged":
        return {"result_json": _damaged(draw)}
    return {"result_json": _bytes(draw(halves if kind == "halves" else sums))}


outcome_inputs = _outcome_input()
