"""A campaign's Ctrl-C (or SIGTERM) ends it within a bounded time, whatever its clean-up meets.

The campaign ends in order when interrupted: tasks stop at their next input, each worker's connections are
closed, then the cluster. Should that take longer than the grace period (a worker's task stuck in a call that
never returns, a cluster that does not answer), its processes are killed and the process exits all the same:
nothing outlives the campaign, and the report on disk keeps every finding written so far.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

# Seconds an interrupted campaign has to end in order (5 s on an idle 2-core machine) before it is ended by force.
GRACE_SECONDS = 60.0
INTERRUPTED = 130  # the exit status of a process ended by SIGINT


def kill_descendants() -> None:
    """SIGKILL to every process this one started, and theirs (the cluster's nannies and workers, their oracles)."""
    import psutil  # type: ignore[import-untyped]  # the campaign extra installs it (Dask needs it too)

    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            child.kill()


@contextmanager
def bounded(on_forced: Callable[[], None], grace: float = GRACE_SECONDS) -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt in the main thread, as they would, and start a timer: when the
    block has not ended ``grace`` seconds later, ``on_forced`` says so, the processes this one started are killed
    and the process exits with status 130. In the main thread only (signal handlers are set there)."""
    def force() -> None:
        on_forced()
        kill_descendants()
        os._exit(INTERRUPTED)  # the main thread is stuck: no clean-up of its can be waited for

    timer = threading.Timer(grace, force)
    timer.daemon = True

    def interrupted(signum: int, frame: FrameType | None) -> None:
        if not timer.is_alive() and not timer.finished.is_set():
            timer.start()
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[signal.Signals, Any] = {}
    try:  # a signal while the handlers are set is an interrupt like any other: the finally still runs
        for number in (signal.SIGINT, signal.SIGTERM):
            previous[number] = signal.signal(number, interrupted)
        yield
    finally:
        timer.cancel()
        for number, handler in previous.items():
            signal.signal(number, handler)
