"""The oracle's side: harbor's own VerifierResult, inside the oracle's virtualenv (standard library and harbor)."""

from typing import Any

from harbor.models.verifier.result import VerifierResult


def serve(context: Any) -> Any:
    def reward_keys(request: dict[str, Any]) -> list[str]:
        return list(VerifierResult(rewards=request["rewards"]).rewards or {})

    return reward_keys
