"""reason.normalize on the oracle's side: agent-challenge's normalizer and classifier, transcribed.

agent-challenge is not on PyPI: ``agent_challenge.py`` beside this file is
its transcription, run here on the oracle's CPython.

Runs inside the oracle's virtualenv (standard library), loaded by
path by ``oracles/harbor_adapter.py``, which calls :func:`serve` once.
"""

from __future__ import annotations

from typing import Any


def serve(context: Any) -> Any:
    agent_challenge = context.load("reason.normalize", "agent_challenge")

    def reason_normalize(request: dict[str, Any]) -> dict[str, Any]:
        value = request.get("value")
        return {"reason_code": agent_challenge.normalize_reason_code(value),
                "failure": agent_challenge.classify_failure(value, request.get("attempt_number", 1))}

    return reason_normalize
