"""reward.parse: the kinds of reward file its strategy is meant to reach (see conformance/core/features.py).

The helpers read one file's bytes; multi_step.reward and job.result, whose
steps and trials leave the same files, use them too.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from conformance.core.features import Feature

# CPython refuses to turn a string of more digits than this into an int (sys.int_info.default_max_str_digits).
INT_STRING_LIMIT = 4300
_LONG_DIGITS = re.compile(rb"[0-9]{%d}" % (INT_STRING_LIMIT + 1))
_JSON_NON_FINITE = re.compile(rb"NaN|-?Infinity")


def text_of(data: bytes) -> str | None:
    """A file's text, or None when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def non_finite(data: bytes) -> bool:
    """The file is a number float() reads as NaN or an infinity, or JSON with a NaN or Infinity token."""
    text = text_of(data)
    if text is None:
        return False
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return bool(_JSON_NON_FINITE.search(data))


def blank(data: bytes) -> bool:
    """No bytes, or whitespace only: empty to strip(), not to a check of the file's size."""
    text = text_of(data)
    return text is not None and not text.strip()


def undecodable(data: bytes) -> bool:
    return text_of(data) is None


def json_pairs(data: bytes) -> list[list[tuple[Any, Any]]] | None:
    """Every JSON object of the file, as its key-value pairs (duplicates kept); None when it is no JSON."""
    objects: list[list[tuple[Any, Any]]] = []

    def keep(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
        objects.append(pairs)
        return dict(pairs)

    text = text_of(data)
    if text is None:
        return None
    try:
        json.loads(text, object_pairs_hook=keep)
    except (ValueError, RecursionError):
        return None
    return objects


def top_object_keys(data: bytes) -> set[Any]:
    """The keys of the file's JSON object (empty when it holds no object)."""
    text = text_of(data)
    try:
        document = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return set()
    return set(document) if isinstance(document, dict) else set()


def reward_files(folder: Mapping[str, Any]) -> list[bytes]:
    """The bytes of a folder's reward.txt and reward.json (an input, a step, a trial: ``reward_txt``,
    ``reward_json``), those it has."""
    return [data for data in (folder.get("reward_txt"), folder.get("reward_json")) if isinstance(data, bytes)]


def any_reward_file(folders: Iterable[Mapping[str, Any]], has: Callable[[bytes], bool]) -> bool:
    """Whether a reward file of any of ``folders`` has what ``has(data)`` says."""
    return any(has(data) for folder in folders for data in reward_files(folder))


def _txt(value: Any) -> bytes | None:
    data = value.get("reward_txt")
    return data if isinstance(data, bytes) else None


def _json(value: Any) -> bytes | None:
    data = value.get("reward_json")
    return data if isinstance(data, bytes) else None


def _non_ascii_digit(data: bytes) -> bool:
    text = text_of(data)
    return text is not None and any(c.isdecimal() and not c.isascii() for c in text)


def _duplicate_keys(data: bytes) -> bool:
    objects = json_pairs(data)
    return bool(objects) and any(len({key for key, _ in pairs}) < len(pairs) for pairs in objects or [])


FEATURES = (
    # float() and Python's json read NaN and the infinities; a port with a strict grammar refuses them, and
    # VerifierResult keeps them: the file's verdict differs.
    Feature("non-finite reward", "a file holds NaN or an infinity (float() spellings, JSON's NaN/Infinity)",
            lambda value: any_reward_file([value], non_finite),
            minimum={"ci": 0.018, "dev": 0.035, "explore": 0.035}),
    # float() reads Unicode decimal digits through its own tables; an ASCII-only number grammar does not.
    Feature("non-ASCII digits", "a file's text holds a decimal digit outside ASCII (Arabic-Indic, fullwidth...)",
            lambda value: any_reward_file([value], _non_ascii_digit),
            minimum={"ci": 0.044, "dev": 0.06, "explore": 0.06}),
    # Past 4300 digits CPython's int() refuses a string (float() does not): which of them a port's parser
    # behaves like shows only there. The strategy reaches it a few times in ten thousand draws (lengths up to
    # 6000 of reward.txt's long runs; reward.json's long integers stop at 4200), too few for a ci minimum.
    Feature("past the int-string limit", f"a run of more than {INT_STRING_LIMIT} digits in a file",
            lambda value: any_reward_file([value], lambda data: bool(_LONG_DIGITS.search(data))),
            minimum={"explore": 0.0003}),
    # Python's json keeps the last of duplicate keys; other parsers keep the first or refuse the document.
    Feature("duplicate JSON keys", "reward.json has an object with a key twice",
            lambda value: (data := _json(value)) is not None and _duplicate_keys(data),
            minimum={"ci": 0.014, "dev": 0.025, "explore": 0.025}),
    # Several rewards: each key is read on its own, and a port that reads one ("reward") loses the others.
    Feature("multi-key rewards", "reward.json is an object of two keys or more",
            lambda value: (data := _json(value)) is not None and len(top_object_keys(data)) >= 2,
            minimum={"ci": 0.08, "dev": 0.1, "explore": 0.13}),
    # harbor checks a file's size, not its text: an empty file and a blank one take different paths.
    Feature("empty or blank file", "a file with no bytes or only whitespace",
            lambda value: any_reward_file([value], blank),
            minimum={"ci": 0.012, "dev": 0.008, "explore": 0.015}),
    # Bytes that are not UTF-8: the reading error's type and message are part of the answer.
    Feature("undecodable bytes", "a file that is not UTF-8",
            lambda value: any_reward_file([value], undecodable),
            minimum={"ci": 0.035, "dev": 0.05, "explore": 0.06}),
    # Both files: reward.json is read and reward.txt never, whatever it holds.
    Feature("both files", "reward.txt and reward.json are both there",
            lambda value: _txt(value) is not None and _json(value) is not None,
            minimum={"ci": 0.074, "dev": 0.1, "explore": 0.13}),
)
