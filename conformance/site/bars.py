"""Distributions a report holds, as bar charts: a generator's drawn inputs by feature (with each feature's minimum
share) and a surface's float mismatches by ULP distance.

Every number is the report's: the counts of a ``generated`` line (its
``features``, ``drawn`` and ``feature_minimums``; a feature is short as
:meth:`GeneratedLine.shortfalls` judges it, as the run's verdict did) and the
ULP buckets counted from the case lines as the footer counts them. A bar's
length is its share of the whole, so that a minimum share is a mark on the same
axis; the geometry is in SVG units, decided here once.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.core.compare import UlpBucket
from conformance.core.features import Gate
from conformance.report.model import GeneratedLine, UlpDistances
from conformance.site.model import Bar, Distribution

WIDTH, LEFT, SPAN = 760, 220.0, 280.0  # the room right of SPAN holds a bar's count and its shortfall, in words
ROW, TOP, AXIS = 26.0, 8.0, 26.0
LABEL_CHARS = 30  # a longer label is cut in the chart; its table row and the bar's tooltip hold it whole
BUCKET_LABELS = {
    UlpBucket.ONE: "1 ULP", UlpBucket.FEW: "2–4 ULPs", UlpBucket.SOME: "5–16 ULPs", UlpBucket.MANY: "17–2^10 ULPs",
    UlpBucket.CLOSE: "2^10–2^20 ULPs", UlpBucket.FAR: "far (signs differ, or > 2^20)",
}
assert set(BUCKET_LABELS) == set(UlpBucket), "every bucket needs a label"


def _cut(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…"


def chart(title: str, description: str, legend: str, whole: int,
          bins: Sequence[tuple[str, str, int, float | None, bool]]) -> Distribution:
    """Bars of ``bins`` (key, label, count, minimum share or None, short), each as long as its share of ``whole``."""
    bars = []
    for i, (key, label, count, minimum, short) in enumerate(bins):
        share = count / whole if whole else 0.0
        width = SPAN * min(share, 1.0)
        mark = LEFT + SPAN * minimum if minimum is not None else None
        bars.append(Bar(key, label, _cut(label), count, share, minimum, short, TOP + i * ROW, width, mark,
                        max(LEFT + width, mark if mark is not None else 0.0) + 6))
    bottom = TOP + len(bars) * ROW
    ticks = tuple((LEFT + SPAN * f, f"{round(100 * f)} %") for f in (0.0, 0.25, 0.5, 0.75, 1.0))
    return Distribution(title, description, legend, whole, tuple(bars), WIDTH, round(bottom + AXIS), LEFT, SPAN,
                        ROW, bottom, ticks)


def features(line: GeneratedLine) -> Distribution | None:
    """A generator's drawn inputs by feature, in the order its surface declares them; None when it drew none or
    counted no feature."""
    names = list(dict.fromkeys([*line.features, *line.feature_minimums]))
    if not line.drawn or not names:
        return None
    short = {s.feature for s in line.shortfalls()}
    bins = [(name, name, line.features.get(name, 0), line.feature_minimums.get(name), name in short)
            for name in names]
    said = f"{len(short)} below its minimum share" if short else (
        "each at its minimum share or above" if line.feature_minimums else "no minimum share asked")
    legend = (f"Each bar: the share of the {line.drawn} inputs drawn that had the feature (an input may have several)."
              f" A vertical mark: its minimum share under profile {line.profile}; ✘ marks one below it")
    legend += (": the generator stopped with an error, and its minimums were not judged." if line.error else
               f" (gate {line.feature_gate}: " + ("the run does not conform)." if line.feature_gate is Gate.FAIL
                                                  else "the run says so and conforms as before)."))
    return chart(f"Generated inputs by feature ({line.drawn} drawn)",
                 f"How many of the {line.drawn} inputs drawn had each of {len(names)} features; {said}.",
                 legend, line.drawn, bins)


def ulps(distances: UlpDistances) -> Distribution:
    """A surface's float mismatches by ULP distance, a bar per bucket (every bucket, an empty one too)."""
    whole = sum(distances.buckets.values())
    bins = [(bucket.value, BUCKET_LABELS[bucket], distances.buckets.get(bucket, 0), None, False)
            for bucket in UlpBucket]
    return chart(f"Float mismatches by ULP distance ({whole})",
                 f"{whole} float mismatch(es) by how many ULPs apart the two floats are; the furthest: "
                 f"{distances.worst.text()}.", "Each bar: the share of the float mismatches in its bucket.",
                 whole, bins)
