"""Candidates whose runs diverge nowhere yet prove nothing: each one brings about one warning (docs/warnings.md).

Each is the reference with one thing changed: a surface it mostly declines, or a scope that leaves the run only
inputs the oracle turns away before any scoring, or only inputs the suite leaves out.
"""

from __future__ import annotations

from typing import Any

from conformance.core.scope import JSON_DEPTH_LIMIT
from conformance.kit.candidate import SkipSurface
from conformance.reference import candidate as reference


def _no_json_rewards(value: Any) -> Any:
    """reward.parse answered only for a verifier that left no reward.json: most of its inputs hold one."""
    if value.get("reward_json") is not None:
        raise SkipSurface("reward.json is not read yet")
    return reference.handlers["reward.parse"](value)


# Declines every reward.parse input that holds a reward.json: mostly-skipped on reward.parse.
skips_json = reference.derive("skips-json", **{"reward.parse": _no_json_rewards})

# Claims only metric names that no metric is registered under: the oracle answers every input of evsys.metric with
# KeyError, before computing anything (rejected-before-scoring). The cases' names, and one no generator draws.
UNKNOWN_METRICS = ["pass@0", "Pass@1", "pass@01", "mean", "worst_task", "no-such-metric"]
unknown_metrics = reference.derive("unknown-metrics")
unknown_metrics.scope = {"evsys.metric": {"metric": UNKNOWN_METRICS}}

# Claims only a reward.json nested past the suite's JSON depth limit: no generated input of reward.parse is in the
# suite's scope (nothing-generated). In process only: a scope sent over the protocol holds no bytes.
too_deep = reference.derive("too-deep")
too_deep.scope = {"reward.parse": {"reward_json": [b"[" * JSON_DEPTH_LIMIT + b"]" * JSON_DEPTH_LIMIT]}}
