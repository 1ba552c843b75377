"""Building blocks of surfaces' input models: strict models, reward numbers, files an input ships."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StrictBytes, StrictFloat, StrictInt, StrictStr

Number = StrictInt | StrictFloat
RewardDict = dict[StrictStr, Number]


# Built when first used (a validation, a schema), not when a surface folder is imported: a candidate process
# that only answers (``python -m conformance.reference``) imports every folder and validates nothing.
class StrictInput(BaseModel):
    """An input model: strict types and no unknown keys, which keep case files honest."""

    model_config = ConfigDict(strict=True, extra="forbid", defer_build=True)


class StrictOutput(BaseModel):
    """An output model: an answer's shape, its types strict and no key beyond those it names."""

    model_config = ConfigDict(strict=True, extra="forbid", defer_build=True)


class VerifierResult(StrictOutput):
    """A trial's verifier result as harbor writes it: its rewards, or null."""

    rewards: RewardDict | None


def inside(path: Any) -> bool:
    """Whether ``path`` is a relative path that stays inside the folder it is read from."""
    relative = PurePosixPath(path) if isinstance(path, str) else None
    return relative is not None and not relative.is_absolute() and ".." not in relative.parts and bool(relative.parts)


def _script_names(files: dict[str, bytes] | None) -> dict[str, bytes] | None:
    """The files an input ships are written under their names: each must land inside the folder."""
    for name in files or {}:
        if not inside(name):
            raise ValueError(f"file name {name!r} must be a relative path inside the folder "
                             f"(not absolute, no '..', not empty)")
    return files


# The files an input ships (relative name -> bytes), written into the folder it runs in.
ScriptFiles = Annotated[dict[StrictStr, StrictBytes] | None, AfterValidator(_script_names)]
