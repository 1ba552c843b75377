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

from conformance.strategies.weights import pooled, weighted
from conformance.surfaces.job_result.strategy import jobs_without_own_sources

# Values whose means, times small totals, often land exactly on .5 (banker's rounding); and magnitudes
# far apart, whose sum depends on how it is added (left to right, compensated, correctly rounded).
EVEN = [0.0, 0.25, 0.5, 0.5, 0.75, 1.0, 1, 0, 0.1, 1 / 3]
MAGNITUDES = [2.0**53, 1e16, -1e16, 1.0, 1e-16, 5e-324, 0.1, 1e308, -1e308]
ODD = [None, float("nan"), float("inf"), "0.5", True, [0.5], 10**400, -0.0, "x"]
# In tenths: one odd value, one magnitude, five even values, three any float in [0, 1]; the rest must parse, or
# the rounding and the mean are never reached. Pooled: a fixed value is one choice (weights are per value).
value = pooled((10, ODD), (10, MAGNITUDES), (45, EVEN), (270, st.floats(0, 1)))
ODD_COUNTS = (None, "3", 2.7, "2.5", -1, True)
count = pooled((1, ODD_COUNTS), (9 * len(ODD_COUNTS), st.integers(0, 7)))  # one in ten odd
# A metric that is no object: the reader tests membership on whatever it is, then indexes it.
NOT_OBJECTS: tuple[object, ...] = ({}, [], "mean", ["mean"], "max", 0.5)
# One in ten no object; else a mean (half), other metrics, or a mean and a max.
metric = pooled(
    (4, NOT_OBJECTS),
    (108, st.builds(lambda v: {"mean": v}, value)),
    (54, st.dictionaries(st.sampled_from(["max", "min", "sum", "correctness", "speed"]), value, min_size=1,
                         max_size=2)),
    (54, st.builds(lambda v, w: {"mean": v, "max": w}, value, value)),
)
_PRESENT = st.integers(0, 9)  # 0: the part is left out
_EVALS = st.dictionaries(st.sampled_from(["a__adhoc", "a__m__ds", "b__adhoc", "oracle__terminal-bench"]),
                         st.builds(lambda ms: {"metrics": ms}, st.lists(metric, min_size=1, max_size=2)),
                         min_size=1, max_size=2)
# Fields harbor writes that the summary never reads: what they hold matters only to how strictly it parses.
_UNREAD = st.dictionaries(st.sampled_from(["id", "started_at", "n_trials", "reward_stats"]), st.sampled_from(ODD),
                          max_size=1)


@st.composite
def result_document(draw: st.DrawFn) -> dict:
    stats: dict = {}
    for name in ("n_completed_trials", "n_errored_trials"):
        if draw(_PRESENT):
            stats[name] = draw(count)
    if draw(_PRESENT):
        stats["evals"] = draw(_EVALS)
    document: dict = {"stats": stats} if draw(_PRESENT) else {}
    if draw(_PRESENT):
        document["n_total_trials"] = draw(count)
    for part in (document, stats):
        part.update(draw(_UNREAD))
    return document


def _bytes(document: dict) -> bytes:
    return json.dumps(document, indent=4).encode()


# How the document is written: as harbor writes it (five in eight), or with a byte-order mark before it, CRLF
# line ends, no indentation.
_WRITERS = st.sampled_from(range(8))


@st.composite
def written(draw: st.DrawFn) -> bytes:
    """A result document as harbor writes it, or now and then as another writer would: a byte-order mark before
    it, CRLF line ends, no indentation."""
    document = draw(result_document())
    data = _bytes(document)
    writer = draw(_WRITERS)
    if writer == 5:
        return b"\xef\xbb\xbf" + data
    if writer == 6:
        return data.replace(b"\n", b"\r\n")
    return json.dumps(document).encode() if writer == 7 else data


damaged = pooled(
    (1, (b"", b"[]", b"null")), (1, st.binary(max_size=20)),
    (1, result_document().map(lambda d: b"\xef\xbb\xbf" + _bytes(d))),
    (1, st.builds(lambda d, cut: _bytes(d)[:cut], result_document(), st.integers(1, 40))),
)
# One job, one mean, a small total: score * total often lands exactly on a half.
halves = st.builds(
    lambda mean, total, errored: {
        "n_total_trials": total,
        "stats": {
            "n_completed_trials": total,
            "n_errored_trials": errored,
            "evals": {"a__adhoc": {"metrics": [{"mean": mean}]}},
        },
    },
    st.sampled_from([0.5, 0.25, 0.75, 0.125, 1 / 6]), st.integers(1, 8), st.integers(0, 1),
)
# Several means of magnitudes far apart: how they are summed shows in the score. Half the lists hold a
# large value, a small one and the large one's negative in some order (left to right the small one is lost,
# compensated it is kept), with more values beside them that a correctly rounded sum adds otherwise.
cancelling = st.builds(
    lambda big, small, rest: [big, small, -big, *rest],
    st.sampled_from([1e16, 2.0**53, 1e20, 1e100]), st.sampled_from([1.0, 0.1, 3.0, 1e-16, -0.5]),
    st.lists(st.sampled_from(MAGNITUDES[:7]), max_size=2),
).flatmap(st.permutations)
sums = st.builds(
    lambda means, total: {"n_total_trials": total,
                          "stats": {"evals": {"a__adhoc": {"metrics": [{"mean": m} for m in means]}}}},
    weighted((1, cancelling), (1, st.lists(st.sampled_from(MAGNITUDES), min_size=3, max_size=5))),
    st.integers(1, 4),
)
# In twenty draws: one without a file, two damaged files, two whole jobs, three halves, two sums, ten result files.
outcome_inputs = pooled(
    (1, ({},)),
    (2, damaged.map(lambda data: {"result_json": data})),
    (2, jobs_without_own_sources.map(lambda job: {"job": job})),
    (3, halves.map(lambda d: {"result_json": _bytes(d)})),
    (2, sums.map(lambda d: {"result_json": _bytes(d)})),
    (10, written().map(lambda data: {"result_json": data})),
)
