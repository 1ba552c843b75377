"""result.load: a job's or a trial's result.json read back through harbor's models (JobResult, TrialResult)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import StrictBytes, StrictStr

from conformance.core.inputs import StrictInput, StrictOutput
from conformance.core.surfaces import surface

# What a ``reloaded`` of "same" and "differs" mean; any other value is the reason code of the refusal.
SAME, DIFFERS = "same", "differs"
# What stands for a value harbor draws at random while it validates (see harbor.py): a trial result's
# ``id`` left out (uuid4), and the ``trial_name`` suffix of a config that names no trial (7 ShortUUID letters).
GENERATED_ID = "<uuid4>"
GENERATED_SUFFIX = "<shortuuid>"


class LoadedResult(StrictOutput):
    """What harbor makes of the file: the model, what it writes the value back as, and whether that reads back."""

    model: Literal["JobResult", "TrialResult"]
    # ``model_dump_json()`` of the loaded value, parsed: the migrated stats, the keys a dump keeps and leaves
    # out, NaN and infinities written as null, datetimes and UUIDs as harbor spells them.
    written: dict[StrictStr, Any]
    # ``written`` validated again: "same" (an equal value), "differs", or the reason code it is refused with.
    reloaded: StrictStr


@surface(
    "result.load",
    summary="a job's or a trial's result.json read back through harbor's JobResult or TrialResult, and written again",
    output="{model, written: model_dump_json of the loaded value, reloaded: same | differs | reason code}, "
           "or the exception raised (its type, and its message's reason code)",
    spec="seed-003 §5 (job result.json), read back as harbor's viewer, resume and upload read it",
    strategy=".strategy:load_inputs",
    message_reader=".reasons:reason_code",
    output_model=LoadedResult,
)
class ResultLoadInput(StrictInput):
    """The bytes of a result.json, and which file it is: a job's (``JobResult``) or a trial's (``TrialResult``).

    harbor reads both with ``Path.read_text()`` then ``model_validate_json``
    (``Job.__init__`` and ``Job._maybe_init_existing_job``, on a resume).
    """

    file: Literal["job", "trial"]
    data: StrictBytes

