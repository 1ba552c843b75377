"""Candidates whose answers change from one asking to the next, and ones that count how often they are asked.

Each keeps, per input, how many times it was asked (``ASKED``, reset by the
tests), so a test can tell how many requests a run made, and so the answers
depend on the asking alone, never on timing or a random draw.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

from conformance.kit import wire
from conformance.kit.candidate import Candidate
from conformance.reference import candidate as reference

ASKED: Counter[str] = Counter()
SURFACE = "reward.parse"


def _asked(value: Any) -> int:
    """How many times this input has now been asked (this asking included)."""
    key = json.dumps(wire.encode(value), sort_keys=True)
    ASKED[key] += 1
    return ASKED[key]


def _right(value: Any) -> Any:
    return reference.handlers[SURFACE](value)


def _wrong(value: Any) -> Any:
    return {"reward": -12.5}  # no verifier file the corpus holds scores this


def _alternating(value: Any) -> Any:
    return _wrong(value) if _asked(value) % 2 else _right(value)


def _always_wrong(value: Any) -> Any:
    _asked(value)
    return _wrong(value)


def _counted_right(value: Any) -> Any:
    _asked(value)
    return _right(value)


def _wrong_again_and_otherwise(value: Any) -> Any:
    """Wrong every time, but never the same way twice."""
    return {"reward": -float(_asked(value))}


# Wrong on its first asking of an input, right on the second: what a data race or a hash seed makes.
alternating = reference.derive("flaky-alternating", **{SURFACE: _alternating})
# The same wrong answer every time: a plain divergence.
always_wrong = reference.derive("wrong-always", **{SURFACE: _always_wrong})
# The reference, counting.
counted = reference.derive("counted-reference", **{SURFACE: _counted_right})
# Two wrong answers that differ from each other.
wrong_two_ways = reference.derive("wrong-two-ways", **{SURFACE: _wrong_again_and_otherwise})


def _empty_by_strip_at_first(limit: int):
    """Wrong as ``tests.wrong_candidates:empty_by_strip`` is on an input's first ``limit`` askings, right after."""
    from tests import wrong_candidates

    def answer(value: Any) -> Any:
        return wrong_candidates._strip_empty(value) if _asked(value) <= limit else _right(value)

    return answer


def _empty_by_strip_on_odd_askings(value: Any) -> Any:
    from tests import wrong_candidates

    return wrong_candidates._strip_empty(value) if _asked(value) % 2 else _right(value)


# One bug of tests.wrong_candidates, but only on some askings: alternating (each run of an input is flaky in
# itself), and settling (the same wrong answer twice, in the first run; right in every later one).
alternating_strip = reference.derive("flaky-empty-by-strip", **{SURFACE: _empty_by_strip_on_odd_askings})
settling_strip = reference.derive("settling-empty-by-strip", **{SURFACE: _empty_by_strip_at_first(2)})


class ErroredFirst:
    """Answers ``errored`` the first time it is asked an input, and as the reference does after that."""

    def handle(self, request: dict[str, Any]) -> dict[str, Any] | None:
        if request.get("cmd") == "run":
            return self._run(request)
        if request.get("cmd") == "batch":
            return {"seq": request["seq"], "replies": [self._run(item) for item in request["items"]]}
        return reference.handle(request)

    @staticmethod
    def _run(request: dict[str, Any]) -> dict[str, Any]:
        if request["surface"] == SURFACE and _asked(wire.decode(request["input"])) == 1:
            return {"seq": request["seq"], "errored": {"message": "worker pool not ready"}}
        return reference.run(request)


errored_first = ErroredFirst()


class _OneAtATime(Candidate):
    """A candidate whose handshake does not offer batches: the harness sends it one input per request."""

    def started(self, protocol: int) -> dict[str, Any]:
        said = super().started(protocol)
        said["implementation"]["batch"] = False
        return said


def one_at_a_time(candidate: Candidate) -> Candidate:
    single = _OneAtATime(candidate.name, candidate.version)
    single.handlers = dict(candidate.handlers)
    return single


if __name__ == "__main__":  # as a process: exec:'python tests/flaky_candidates.py [--one-at-a-time]'
    (one_at_a_time(alternating) if "--one-at-a-time" in sys.argv else alternating).serve()
