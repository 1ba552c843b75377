"""A candidate (or oracle) for the concurrency tests: ``overlap_candidate.py DIR ROLE K``.

For an input ``{"id": X, "group": G}`` it leaves the file ``DIR/G/ROLE-X``, then waits (up to WAIT seconds) until
``DIR/G`` holds K such files: until K requests of the group are under way at once, in as many processes. Its
answer says whether they were: ``{"together": true}``, or false after the wait.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from conformance.kit.candidate import Candidate

WAIT = 10.0


def main() -> None:
    folder, role, wanted = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    candidate = Candidate("overlap", "1.0")

    def answer(request: dict[str, str]) -> dict[str, bool]:
        group = folder / request["group"]
        group.mkdir(parents=True, exist_ok=True)
        (group / f"{role}-{request['id']}").touch()
        deadline = time.monotonic() + WAIT
        while len(list(group.iterdir())) < wanted:
            if time.monotonic() > deadline:
                return {"together": False}
            time.sleep(0.01)
        return {"together": True}

    for surface in ("job.result", "reason.normalize"):
        candidate.surface(surface)(answer)
    candidate.serve()


if __name__ == "__main__":
    main()
