"""reason.normalize: no harbor targets."""

from conformance.oracle.coverage import NoTargets

TARGETS = NoTargets("agent-challenge's reason-code normalizer is a transcription the oracle's interpreter runs: "
                    "no harbor code to cover")
