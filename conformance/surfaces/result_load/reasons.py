"""result.load's reason codes: what an exception's message says went wrong, in one word.

Standard library only: the harness reads the oracle's and the candidate's
messages with it (``message_reader``), and the oracle's side
(``harbor.py``) names a refused reload with it.

- a pydantic ``ValidationError``: the first error's type (``json_invalid``,
  ``missing``, ``int_parsing``, ``float_type``...), as its message prints
  it (``[type=missing, ...``);
- a ``UnicodeDecodeError`` (the file is not UTF-8): the codec's reason
  (``invalid start byte``, ``invalid continuation byte``,
  ``unexpected end of data``...);
- anything else: None.
"""

from __future__ import annotations

import re

_PYDANTIC_TYPE = re.compile(r"\[type=([A-Za-z0-9_]+)")
_CODEC = re.compile(r"^'[^']+' codec can't decode bytes? .*?: (.+)$")


def reason_code(message: str | None) -> str | None:
    if not message:
        return None
    found = _PYDANTIC_TYPE.search(message)
    if found:
        return found.group(1)
    codec = _CODEC.match(message)
    return codec.group(1) if codec else None
