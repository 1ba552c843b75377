"""toy.reward_keys: the keys of a rewards dict, in the order harbor's VerifierResult keeps them."""

from __future__ import annotations

from pydantic import StrictStr

from conformance.core.inputs import RewardDict, StrictInput
from conformance.core.surfaces import surface


@surface(
    "toy.reward_keys",
    summary="the keys harbor's VerifierResult keeps of a rewards dict, in its order",
    output="list[str]",
    output_model=list[StrictStr],
    spec="seed-003 §2 (VerifierResult)",
    strategy=".strategy:inputs",
)
class RewardKeysInput(StrictInput):
    rewards: RewardDict
