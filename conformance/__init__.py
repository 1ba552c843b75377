"""harbor-conformance: a differential conformance suite for harbor scoring.

Kept import-light on purpose: the oracle adapter loads ``conformance/wire.py``
by path inside harbor's own virtualenv.
"""

__version__ = "0.1.0"
SUITE = "harbor-conformance"
