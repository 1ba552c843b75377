"""Objects named as ``module:attr`` (a dotted attribute path after the colon), imported on first use.

Declarations name what they use this way (a surface's generator, how its
messages are read; a registered candidate), so declaring costs no import and
a layer never imports the implementation it names.
"""

from __future__ import annotations

import importlib
from typing import Any


def import_object(target: str) -> Any:
    """The object ``module:attr`` names; ImportError or AttributeError saying which part is missing."""
    module_name, colon, attr = target.partition(":")
    if not colon or not module_name or not attr:
        raise ImportError(f"{target!r} is not of the form module:attr")
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AttributeError(f"{module_name!r} has no attribute {attr!r}") from None
    return obj
