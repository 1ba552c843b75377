"""evsys.metric on the oracle's side: evsys-sdk's built-in metrics, transcribed.

evsys-sdk is not on PyPI: ``evsys_sdk.py`` beside this file is its
transcription, run here on the oracle's CPython.

Runs inside the oracle's virtualenv (standard library), loaded by
path by ``oracles/harbor_adapter.py``, which calls :func:`serve` once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the adapter's Context and the kit's Handler, for the type check only (oracles/harbor_adapter.py)
    from conformance_kit.candidate import Handler
    from harbor_adapter import Context


def serve(context: Context) -> Handler:
    if TYPE_CHECKING:  # the module the adapter loads under that name
        import surface_evsys_metric_evsys_sdk as evsys_sdk
    else:
        evsys_sdk = context.load("evsys.metric", "evsys_sdk")
    return evsys_sdk.compute
