"""evsys.metric: no harbor targets."""

from conformance.oracle.coverage import NoTargets

TARGETS = NoTargets("evsys-sdk's metrics are a transcription the oracle's interpreter runs: "
                    "no harbor code to cover")
