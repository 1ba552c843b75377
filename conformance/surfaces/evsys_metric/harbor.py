"""evsys.metric on the oracle's side: evsys-sdk's built-in metrics, transcribed.

evsys-sdk is not on PyPI: ``evsys_sdk.py`` beside this file is its
transcription, run here on the oracle's CPython.

Runs inside the oracle's virtualenv (standard library), loaded by
path by ``oracles/harbor_adapter.py``, which calls :func:`serve` once.
"""

from __future__ import annotations

from typing import Any


def serve(context: Any) -> Any:
    return context.load("evsys.metric", "evsys_sdk").compute
