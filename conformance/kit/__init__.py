"""The candidate kit: the wire codec and a helper for writing candidates in Python.

Standard library only, and relative imports only, so the kit loads inside any
Python under any package name: the harness imports it as ``conformance.kit``;
the oracle adapter, running in harbor's own virtualenv where the harness is
absent, loads this folder by path as a package of its own.
"""

from .candidate import Candidate, SkipSurface
from .wire import WireError

__all__ = ["Candidate", "SkipSurface", "WireError"]
