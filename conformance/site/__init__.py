"""``conformance site``: a static site of reports, to read without a server or a network.

An output format, like :mod:`conformance.report.markdown`: it reads reports
(through :mod:`conformance.report.reader`) and the corpus they were run on,
and runs nothing. :mod:`.collect` turns reports into the typed pages of
:mod:`.model` (a float mismatch's two bit patterns: :mod:`.floatbits`; the
candidates compared case by case, and a case's history: :mod:`.interop`; a
report's distributions as bar charts: :mod:`.bars`);
:mod:`.render` draws them from ``templates/`` and copies ``assets/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from conformance.site.collect import collect
from conformance.site.render import write


def build(reports: Iterable[Path], out: Path, cases_root: Path | None = None) -> list[str]:
    """Read every report (a bad line stops it, with nothing written), then write the site into ``out``; the
    pages written, by their paths from ``out``."""
    return write(collect(reports, cases_root), out)
