"""metric.compute: CPython 3.12's sum, min and max, the mean, key grouping, metric configs, uv-script metrics."""

from conformance.mutation.mutants import Mutant

# The surface's own reference by its short name; the others are the reference candidate's shared modules.
_MODULES = {"metrics": f"{__package__}.reference"}
SURFACE = "metric.compute"


def _m(slug: str, module: str, find: str, replace: str, bug: str, equivalent: str | None = None) -> Mutant:
    return Mutant(slug, SURFACE, _MODULES.get(module, f"conformance.reference.{module}"), find, replace, bug,
                  equivalent)


_MEAN = "    return cpython312_sum(values) / len(values)"
_FINAL_COMPENSATION = ("            # The compensation is skipped when zero (keeps -0.0) or not finite.\n"
                       "            if lo and math.isfinite(lo):")
_SINGLE_KEY = "        values = [0 if r is None else next(iter(r.values()), 0) for r in rewards]"
_MULTI_KEY = "    return {key: aggregate([0 if r is None else r.get(key, 0) for r in rewards]) for key in keys}"
_KEYS = "    keys = sorted({key for reward in rewards if reward is not None for key in reward})"
_KIND = '    kind = config.get("type", "mean")'
_LINE = '        return "null\\n" if reward is None else json.dumps(reward) + "\\n"'

