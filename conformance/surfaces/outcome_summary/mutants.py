"""outcome.summary: agent-challenge's BASE_BENCHMARK_RESULT= line from harbor's result.json."""

from conformance.mutation.mutants import Mutant

SURFACE = "outcome.summary"


def _m(slug: str, find: str, replace: str, bug: str, equivalent: str | None = None) -> Mutant:
    return Mutant(slug, SURFACE, f"{__package__}.reference", find, replace, bug, equivalent)


_BOTH_KINDS = ('            if "mean" in metric:\n                values.append(float(metric["mean"]))\n'
               '            else:\n                values.extend(float(v) for v in metric.values())\n')

MUTANTS = [
    _m("bom-skipped", 'text = data.decode("utf-8")', 'text = data.decode("utf-8-sig")',
       "a result.json that starts with a byte-order mark read (the original fails on it)"),
    _m("strict-json", "data = json.loads(_read_text(data_bytes))",
       "data = json.loads(_read_text(data_bytes), parse_constant=int)",
       "NaN and Infinity refused in result.json (Python's json accepts them)"),
    _m("every-value-averaged", _BOTH_KINDS, "                values.extend(float(v) for v in metric.values())\n",
       "every value of a metric averaged, even when it has a mean"),
    _m("means-only", _BOTH_KINDS,
       '            if "mean" in metric:\n                values.append(float(metric["mean"]))\n',
       "metrics without a mean left out of the score"),
    _m("mean-by-type-check", 'if "mean" in metric:', 'if isinstance(metric, dict) and "mean" in metric:',
       "a metric that is not an object skipped, where the original tests membership on whatever it is",
       equivalent="a metric that is not an object fails either way: membership then indexing raises for a "
                  "string or list holding 'mean', and .values() raises for every other non-object, so both "
                  "end in harbor_result_malformed"),
    _m("naive-sum", "score = cpython312_sum(metric_values) / len(metric_values)",
       'score = __import__("functools").reduce(lambda a, b: a + b, metric_values) / len(metric_values)',
       "the score summed left to right (Python 3.12's sum compensates)"),
    _m("resolved-truncated", '"resolved": round(score * total),', '"resolved": int(score * total),',
       "resolved truncated instead of rounded"),
    _m("resolved-half-up", '"resolved": round(score * total),', '"resolved": int(score * total + 0.5),',
       "resolved rounded half up (Python rounds half to even)"),
    _m("no-total-fallback", '"total": total or completed + errored,', '"total": total,',
       "a zero total kept, not replaced by completed + errored"),
    _m("status-needs-a-completion", '"status": "completed" if errored == 0 else "failed",',
       '"status": "completed" if errored == 0 and completed > 0 else "failed",',
       "completed only when some trial completed"),
    _m("null-total-refused", 'total = int(data.get("n_total_trials") or 0)',
       'total = int(data.get("n_total_trials", 0))', "a null n_total_trials refused instead of read as 0"),
    _m("stats-required", 'stats = data.get("stats", {})', 'stats = data["stats"]',
       "a result without stats refused"),
    _m("unsorted-line", "PREFIX + json.dumps(summary, sort_keys=True)", "PREFIX + json.dumps(summary)",
       "the line's keys in insertion order, not sorted"),
    _m("compact-line", "PREFIX + json.dumps(summary, sort_keys=True)",
       'PREFIX + json.dumps(summary, sort_keys=True, separators=(",", ":"))',
       "the line written without spaces after separators"),
    _m("narrow-catch", "except Exception:  # the original catches everything",
       "except (ValueError, KeyError):  # the original catches everything",
       "only value and key errors taken as a malformed result"),
    _m("score-by-fsum", "score = cpython312_sum(metric_values) / len(metric_values)",
       'score = __import__("math").fsum(metric_values) / len(metric_values)',
       "the score summed with math.fsum (correctly rounded, unlike sum)"),
]
