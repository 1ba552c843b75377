"""reward.parse: what harbor makes of the reward files a verifier leaves (seed-003 §1-§2)."""

from __future__ import annotations

from pydantic import StrictBytes

from conformance.core.inputs import RewardDict, StrictInput
from conformance.core.surfaces import Bench, surface


@surface(
    "reward.parse",
    cache_note="a pure function of the reward files' bytes (messages name the files relative to the trial)",
    summary="reward.txt / reward.json bytes to the rewards dict a trial holds",
    output="dict[str, float | int] | None, or the exception raised (its type, and its message's reason code)",
    spec="seed-003 §1-§2",
    strategy=".strategy:verifier_dirs",
    # The messages reach agent-challenge, which reads them into reason codes: the code is part of the answer.
    message_reader="conformance.surfaces.reason_normalize.agent_challenge:listed_reason_code",
    examples_scale=4,
    output_model=RewardDict | None,
    # draws ÷ yardstick, ci examples/s and campaign inputs/s: twice what they were before the strategies were
    # made leaner, at commit 3bc0f84 (0.66 of the yardstick by the bench's measure of four seeds; 283 ci
    # examples/s; a campaign worker 95 inputs/s, the mean of two of the bench's measures over 12 s).
    bench=Bench(generated=True, targets={
        "draws ÷ yardstick": 1.32, "ci examples/s": 566, "campaign inputs/s": 190, "exec / raw": 0.5}),
)
class VerifierDir(StrictInput):
    """What the verifier left in its logs dir: each reward file's bytes, or absent."""

    reward_txt: StrictBytes | None = None
    reward_json: StrictBytes | None = None
