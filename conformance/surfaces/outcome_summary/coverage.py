"""outcome.summary: no harbor targets."""

from conformance.oracle.coverage import NoTargets

TARGETS = NoTargets("agent-challenge's outcome mapping is a transcription the oracle's interpreter runs: "
                    "no harbor code to cover")
