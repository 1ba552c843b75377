"""The suite's own surfaces, one folder each (see conformance.core.surfaces for what a folder holds).

Importing this package imports every folder's declaration, which registers
it; :data:`conformance.core.surfaces.SURFACES` does so on its first lookup.
A new surface is a new folder here: nothing else lists it.
"""

from __future__ import annotations

import importlib
import pkgutil

for _folder in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
    if _folder.ispkg:
        importlib.import_module(f"{__name__}.{_folder.name}")
