"""What a drawn step's reward files plainly parse to.

Standard library only: a surface's features use it too, and a run that
sends stored inputs computes their features without importing Hypothesis.
"""

from __future__ import annotations

import json


def own_rewards(drawn: dict) -> dict:
    """The rewards a step's reward files parse to, when they plainly do (else {})."""
    try:
        if drawn.get("reward_json") is not None:
            rewards = json.loads(drawn["reward_json"])
            return rewards if isinstance(rewards, dict) else {}
        if drawn.get("reward_txt") is not None:
            return {"reward": float(drawn["reward_txt"])}
    except ValueError:
        pass
    return {}
