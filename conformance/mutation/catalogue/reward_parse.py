"""reward.parse: reading reward.txt and reward.json, and pydantic's ``float | int`` coercion."""

from conformance.mutation.mutants import Mutant

SURFACE = "reward.parse"


def _m(slug: str, module: str, find: str, replace: str, bug: str, equivalent: str | None = None) -> Mutant:
    return Mutant(slug, SURFACE, module, find, replace, bug, equivalent)


MUTANTS = [
    _m("txt-before-json", "reward_files",
       "    if reward_json is not None:\n        rewards = parse_reward_json(reward_json)\n"
       "    elif reward_txt is not None:\n        rewards = parse_reward_text(reward_txt)",
       "    if reward_txt is not None:\n        rewards = parse_reward_text(reward_txt)\n"
       "    elif reward_json is not None:\n        rewards = parse_reward_json(reward_json)",
       "reward.txt read first when both files exist"),
    _m("txt-empty-by-strip", "reward_files",
       'if len(data) == 0:\n        raise RewardFileEmptyError("Reward file is empty at reward.txt")',
       'if not data.strip():\n        raise RewardFileEmptyError("Reward file is empty at reward.txt")',
       "a reward.txt of whitespace only taken as empty (harbor checks the byte size)"),
    _m("json-empty-by-strip", "reward_files",
       'if len(data) == 0:\n        raise RewardFileEmptyError("Reward file is empty at reward.json")',
       'if not data.strip():\n        raise RewardFileEmptyError("Reward file is empty at reward.json")',
       "a reward.json of whitespace only taken as empty (harbor checks the byte size)"),
    _m("bom-skipped", "reward_files", 'text = data.decode("utf-8")', 'text = data.decode("utf-8-sig")',
       "a leading UTF-8 byte-order mark skipped (harbor's read_text keeps it)"),
    _m("undecodable-replaced", "reward_files", 'text = data.decode("utf-8")',
       'text = data.decode("utf-8", errors="replace")',
       "bytes that are not UTF-8 replaced by U+FFFD instead of failing to decode"),
    _m("latin-1", "reward_files", 'text = data.decode("utf-8")', 'text = data.decode("latin-1")',
       "the files read as Latin-1"),
    _m("no-newline-translation", "reward_files",
       'return text.replace("\\r\\n", "\\n").replace("\\r", "\\n")', "return text",
       "carriage returns kept instead of read as universal newlines",
       equivalent="a line end can only stand where both parsers skip it as whitespace: float() strips \\r "
                  "as it strips \\n, JSON skips both between tokens, and json.loads refuses both raw inside "
                  "a string, so no result or message changes"),
    _m("txt-as-json-number", "reward_files", 'return {"reward": float(_text(data))}',
       'return {"reward": json.loads(_text(data))}',
       "reward.txt read with the JSON number grammar instead of float()"),
    _m("txt-stripped-first", "reward_files", 'return {"reward": float(_text(data))}',
       'return {"reward": float(_text(data).strip())}',
       "reward.txt stripped with str.strip() before float(): it also removes U+001C..U+001F, which float() "
       "refuses"),
    _m("json-strict-constants", "reward_files", "return json.loads(_text(data))",
       "return json.loads(_text(data), parse_constant=int)",
       "NaN, Infinity and -Infinity refused in reward.json (strict JSON), where Python's json accepts them"),
    _m("json-ints-as-floats", "reward_files", "return json.loads(_text(data))",
       "return json.loads(_text(data), parse_int=float)",
       "every JSON number read as a float: 1 becomes 1.0"),
    _m("json-first-duplicate", "reward_files", "return json.loads(_text(data))",
       "return json.loads(_text(data), object_pairs_hook=lambda pairs: dict(reversed(pairs)))",
       "the first of two equal keys kept (Python's json keeps the last)"),
    _m("null-refused", "reward_files", "if rewards is None:\n        return None",
       "if rewards is None:\n        raise ValidationError(\"rewards: Input should be a valid dictionary\")",
       "a reward.json of null refused (harbor's model allows None)"),
    _m("first-error-only", "reward_files", "            errors.append(str(e))", "            raise",
       "only the first bad value reported, where pydantic reports all of them in one message"),
    _m("bool-as-int", "pydantic_float", "if isinstance(value, bool):\n        return float(value)",
       "if isinstance(value, bool):\n        return int(value)",
       "true and false coerced to 1 and 0 (pydantic's float | int makes them 1.0 and 0.0)"),
    _m("bool-refused", "pydantic_float", "if isinstance(value, bool):\n        return float(value)",
       'if isinstance(value, bool):\n        raise ValidationError(f"rewards.{key}: Input should be a valid number")',
       "true and false refused as rewards"),
    _m("ints-to-floats", "pydantic_float", "if isinstance(value, (int, float)):\n        return value",
       "if isinstance(value, (int, float)):\n        return float(value)",
       "integer rewards converted to float (pydantic keeps an int an int)"),
    _m("strings-refused", "pydantic_float", "if isinstance(value, str):", "if isinstance(value, bytes):",
       "numeric strings refused (pydantic's lax mode parses them)"),
    _m("strings-by-python-float", "pydantic_float",
       "    if not _RUST_FLOAT.fullmatch(text):\n        return None\n",
       "    try:\n        return float(text)\n    except ValueError:\n        return None\n",
       "numeric strings parsed with Python's float() instead of pydantic-core's Rust grammar"),
    _m("strings-python-strip", "pydantic_float", "stripped = text.strip(_WHITE_SPACE)", "stripped = text.strip()",
       "numeric strings trimmed with Python's whitespace set (it adds U+001C..U+001F) instead of Rust's"),
    _m("strings-ascii-strip", "pydantic_float", "stripped = text.strip(_WHITE_SPACE)",
       'stripped = text.strip(" \\t\\n\\r")', "numeric strings trimmed of ASCII whitespace only"),
    _m("strings-no-underscores", "pydantic_float",
       '    if value is None and "_" in stripped:\n'
       '        if not (stripped.startswith("_") or stripped.endswith("_") or "__" in stripped):\n'
       '            value = _rust_parse_f64(stripped.replace("_", ""))\n', "",
       "underscores between digits refused in numeric strings"),
    _m("strings-underscores-anywhere", "pydantic_float",
       'if not (stripped.startswith("_") or stripped.endswith("_") or "__" in stripped):', "if True:",
       "underscores accepted anywhere in numeric strings, leading, trailing or doubled too"),
    _m("message-without-location", "pydantic_float", 'raise ValidationError(f"rewards.{key}: {e}") from None',
       'raise ValidationError(f"{e}") from None',
       "the validation message without the key it is about (reason codes read the message)"),
]
