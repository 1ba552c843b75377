"""The built-in ``reference`` candidate: a clean-room implementation in plain Python.

It does not import harbor (nor pydantic): every rule is written down in each
surface folder's ``reference.py`` from harbor 0.13.1's observed behaviour
(and, for the downstream surfaces, agent-challenge's and evsys-sdk's
documented behaviour), so it doubles as the worked example for candidate
authors; this package holds what several of them share (CPython's float sum,
pydantic's float and int parsing, the Unicode tables, the uv-script runner).
It answers every registered surface whose folder has a ``reference.py``. Run
it over the wire with ``python -m conformance.reference`` or name it
``reference`` on the command line.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # The candidate is built on first use: building it imports every surface's reference.py, which import the
    # shared modules of this package.
    if name == "candidate":
        from conformance.reference.answers import candidate

        return candidate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
