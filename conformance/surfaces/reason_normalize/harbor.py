"""reason.normalize on the oracle's side: agent-challenge's normalizer and classifier, transcribed.

agent-challenge is not on PyPI: ``agent_challenge.py`` beside this file is
its transcription, run here on the oracle's CPython.

Runs inside the oracle's virtualenv (standard library), loaded by
path by ``oracles/harbor_adapter.py``, which calls :func:`serve` once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the adapter's Context and the kit's Handler, for the type check only (oracles/harbor_adapter.py)
    from conformance_kit.candidate import Handler
    from harbor_adapter import Context


def serve(context: Context) -> Handler:
    if TYPE_CHECKING:  # the module the adapter loads under that name
        import surface_reason_normalize_agent_challenge as agent_challenge
    else:
        agent_challenge = context.load("reason.normalize", "agent_challenge")

    def reason_normalize(request: dict[str, Any]) -> dict[str, Any]:
        value = request.get("value")
        return {"reason_code": agent_challenge.normalize_reason_code(value),
                "failure": agent_challenge.classify_failure(value, request.get("attempt_number", 1))}

    return reason_normalize
