"""A candidate spec, parsed once at the edge into a value: what to connect to, and under which name.

The connectors table (:mod:`conformance.connection.connectors`) does the
parsing; this module only holds the value, so every layer above can pass
it around without knowing how a spec is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HARBOR_KIND = "harbor"
HARBOR_PREFIX = "harbor=="


def harbor_release(text: str) -> str | None:
    """The release a ``harbor==VERSION`` spec names; None for a spec of any other kind."""
    return text[len(HARBOR_PREFIX):] if text.startswith(HARBOR_PREFIX) else None


@dataclass(frozen=True)
class Spec:
    """What a spec names: its text as written (the candidate's id in reports), the connector kind that
    serves it, and the target that connector is given (a command, a release, ``module:attr``, a name)."""

    text: str
    kind: str
    target: str

    def __str__(self) -> str:
        return self.text

    @property
    def harbor_version(self) -> str | None:
        """The harbor release a ``harbor==VERSION`` spec names; None for any other kind."""
        return self.target if self.kind == HARBOR_KIND else None

    @property
    def report_id(self) -> str:
        """The spec as a file name: what a report is named after before the candidate has said its name (a
        certification's while it runs, a campaign's)."""
        return re.sub(r"[^A-Za-z0-9_.=-]+", "_", self.text).strip("_") or "candidate"


def harbor_spec(version: str) -> Spec:
    """The spec of a harbor release, made from its version (nothing to parse)."""
    return Spec(HARBOR_PREFIX + version, HARBOR_KIND, version)
