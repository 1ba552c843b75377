"""harbor-conformance: a differential conformance suite for harbor scoring.

Kept import-light on purpose: everything imports it first.
"""

__version__ = "0.1.0"
SUITE = "harbor-conformance"
# The harbor release the suite certifies against: the oracle, the corpus's recordings, the gate's baseline.
ORACLE_RELEASE = "0.13.1"
