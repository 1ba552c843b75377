"""reward.parse: reading reward.txt and reward.json, and pydantic's ``float | int`` coercion."""

from conformance.mutation.mutants import Mutant

# The surface's own reference by its short name; the others are the reference candidate's shared modules.
_MODULES = {"reward_files": f"{__package__}.reference"}
SURFACE = "reward.parse"


def _m(slug: str, module: str, find: str, replace: str, bug: str, equivalent: str | None = None) -> Mutant:
    return Mutant(slug, SURFACE, _MODULES.get(module, f"conformance.reference.{module}"), find, replace, bug,
                  equivalent)


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
    _m("txt-as-json-number", "reward_files", 'return {"reward": float(float_ascii(_text(data)))}',
       'return {"reward": json.loads(_text(data))}',
       "reward.txt read with the JSON number grammar instead of float()"),
    _m("txt-stripped-first", "reward_files", 'return {"reward": float(float_ascii(_text(data)))}',
       'return {"reward": float(float_ascii(_text(data).strip()))}',
       "reward.txt stripped with str.strip() before float(): it also removes U+001C..U+001F, which float() "
       "refuses"),
    # Python 3.11's float() (Unicode 14.0) as another runtime's tables, whatever Python serves the mutant.
    _m("txt-unicode-14-tables", "reward_files", 'return {"reward": float(float_ascii(_text(data)))}',
       'return {"reward": float(float_ascii("".join("?" if 0x11F50 <= ord(c) <= 0x11F59 or 0x1E4F0 <= ord(c) '
       '<= 0x1E4F9 else c for c in _text(data))))}',
       "reward.txt's digits read by another Unicode version's tables (14.0, Python 3.11's): the Kawi and Nag "
       "Mundari digits the oracle's Python 3.12 reads are refused"),
    _m("txt-ascii-digits-only", "unicode_tables",
       '" " if c in FLOAT_WHITESPACE else FLOAT_DIGITS.get(c, "?")', '" " if c in FLOAT_WHITESPACE else "?"',
       "float() given ASCII digits only (Python's reads every Unicode decimal digit)"),
    _m("txt-ascii-whitespace-only", "unicode_tables",
       '" " if c in FLOAT_WHITESPACE else FLOAT_DIGITS.get(c, "?")', 'FLOAT_DIGITS.get(c, "?")',
       "float() strips ASCII whitespace only (Python's strips Unicode White_Space too)"),
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
       'if rewards is None:\n        raise validation_error(MODEL, [ErrorDetail(("rewards",), "dict_type", rewards)])',
       "a reward.json of null refused (harbor's model allows None)"),
    _m("first-bad-value-only", "reward_files", "        errors.extend(found)", "        errors = errors or found",
       "only the first bad value reported, where pydantic lists every one in its message"),
    _m("one-error-per-value", "reward_files", "        errors.extend(found)", "        errors.extend(found[:1])",
       "one error per bad value, where pydantic lists one per member of the float | int union",
       equivalent="the message is only read for its reason code, and the int member's line adds nothing the "
                  "rules look for: the same key and value are quoted in the float member's line, which already "
                  "says 'parse' whenever the int line does"),
    _m("bool-as-int", "pydantic_float", "if isinstance(value, bool):\n        return float(value), []",
       "if isinstance(value, bool):\n        return int(value), []",
       "true and false coerced to 1 and 0 (pydantic's float | int makes them 1.0 and 0.0)"),
    _m("bool-refused", "pydantic_float", "if isinstance(value, bool):\n        return float(value), []",
       'if isinstance(value, bool):\n        return None, [ErrorDetail((*loc, "float"), "float_type", value)]',
       "true and false refused as rewards"),
    _m("ints-to-floats", "pydantic_float", "if isinstance(value, (int, float)):\n        return value, []",
       "if isinstance(value, (int, float)):\n        return float(value), []",
       "integer rewards converted to float (pydantic keeps an int an int)"),
    _m("strings-refused", "pydantic_float", "if isinstance(value, str):", "if isinstance(value, bytes):",
       "numeric strings refused (pydantic's lax mode parses them)"),
    _m("strings-by-python-float", "pydantic_float",
       "    if not _RUST_FLOAT.fullmatch(text):\n        return None\n",
       "    try:\n        return float(text)\n    except ValueError:\n        return None\n",
       "numeric strings parsed with Python's float() instead of pydantic-core's Rust grammar"),
    _m("strings-python-strip", "pydantic_float", "value = _rust_f64(text.strip(PYDANTIC_WHITESPACE))",
       "value = _rust_f64(text.strip())",
       "numeric strings trimmed with Python's whitespace set (it adds U+001C..U+001F) instead of Rust's"),
    _m("strings-ascii-strip", "pydantic_float", "value = _rust_f64(text.strip(PYDANTIC_WHITESPACE))",
       'value = _rust_f64(text.strip(" \\t\\n\\r"))', "numeric strings trimmed of ASCII whitespace only"),
    _m("strings-no-underscores", "pydantic_float",
       "        value = None if stripped is None else _rust_f64(stripped)", "        value = None",
       "underscores between digits refused in numeric strings"),
    _m("strings-underscores-anywhere", "pydantic_float",
       'if "_" not in text or text.startswith("_") or text.endswith("_") or "__" in text:',
       'if "_" not in text:',
       "underscores accepted anywhere in numeric strings, leading, trailing or doubled too"),
    _m("underscores-after-trimming", "pydantic_float",
       "stripped = _underscores_out(text)  #", "stripped = _underscores_out(text.strip(PYDANTIC_WHITESPACE))  #",
       "underscores taken out of the trimmed string, so \" 1_0\" is the float 10.0 (pydantic's float fails it, "
       "and its int parse makes it 10)"),
    _m("int-tried-first", "pydantic_float",
       "        as_float = str_as_float(value)\n        if as_float is not None:\n            return as_float, []\n"
       "        as_int = str_as_int(value)\n        if not isinstance(as_int, str):\n            return as_int, []\n",
       "        as_int = str_as_int(value)\n        if not isinstance(as_int, str):\n            return as_int, []\n"
       "        as_float = str_as_float(value)\n        if as_float is not None:\n            return as_float, []\n",
       "a numeric string tried as an int before a float, so \"1\" is 1 where pydantic gives 1.0"),
    _m("no-int-fallback", "pydantic_float", "        as_int = str_as_int(value)\n",
       '        as_int = "int_parsing"\n',
       "a string no float grammar reads never tried as an int (pydantic's int parse reads \" 1_0 \", \"0_1\")"),
    _m("leading-underscores-not-dropped", "pydantic_float", 'if char in "0_":', 'if char == "0":',
       "underscores among a numeric string's leading zeros not dropped by the int parse"),
    _m("surrogates-parsed", "pydantic_float", "if _SURROGATE.search(value):", "if _SURROGATE.fullmatch(value):",
       "a string holding a lone surrogate among other characters parsed like any other",
       equivalent="no number holds a surrogate, so the string fails both grammars; either way the result is a "
                  "ValidationError whose message says 'parse' under the 'rewards' location, the same reason code"),
    _m("message-values-uncut", "pydantic_float", "    if len(data) <= 50:\n        return text\n",
       "    return text\n",
       "the bad value quoted whole in the validation message, where pydantic keeps its first 25 and last 24 bytes"),
    _m("message-cut-by-characters", "pydantic_float", "    if len(data) <= 50:\n",
       "    if len(text) <= 50:\n",
       "a quoted value cut when longer than 50 characters, not 50 UTF-8 bytes"),
]
