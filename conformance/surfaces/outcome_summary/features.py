"""outcome.summary: the kinds of result.json (or of its absence) its strategy is meant to reach."""

from __future__ import annotations

import json
import math
from typing import Any

from conformance.core.features import Feature


def _document(value: Any) -> Any:
    """The result.json's JSON value (as Python's json reads it), or None when there is none or it is no JSON."""
    data = value.get("result_json")
    if not isinstance(data, bytes):
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _evals(value: Any) -> dict[Any, Any] | None:
    document = _document(value)
    stats = document.get("stats") if isinstance(document, dict) else None
    evals = stats.get("evals") if isinstance(stats, dict) else None
    return evals if isinstance(evals, dict) else None


def _metric_values(value: Any) -> list[Any]:
    groups = (_evals(value) or {}).values()
    metrics = [m for group in groups if isinstance(group, dict) for m in group.get("metrics") or []]
    return [v for metric in metrics if isinstance(metric, dict) for v in metric.values()]


def _not_a_number(item: Any) -> bool:
    return isinstance(item, bool) or not isinstance(item, int | float) or (
        isinstance(item, float) and not math.isfinite(item))


FEATURES = (
    # A whole job run through harbor, whose result.json is read: the line a runner prints for it.
    Feature("whole job", "a job is run and its result.json read",
            lambda value: value.get("job") is not None,
            minimum={"ci": 0.009, "dev": 0.03, "explore": 0.03}),
    # Bytes that are no JSON object (damaged, cut short, not UTF-8, a list): the reader's failure path.
    Feature("damaged file", "result.json is not a JSON object",
            lambda value: isinstance(value.get("result_json"), bytes) and not isinstance(_document(value), dict),
            minimum={"ci": 0.006, "dev": 0.01, "explore": 0.008}),
    # A result without evals groups: a score of nothing (empty task groups).
    Feature("no evals", "a result.json object without evals groups",
            lambda value: isinstance(_document(value), dict) and not _evals(value),
            minimum={"ci": 0.049, "dev": 0.05, "explore": 0.07}),
    # A metric value that is no finite number (null, NaN, a string, a bool): how strictly the mean is read.
    Feature("odd metric value", "a metric value is null, NaN, infinite, a string, a bool or a list",
            lambda value: any(_not_a_number(item) for item in _metric_values(value)),
            minimum={"ci": 0.004, "dev": 0.01, "explore": 0.02}),
    # Several means summed: left to right, compensated or correctly rounded, the score's last bits differ.
    Feature("several means", "three metric values or more in the evals",
            lambda value: len(_metric_values(value)) >= 3,
            minimum={"ci": 0.034, "dev": 0.06, "explore": 0.1}),
    # A byte order mark before the JSON: Python's json refuses it from a str, another reader skips it.
    Feature("byte order mark", "result.json starts with a UTF-8 byte order mark",
            lambda value: isinstance(value.get("result_json"), bytes) and value["result_json"].startswith(
                b"\xef\xbb\xbf"),
            minimum={"ci": 0.005, "dev": 0.005, "explore": 0.02}),
)
