"""reward.parse: harbor's Verifier reading the reward files, and the VerifierResult model."""

from conformance.oracle.coverage import Target

VERIFIER = "harbor/verifier/verifier.py"

TARGETS = (
    Target(VERIFIER, "Verifier._parse_reward_text"),
    Target(VERIFIER, "Verifier._parse_reward_json"),
    # The start of verify() resolves and uploads the tests and runs them in
    # the sandbox, which the oracle stubs (_Sandbox in oracles/harbor_adapter.py):
    # only the reward-file selection that follows is harbor's scoring.
    Target(VERIFIER, "Verifier.verify", start_at="if self.trial_paths.reward_json_path.exists():"),
    # A pydantic model: its one statement runs at import; what it does to
    # values happens in pydantic, which coverage of harbor cannot see.
    Target("harbor/models/verifier/result.py", "VerifierResult"),
)
