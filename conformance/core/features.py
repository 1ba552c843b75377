"""Input features: the named kinds of input a surface's strategy is meant to reach.

A surface folder's ``features.py`` lists them (``FEATURES``), each a pure
predicate of a decoded input and, per generation profile, the least share
of the inputs drawn that must have it. A generator counts every input it
draws under the features it has; a share below its minimum means the
strategy stopped reaching that kind of input (a generator that no longer
draws NaN rewards still passes every candidate, silently), and a gating
profile's run then fails (see docs/generators.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any


class Gate(StrEnum):
    """What a share below its minimum does to a run."""

    FAIL = "fail"  # the run does not conform
    WARN = "warn"  # the run says so and conforms as before


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
