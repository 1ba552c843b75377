"""``--observations DIR``: Hypothesis's observations of the generated inputs, for Tyche.

Hypothesis reports every test case it runs to its observability callbacks
(``hypothesis.internal.observability``): its status, how it was generated
(the phase: generate, shrink...), its arguments and its ``features``, where
the generators put each input's features (:mod:`conformance.core.features`)
with ``hypothesis.event``. Each surface's observations go to one file,
``DIR/<surface>_testcases.jsonl``, one JSON object a line, in the format
Hypothesis writes under ``HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY`` and Tyche
reads; each of a generator's rounds (a Hypothesis run) starts its own
``run_start``, and the file of a surface run again is written anew.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from conformance.errors import UsageError

# The release that made observability callbacks a public interface (add_observability_callback).
HYPOTHESIS_WITH_CALLBACKS = (6, 137)


def file_for(folder: Path, surface: str) -> Path:
    return folder / f"{surface}_testcases.jsonl"


def check_available() -> None:
    """UsageError when the installed Hypothesis has no observability callbacks."""
    from hypothesis import __version_info__

    if tuple(__version_info__[:2]) < HYPOTHESIS_WITH_CALLBACKS:
        raise UsageError(f"--observations needs Hypothesis {'.'.join(map(str, HYPOTHESIS_WITH_CALLBACKS))} or later "
                         f"(installed: {'.'.join(map(str, __version_info__))})")


def start(folder: Path, surface: str) -> IO[str]:
    """The surface's observations file, emptied (the caller closes it)."""
    check_available()
    folder.mkdir(parents=True, exist_ok=True)
    return open(file_for(folder, surface), "w", encoding="utf-8")  # noqa: SIM115 - the caller's context closes it


def _line(observation: Any) -> str:
    # Hypothesis's own writer turns an observation (a dataclass holding the drawn arguments) into JSON with this.
    from hypothesis.strategies._internal.utils import to_jsonable

    return json.dumps(to_jsonable(observation, avoid_realization=False)) + "\n"


@contextmanager
def recording(handle: IO[str] | None) -> Iterator[None]:
    """While inside, every observation Hypothesis makes in this thread is written to ``handle`` (None: none)."""
    if handle is None:
        yield
        return
    from hypothesis.internal import observability

    def write(observation: Any) -> None:
        handle.write(_line(observation))

    # Hypothesis traces the lines each test case runs while observing: here those are the harness's own, which say
    # nothing of the candidate, and tracing makes a run several times slower. Its module flag for the environment
    # variable HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_NOCOVER is turned off for the while.
    covering = observability.OBSERVABILITY_COLLECT_COVERAGE
    observability.OBSERVABILITY_COLLECT_COVERAGE = False
    try:
        with observability.with_observability_callback(write):
            yield
    finally:
        observability.OBSERVABILITY_COLLECT_COVERAGE = covering
        handle.flush()
