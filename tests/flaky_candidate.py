"""A nondeterministic candidate: wrong on some calls for an input and right on others.

On reward.parse it alternates per input: the first call (and every odd one) answers as
``tests.wrong_candidates:empty_by_strip`` does, the second (and every even one) as the reference. Any
two consecutive calls for an input therefore disagree, so three runs of one are never all alike: a
replay must call it flaky, whichever run it starts on.
"""

from __future__ import annotations

from collections import Counter

from conformance.reference import candidate as reference
from conformance.surfaces.reward_parse import reference as reward_files
from tests import wrong_candidates

CALLS: Counter[str] = Counter()


def _alternating(verifier_dir: dict):
    key = repr(sorted(verifier_dir.items()))
    CALLS[key] += 1
    if CALLS[key] % 2:
        return wrong_candidates._strip_empty(verifier_dir)
    return reward_files.parse(verifier_dir)


candidate = reference.derive("flaky-empty-by-strip", **{"reward.parse": _alternating})
