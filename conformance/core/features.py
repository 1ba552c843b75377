"""Input features: the named kinds of input a surface's strategy is meant to reach.

A surface folder's ``features.py`` lists them (``FEATURES``), each a pure
predicate of a decoded input and, per generation profile, the least share
of the inputs drawn that must have it. A generator counts every input it
draws under the features it has; a share below its minimum means the
strategy stopped reaching that kind of input (a generator that no longer
draws NaN rewards still passes every candidate, silently), and a gating
profile's run then fails (see docs/generators.md).

A warning gate judges by evidence instead (:func:`falls_short`): a run with a
fresh seed is a sample, and a strategy that reaches a feature at twice its
minimum still draws it below the minimum in a fair share of small runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any


class Gate(StrEnum):
    """What a share below its minimum does to a run."""

    FAIL = "fail"  # the run does not conform
    WARN = "warn"  # the run says so and conforms as before


# A warning says a feature falls short only when a strategy that reaches it at exactly its minimum share would draw it
# this rarely in fewer than one run in a hundred.
WARN_SIGNIFICANCE = 0.01


@dataclass(frozen=True)
class Feature:
    """A named kind of input: ``has(value)`` says whether a decoded input has it.

    ``minimum``: a profile's name -> the least share (0 to 1) of the inputs a
    run of that profile draws that must have it; a profile not named checks
    no minimum (the feature is still counted).
    """

    name: str
    description: str
    has: Callable[[Any], bool]
    minimum: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not all(0.0 <= share <= 1.0 for share in self.minimum.values()):
            raise ValueError(f"feature {self.name!r}: a minimum is a share between 0 and 1, got {dict(self.minimum)}")


def present(features: Iterable[Feature], value: Any) -> list[str]:
    """The names of the features ``value`` has, in declaration order."""
    return [feature.name for feature in features if feature.has(value)]


def minimums(features: Iterable[Feature], profile: str) -> dict[str, float]:
    """Each feature's minimum share under ``profile``, for the features that name one."""
    return {feature.name: feature.minimum[profile] for feature in features if profile in feature.minimum}


def chance_of_at_most(count: int, drawn: int, share: float) -> float:
    """How likely ``drawn`` inputs, each with the feature at chance ``share``, hold it ``count`` times or fewer.

    The binomial distribution's lower tail, summed in logarithms from ``count`` down (a campaign draws hundreds
    of thousands of inputs, whose single terms underflow a float): below the mean each term is smaller than the
    one above it, so the sum stops once what is left cannot change it.
    """
    if count >= drawn or share <= 0.0:
        return 1.0
    if share >= 1.0:
        return 0.0
    if count < 0:
        return 0.0
    log_share, log_rest, log_all = math.log(share), math.log1p(-share), math.lgamma(drawn + 1)

    def log_term(k: int) -> float:
        return log_all - math.lgamma(k + 1) - math.lgamma(drawn - k + 1) + k * log_share + (drawn - k) * log_rest

    top = log_term(count)
    total = 0.0
    for k in range(count, -1, -1):
        term = math.exp(log_term(k) - top)
        total += term
        if term < 1e-17 * total:
            break
    return min(1.0, math.exp(top) * total)


def falls_short(count: int, drawn: int, minimum: float, gate: Gate) -> tuple[bool, float | None]:
    """Whether ``count`` of ``drawn`` inputs is a shortfall under ``gate``, and the chance a warning is judged by.

    A failing gate (ci: a fixed seed and its whole budget, the same inputs every run) judges the share itself. A
    warning gate (a fresh seed, a smaller sample) judges the evidence: the share is below the minimum *and* a
    strategy that reaches the feature at exactly its minimum would draw it this rarely with a chance below
    ``WARN_SIGNIFICANCE``; the chance is returned with the verdict (None under a failing gate).
    """
    share = count / drawn if drawn else 0.0
    if share >= minimum:
        return False, None
    if gate is Gate.FAIL:
        return True, None
    chance = chance_of_at_most(count, drawn, minimum)
    return chance < WARN_SIGNIFICANCE, chance
