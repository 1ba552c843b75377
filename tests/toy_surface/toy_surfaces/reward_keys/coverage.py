"""Which of harbor's code the surface reaches: the VerifierResult model."""

from conformance.oracle.coverage import Target

TARGETS = (Target("harbor/models/verifier/result.py", "VerifierResult"),)
