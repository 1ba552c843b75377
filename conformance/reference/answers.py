"""The reference candidate itself: one answer per registered surface whose folder has a ``reference.py``.

Built on first use (``conformance.reference.candidate``), not when the
package is imported: the surfaces' answers import this package's shared
modules, and must find it importable without the candidate.
"""


from __future__ import annotations

import platform

from conformance import __version__
from conformance.core.loading import import_object
from conformance.core.surfaces import SURFACES
from conformance.kit.candidate import Candidate, cores

candidate = Candidate(
    "reference",
    __version__,
    language="python",
    homepage="https://pypi.org/project/harbor-conformance/",
    dependencies={"python": platform.python_version()},
    # Its whole-job answers share no state of the process (working folders without chdir), and spend most of
    # their time in uv-script processes: as many at once as there are cores, up to four.
    concurrency=min(4, cores()),
)

for _surface in SURFACES.values():
    if _surface.reference is not None:
        candidate.surface(_surface.name)(import_object(_surface.reference))