MUTANTS = [
    # Summation: CPython 3.12's sum() (cpython_sum.py) and the mean built on it.
    _m("sum-left-to-right", "cpython_sum",
       _FINAL_COMPENSATION + "\n                hi += lo\n            return hi", "            return hi",
       "floats added left to right, as Python 3.11's sum() or a plain loop does: 3.12 adds a Neumaier "
       "compensation"),
    _m("compensation-not-finite", "cpython_sum", _FINAL_COMPENSATION,
       _FINAL_COMPENSATION.replace("if lo and math.isfinite(lo):", "if lo:"),
       "textbook Neumaier: the compensation added even when it is inf or NaN, so a sum that overflows to inf "
       "becomes NaN"),
    _m("compensation-added-when-zero", "cpython_sum", _FINAL_COMPENSATION,
       _FINAL_COMPENSATION.replace("if lo and math.isfinite(lo):", "if math.isfinite(lo):"),
       "a zero compensation added to the total too (CPython skips it to keep a -0.0)",
       equivalent="the float total is never -0.0: it starts as the int total plus a float (int 0 + -0.0 is "
                  "+0.0), and a float sum is -0.0 only when both terms are -0.0; adding a zero to any other "
                  "float leaves it unchanged"),
    _m("ints-compensated", "cpython_sum", "            if type(item) is float:\n                t = hi + item",
       "            if type(item) in (float, int):\n                t = hi + item",
       "ints met after the first float go through the compensated sum as well (CPython adds a C-long int to "
       "the float total plainly)"),
    _m("long-overflow-unchecked", "cpython_sum",
       "if type(item) in (int, bool) and _fits_long(item) and _fits_long(total + item):",
       "if type(item) in (int, bool) and _fits_long(item):",
       "the int total not checked for C-long overflow: a total past 2**63 still moves to the compensated float "
       "sum when a float arrives (CPython falls back to plain addition)"),
    _m("int64-wraparound", "cpython_sum",
       "if type(item) in (int, bool) and _fits_long(item) and _fits_long(total + item):\n"
       "            total += int(item)",
       "if type(item) in (int, bool) and _fits_long(item):\n"
       "            total = (total + int(item) + 2**63) % 2**64 - 2**63",
       "int rewards summed in a 64-bit integer that wraps on overflow (Go's int64, Rust's i64 in release)"),
    _m("sum-fsum", "metrics", '    "sum": cpython312_sum,', '    "sum": __import__("math").fsum,',
       "the sum through math.fsum: correctly rounded, and always a float"),
    _m("mean-fsum", "metrics", _MEAN, '    return __import__("math").fsum(values) / len(values)',
       "the mean's sum through math.fsum (correctly rounded, not what CPython's sum() gives)"),
    _m("mean-float-of-sum", "metrics", _MEAN, "    return float(cpython312_sum(values)) / len(values)",
       "the sum made a float before the division (float64 arithmetic): an exact int sum is rounded twice"),
    _m("mean-int-division", "metrics", _MEAN,
       "    total = cpython312_sum(values)\n"
       "    if isinstance(total, int):\n"
       "        return (abs(total) // len(values)) * (1 if total >= 0 else -1)\n"
       "    return total / len(values)",
       "the mean of int rewards by integer division (int / int truncates in C, Go, Rust)"),
    _m("mean-running", "metrics", _MEAN,
       "    if not values:\n"
       '        raise ZeroDivisionError("division by zero")\n'
       "    mean = 0.0\n"
       "    for i, value in enumerate(values, 1):\n"
       "        mean += (value - mean) / i\n"
       "    return mean",
       "the mean as a running average, mean += (x - mean) / i: other rounding, and inf turns into NaN"),
    _m("mean-empty-zero", "metrics", _MEAN, _MEAN + " if values else 0.0",
       "the mean of no trials is 0.0 (harbor divides by zero: ZeroDivisionError)"),
    _m("min-empty-inf", "metrics", '    "min": min,', '    "min": lambda values: min(values, default=float("inf")),',
       "the min of no trials is +inf, a fold's start value (Python's min() raises ValueError)"),
    _m("max-nan-propagates", "metrics", '    "max": max,',
       '    "max": lambda values: float("nan") if any(v != v for v in values) else max(values),',
       "max() returns NaN wherever a NaN is (JavaScript's Math.max, Go's math.Max); Python's keeps a NaN only "
       "when it comes first"),
    _m("min-nan-ignored", "metrics", '    "min": min,',
       '    "min": lambda values: min([v for v in values if v == v] or values),',
       "min() skips NaN (Rust's f64::min, numpy's nanmin); Python's returns a NaN that comes first"),
    _m("max-last-of-ties", "metrics", '    "max": max,',
       '    "max": lambda values: __import__("functools").reduce(lambda best, v: v if v >= best else best, values)'
       " if values else max(values),",
       "max keeps the last of equal values (`if v >= best`): of 1 and 1.0, or 0.0 and -0.0, the other one"),
    _m("min-first-of-sorted", "metrics", '    "min": min,',
       '    "min": lambda values: sorted(values)[0] if values else min(values),',
       "min as the first of the sorted values: with a NaN among them the sort order is not Python's min()"),
    _m("ints-as-floats", "metrics", "    return lambda rewards: aggregate_reward_dicts(rewards, kind, aggregate)",
       "    return lambda rewards: aggregate_reward_dicts(\n"
       "        [r if r is None else {k: float(v) for k, v in r.items()} for r in rewards], kind, aggregate)",
       "every reward read as a double (JavaScript numbers, a float64 column): sums and extremes of ints come "
       "out as floats, ints past 2**53 are rounded first"),
    # Key grouping.
    _m("null-trials-skipped", "metrics", _SINGLE_KEY,
       "        values = [next(iter(r.values()), 0) for r in rewards if r is not None]",
       "a null trial (no verifier result) left out of the aggregate instead of counting 0"),
    _m("empty-dicts-skipped", "metrics", _SINGLE_KEY,
       "        values = [0 if r is None else next(iter(r.values())) for r in rewards if r != {}]",
       "a trial with an empty reward dict left out of the aggregate instead of counting 0"),
    _m("null-as-float-zero", "metrics", _SINGLE_KEY, _SINGLE_KEY.replace("0", "0.0"),
       "a null trial or an empty dict counts as 0.0, not the int 0: an int sum or max becomes a float"),
    _m("missing-key-skipped", "metrics", _MULTI_KEY,
       "    return {key: aggregate([r[key] for r in rewards if r is not None and key in r]) for key in keys}",
       "with several keys, a trial lacking a key (or null) is left out of that key's aggregate instead of "
       "counting 0, as pandas skips missing values"),
    _m("missing-key-float-zero", "metrics", _MULTI_KEY, _MULTI_KEY.replace("r.get(key, 0)", "r.get(key, 0.0)"),
       "with several keys, a missing key counts as 0.0 instead of the int 0"),
    _m("keys-first-seen", "metrics", _KEYS,
       "    keys = list(dict.fromkeys(key for reward in rewards if reward is not None for key in reward))",
       "several keys come out in first-seen order instead of sorted"),
    _m("keys-caseless-order", "metrics", _KEYS, _KEYS.replace("})", "}, key=str.lower)"),
       "several keys sorted case-insensitively, as a locale collation does, instead of by code point"),
    _m("single-key-keeps-name", "metrics", "        return {name: aggregate(values)}",
       "        return {(keys or [name])[0]: aggregate(values)}",
       "with one reward key the output is keyed by that key instead of the metric's name"),
    # The metric config.
    _m("kwargs-ignored", "metrics",
       "    if kwargs:\n        # The built-in metrics take no constructor arguments.\n"
       '        raise TypeError(f"{kind} metric takes no arguments, got {sorted(kwargs)}")\n', "",
       "kwargs given to a built-in metric ignored (harbor's constructor raises TypeError)"),
    _m("type-null-default", "metrics", _KIND, '    kind = config.get("type") or "mean"',
       "a null type read as the default mean (an `or` default) instead of failing validation"),
    _m("type-caseless", "metrics", _KIND, _KIND + "\n    kind = kind.lower() if isinstance(kind, str) else kind",
       "metric type names matched case-insensitively ('MEAN' is no type for harbor)"),
    _m("kwargs-null-default", "metrics", '    kwargs = config.get("kwargs", {})',
       '    kwargs = config.get("kwargs") or {}', "null kwargs read as no kwargs instead of failing validation"),
    # uv-script: the rewards file harbor writes, and what it makes of the script's run.
    _m("uv-jsonl-compact", "uv_script", _LINE, _LINE.replace("json.dumps(reward)",
                                                             'json.dumps(reward, separators=(",", ":"))'),
       "the rewards file written without the spaces json.dumps puts after , and : (most JSON libraries' default)"),
    _m("uv-jsonl-raw-unicode", "uv_script", _LINE, _LINE.replace("json.dumps(reward)",
                                                                 "json.dumps(reward, ensure_ascii=False)"),
       "non-ASCII reward keys written as UTF-8 instead of \\u escapes"),
    _m("uv-jsonl-nan-as-null", "uv_script", _LINE, _LINE.replace(
        "json.dumps(reward)", 'json.dumps({k: v if v == v and v not in (float("inf"), float("-inf")) else None '
                              "for k, v in reward.items()})"),
       "NaN and the infinities written as null (JavaScript's JSON.stringify) instead of NaN / Infinity"),
    _m("uv-jsonl-null-as-empty", "uv_script", _LINE, _LINE.replace('"null\\n"', '"{}\\n"'),
       "a trial without rewards written as {} instead of null"),
    _m("uv-jsonl-no-final-newline", "uv_script",
       '"".join(map(self.jsonl_line, rewards))', '"\\n".join(line[:-1] for line in map(self.jsonl_line, rewards))',
       "the rewards file's lines joined by newlines, without one after the last"),
    _m("uv-script-existence-unchecked", "uv_script",
       "        if not in_folder(self.script_path).exists():  # relative to the request's folder, as to a job's\n"
       '            raise FileNotFoundError(f"Script file not found: {self.script_path}")\n', "",
       "the script's existence not checked when the metric is made: uv's failure (RuntimeError) instead of "
       "FileNotFoundError"),
    _m("uv-exit-status-ignored", "uv_script",
       "            if result.returncode != 0:\n"
       '                raise RuntimeError(f"Failed to compute custom metric: {result.stderr}")\n', "",
       "a script's non-zero exit not checked: its output file is read regardless"),
    _m("uv-output-must-be-object", "uv_script",
       '            return json.loads(output_path.read_text(encoding="utf-8"))',
       '            output = json.loads(output_path.read_text(encoding="utf-8"))\n'
       "            if not isinstance(output, dict):\n"
       '                raise TypeError("a metric script must write a JSON object")\n'
       "            return output",
       "the script's output required to be a JSON object (harbor returns whatever JSON it reads)"),
]
