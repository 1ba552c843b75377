"""pass_at_k: the unbiased estimator per task, which trials count, the k values, and the grouping by evals key."""

from conformance.mutation.mutants import Mutant

# The surface's own reference by its short name; the others are the reference candidate's shared modules.
_MODULES = {"pass_at_k": f"{__package__}.reference"}
SURFACE = "pass_at_k"


def _m(slug: str, module: str, find: str, replace: str, bug: str, equivalent: str | None = None) -> Mutant:
    return Mutant(slug, SURFACE, _MODULES.get(module, f"conformance.reference.{module}"), find, replace, bug,
                  equivalent)


_PRODUCT = ("    product = 1.0\n    for i in range(k):\n        product *= (n - c - i) / (n - i)\n"
            "    return 1.0 - product")
_TASK_MEAN = ("        k: cpython312_sum(pass_at_k_for_task(len(s), sum(s), k) for s in successes.values())\n"
              "        / len(successes)")
_BINARY = "        if not isinstance(value, (int, float)) or value not in (0, 1):\n            return {}\n"
_GROUPS = "    return {key: result for key, trials in groups.items() if (result := _group(trials))}"

MUTANTS = [
    # The estimator for one task.
    _m("binomial-form", "pass_at_k", _PRODUCT,
       '    comb = __import__("math").comb\n    return 1.0 - comb(n - c, k) / comb(n, k)',
       "pass@k as 1 - C(n-c, k) / C(n, k) with exact binomials (the paper's formula): rounded once, where "
       "harbor rounds every factor of a product"),
    _m("numpy-form", "pass_at_k", _PRODUCT,
       "    product = 1.0\n    for j in range(n - c + 1, n + 1):\n        product *= 1.0 - k / j\n"
       "    return 1.0 - product",
       "the Codex paper's numpy form, 1 - prod(1 - k / arange(n - c + 1, n + 1)): the same estimator, other "
       "rounding"),
    _m("product-reversed", "pass_at_k", "    for i in range(k):\n        product *= (n - c - i) / (n - i)",
       "    for i in reversed(range(k)):\n        product *= (n - c - i) / (n - i)",
       "the product's factors multiplied from the last to the first"),
    _m("one-division", "pass_at_k", _PRODUCT,
       "    numerator = denominator = 1.0\n    for i in range(k):\n        numerator *= n - c - i\n"
       "        denominator *= n - i\n    return 1.0 - numerator / denominator",
       "numerator and denominator multiplied out separately and divided once"),
    _m("shortcut-dropped", "pass_at_k", "    if n - c < k:\n        return 1.0\n", "",
       "no shortcut for n - c < k: the product is computed anyway",
       equivalent="when n - c < k the factor at i = n - c is 0 and no denominator n - i is 0 (k never exceeds "
                  "a task's trial count n), so the product is +0.0 or -0.0 and 1.0 minus it is exactly 1.0"),
    _m("shortcut-off-by-one", "pass_at_k", "    if n - c < k:", "    if n - c <= k:",
       "the shortcut to 1.0 taken when n - c <= k: with n - c == k the estimate is below 1"),
    # Which trials count.
    _m("null-trial-skipped", "pass_at_k",
       '            successes.setdefault(trial["task_name"], []).append(0)\n            continue',
       "            continue", "a trial without a verifier result left out of n instead of counting as a failure"),
    _m("empty-dict-failure", "pass_at_k", '        if rewards is None:\n            successes',
       '        if not rewards:\n            successes',
       "a trial with an empty reward dict counted as a failure, like a null one (harbor drops the group)"),
    _m("several-keys-first-value", "pass_at_k",
       "        if len(rewards) != 1:\n            return {}\n        (value,) = rewards.values()",
       "        if not rewards:\n            return {}\n        value = next(iter(rewards.values()))",
       "a trial with several reward keys read by its first value instead of dropping the group"),
    _m("nonbinary-thresholded", "pass_at_k",
       _BINARY + '        successes.setdefault(trial["task_name"], []).append(int(value))',
       "        if not isinstance(value, (int, float)):\n            return {}\n"
       '        successes.setdefault(trial["task_name"], []).append(int(value >= 1))',
       "a non-binary reward counted as a success when >= 1, else a failure, instead of dropping the group"),
    _m("nonbinary-trial-skipped", "pass_at_k", _BINARY, _BINARY.replace("return {}", "continue"),
       "a trial with a non-binary reward skipped instead of dropping the whole group"),
    # The k values.
    _m("k-from-one", "pass_at_k", "    k = 2\n    while k <= max_k:", "    k = 1\n    while k <= max_k:",
       "pass@1 among the k values (powers of two from 2**0)"),
    _m("k-powers-only", "pass_at_k", "    return sorted(powers | fives)", "    return sorted(powers)",
       "only powers of two as k: the multiples of five left out"),
    _m("k-fives-exclusive", "pass_at_k", "range(5, max_k + 1, 5)", "range(5, max_k, 5)",
       "multiples of five below the fewest trials, not up to it (an off-by-one in the range)"),
    _m("k-powers-exclusive", "pass_at_k", "    while k <= max_k:", "    while k < max_k:",
       "powers of two below the fewest trials, not up to it"),
    _m("k-from-most-trials", "pass_at_k", "eligible_k_values(min(len(s) for s in successes.values()))",
       "eligible_k_values(max(len(s) for s in successes.values()))",
       "k values up to the most trials of any task instead of the fewest"),
    _m("k-keys-strings", "pass_at_k", "        k: cpython312_sum(", "        str(k): cpython312_sum(",
       "k values as string keys, as a JSON object's keys are"),
    # The mean over tasks.
    _m("task-mean-left-to-right", "pass_at_k", _TASK_MEAN,
       '        k: __import__("functools").reduce(\n'
       "            float.__add__, [pass_at_k_for_task(len(s), sum(s), k) for s in successes.values()], 0.0)\n"
       "        / len(successes)",
       "the per-task values added left to right (Python 3.11's sum(), a loop) instead of 3.12's compensated sum"),
    _m("task-mean-fsum", "pass_at_k", _TASK_MEAN, _TASK_MEAN.replace("cpython312_sum(", '__import__("math").fsum('),
       "the per-task values added with math.fsum (correctly rounded, not CPython's sum())",
       equivalent="every per-task value is 1.0 or 1.0 minus a product in [0, 1], a multiple of 2**-53 no greater "
                  "than 1; so every Neumaier correction is an exact multiple of 2**-53 and, for fewer than 2**26 "
                  "tasks, so is their running total, which stays below 1: CPython's sum is then the exact sum "
                  "rounded once, as math.fsum's is"),
    _m("pooled-tasks", "pass_at_k", _TASK_MEAN,
       "        k: pass_at_k_for_task(sum(map(len, successes.values())), sum(map(sum, successes.values())), k)",
       "pass@k of all the group's trials pooled (every task's n and c added) instead of the mean over tasks"),
    # Grouping by evals key.
    _m("groups-sorted", "pass_at_k", _GROUPS, _GROUPS.replace("groups.items()", "sorted(groups.items())"),
       "evals keys in sorted order (a sorted map) instead of the order their first trial came"),
    _m("dropped-groups-kept", "pass_at_k", _GROUPS,
       "    return {key: _group(trials) for key, trials in groups.items()}",
       "a group without pass@k (dropped, or too few trials) kept with an empty dict instead of left out"),
    _m("empty-model-kept", "pass_at_k", 'if model else f"{agent}__{dataset}"',
       'if model is not None else f"{agent}__{dataset}"',
       "an empty model name kept in the evals key (a None check where harbor tests truthiness)"),
    _m("empty-source-kept", "pass_at_k", 'trial.get("source") or "adhoc"',
       '"adhoc" if trial.get("source") is None else trial["source"]',
       "an empty source kept instead of 'adhoc' (`??` where harbor has `or`)"),
]
