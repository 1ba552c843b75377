"""``sum()`` exactly as CPython 3.12 computes it, on any Python >= 3.11.

harbor 0.13.1 runs on Python 3.12, whose builtin ``sum`` is not left-to-right
addition: with the default int start it adds ints in a C long, switches to
Neumaier compensated summation once a float arrives, folds in C-long ints
with plain addition, and falls back to generic ``+`` after an int that does
not fit a C long. A runner that writes ``for v in values: total += v`` (or
runs on 3.11) differs in the last bits; this module is the clean-room
transcription of that algorithm the reference candidate relies on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1


def _fits_long(value: int) -> bool:
    return LONG_MIN <= value <= LONG_MAX


def cpython312_sum(items: Iterable[Any]) -> int | float:
    it = iter(items)

    # Phase 1: the int start; ints (and bools) summed while the total fits a C long.
    total = 0
    for item in it:
        if type(item) in (int, bool) and _fits_long(item) and _fits_long(total + item):
            total += int(item)
            continue
        result: int | float = total + item
        break
    else:
        return total

    # Phase 2: a float total; floats by Neumaier, C-long ints by plain addition.
    if type(result) is float:
        hi, lo = result, 0.0
        for item in it:
            if type(item) is float:
                t = hi + item
                if abs(hi) >= abs(item):
                    lo += (hi - t) + item
                else:
                    lo += (item - t) + hi
                hi = t
                continue
            if isinstance(item, int) and _fits_long(item):
                hi += float(item)
                continue
            if lo and math.isfinite(lo):
                hi += lo
            result = hi + item
            break
        else:
            # The compensation is skipped when zero (keeps -0.0) or not finite.
            if lo and math.isfinite(lo):
                hi += lo
            return hi

    # Phase 3: generic addition for whatever is left.
    for item in it:
        result = result + item
    return result
