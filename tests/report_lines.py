"""Report lines written by hand for the suite's own tests: a whole header and footer around the lines a
test cares about, so a reader sees a valid report."""

from __future__ import annotations

from typing import Any

from conformance.core.compare import COMPARATOR_VERSION


def header_line(**fields: Any) -> dict[str, Any]:
    return {"type": "header", "suite": "harbor-conformance", "suite_version": "0", "protocol": 1,
            "comparator": COMPARATOR_VERSION,
            "candidate": {"spec": "cand"}, "oracle": {"spec": "harbor==0.13.1"}, "nan_policy": "any-nan-equal",
            "surfaces": [], "cases_root": "cases", "python": "3.11", "argv": [],
            "started_at": "2026-01-01T00:00:00+00:00", **fields}


def footer_line(**fields: Any) -> dict[str, Any]:
    """A footer: its presence says the run finished; summaries count the lines themselves."""
    return {"type": "footer", "finished_at": "2026-01-01T00:00:01+00:00", "total": 0, "outcomes": {},
            "by_surface": {}, "conforms": False, **fields}
