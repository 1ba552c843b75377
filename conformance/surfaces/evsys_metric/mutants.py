"""evsys.metric: evsys-sdk's metrics: the pass rule, empty tasks, the sums and means, the first-k window, names."""

from conformance.mutation.mutants import Mutant

# The surface's own reference by its short name; the others are the reference candidate's shared modules.
_MODULES = {"evsys_metrics": f"{__package__}.reference"}
SURFACE = "evsys.metric"


def _m(slug: str, module: str, find: str, replace: str, bug: str, equivalent: str | None = None) -> Mutant:
    return Mutant(slug, SURFACE, _MODULES.get(module, f"conformance.reference.{module}"), find, replace, bug,
                  equivalent)


_PASSES = "    return reward >= PASS_THRESHOLD"
_MEAN = "    return cpython312_sum(cpython312_sum(rs) / len(rs) for rs in tasks) / len(tasks)"
_MEAN_TASKS = "    tasks = [rs for rs in task_rewards if rs]  # empty tasks are skipped, not counted as 0"
_PASS_RATE = ("    passed = sum(1 for rs in task_rewards for r in rs if passes(r))\n"
              "    total = sum(len(rs) for rs in task_rewards)\n"
              "    return passed / total if total else 0.0")
_SHARE = ("    tasks = [rs for rs in task_rewards if rs]\n    if not tasks:\n        return 0.0\n"
          "    return sum(1 for rs in tasks if solved(rs[:k])) / len(tasks)")
_FAMILY = "    family = _family(name) if isinstance(name, str) else None"
_DIGITS = "    digits = name[5:]"
_ASCII = 'ch not in "0123456789" for ch in digits'

MUTANTS = [
    # The pass rule.
    _m("threshold-strict", "evsys_metrics", _PASSES, "    return reward > PASS_THRESHOLD",
       "a sample passes above 1.0, not at 1.0 (> where evsys-sdk has >=)"),
    _m("pass-only-exactly-one", "evsys_metrics", _PASSES, "    return reward == PASS_THRESHOLD",
       "a sample passes only at exactly 1.0 (binary rewards assumed): 1.5 and inf fail"),
    _m("nan-passes", "evsys_metrics", _PASSES, "    return not reward < PASS_THRESHOLD",
       "the pass test written as not (reward < 1.0): a NaN sample passes"),
    # Empty tasks and no tasks.
    _m("mean-empty-task-zero", "evsys_metrics",
       _MEAN_TASKS + "\n    if not tasks:\n        return 0.0\n" + _MEAN,
       "    tasks = task_rewards\n    if not tasks:\n        return 0.0\n"
       "    return cpython312_sum(cpython312_sum(rs) / len(rs) if rs else 0.0 for rs in tasks) / len(tasks)",
       "mean_reward counts an empty task as a task mean of 0 instead of skipping it"),
    _m("mean-nothing-nan", "evsys_metrics", _MEAN_TASKS + "\n    if not tasks:\n        return 0.0",
       _MEAN_TASKS + '\n    if not tasks:\n        return float("nan")',
       "mean_reward over no samples is NaN (a 0/0 mean, numpy's mean of nothing) instead of 0.0"),
    _m("pass-rate-nothing-divides", "evsys_metrics", "    return passed / total if total else 0.0",
       "    return passed / total", "pass_rate over no samples divides by zero instead of giving 0.0"),
    _m("share-counts-empty-tasks", "evsys_metrics", _SHARE, _SHARE.replace("if rs]", "]"),
       "pass@k and pass^k do not skip empty tasks: they count in the denominator, and pass^k counts them "
       "solved (all of nothing passes)"),
    # The means and rates.
    _m("mean-micro", "evsys_metrics", _MEAN,
       "    return cpython312_sum(r for rs in tasks for r in rs) / sum(len(rs) for rs in tasks)",
       "mean_reward pooled over all samples (micro) instead of the mean of the task means (macro)"),
    _m("pass-rate-macro", "evsys_metrics", _PASS_RATE,
       "    tasks = [rs for rs in task_rewards if rs]\n"
       "    rates = [sum(1 for r in rs if passes(r)) / len(rs) for rs in tasks]\n"
       "    return cpython312_sum(rates) / len(rates) if rates else 0.0",
       "pass_rate averaged per task (macro), like mean_reward; evsys-sdk pools the samples (micro)"),
    _m("pass-rate-int-division", "evsys_metrics", "    return passed / total if total else 0.0",
       "    return passed // total if total else 0.0",
       "pass_rate by integer division (passed / total with ints in C, Go or Rust)"),
    _m("sum-left-to-right", "cpython_sum",
       "            # The compensation is skipped when zero (keeps -0.0) or not finite.\n"
       "            if lo and math.isfinite(lo):\n                hi += lo\n            return hi",
       "            return hi",
       "floats added left to right, as Python 3.11's sum() or a plain loop does: evsys-sdk's Python 3.12 "
       "compensates"),
    _m("mean-fsum", "evsys_metrics", _MEAN,
       '    fsum = __import__("math").fsum\n    return fsum(fsum(rs) / len(rs) for rs in tasks) / len(tasks)',
       "mean_reward's sums through math.fsum (correctly rounded, not CPython's sum())"),
    _m("mean-samples-as-floats", "evsys_metrics", _MEAN, _MEAN.replace("cpython312_sum(rs)",
                                                                      "cpython312_sum(map(float, rs))"),
       "every sample made a float before it is summed (float64 arithmetic): ints past 2**53 are rounded, "
       "the exact int sum lost"),
    _m("mean-float-of-int-sum", "evsys_metrics", _MEAN, _MEAN.replace("cpython312_sum(rs) / len(rs)",
                                                                     "float(cpython312_sum(rs)) / len(rs)"),
       "a task's sum made a float before the division: an exact int sum rounded twice"),
    # The first-k window of pass@k and pass^k.
    _m("window-every-sample", "evsys_metrics", "solved(rs[:k])", "solved(rs)",
       "pass@k and pass^k look at all of a task's samples, not its first k"),
    _m("window-last-k", "evsys_metrics", "solved(rs[:k])", "solved(rs[-k:])",
       "pass@k and pass^k look at a task's last k samples instead of its first k"),
    _m("window-inclusive", "evsys_metrics", "solved(rs[:k])", "solved(rs[: k + 1])",
       "the window of the first k samples taken inclusively, k + 1 samples (0..=k)"),
    _m("pass-all-needs-k", "evsys_metrics", "lambda rs: all(passes(r) for r in rs))",
       "lambda rs: len(rs) >= k and all(passes(r) for r in rs))",
       "pass^k fails a task with fewer than k samples (it asks for k passes)"),
    _m("pass-at-unbiased", "evsys_metrics",
       "    return lambda task_rewards: _solved_share(task_rewards, k, lambda rs: any(passes(r) for r in rs))",
       '    comb = __import__("math").comb\n\n'
       "    def estimate(rs: list[float]) -> float:\n"
       "        n, c = len(rs), sum(1 for r in rs if passes(r))\n"
       "        return 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)\n\n"
       "    def compute(task_rewards: list[list[float]]) -> float:\n"
       "        tasks = [rs for rs in task_rewards if rs]\n"
       "        return cpython312_sum(map(estimate, tasks)) / len(tasks) if tasks else 0.0\n\n"
       "    return compute",
       "pass@k as the unbiased estimator over all n samples (harbor's, the Codex paper's) instead of "
       "evsys-sdk's first-k rule"),
    # Names.
    _m("k-zero-allowed", "evsys_metrics", ' or digits[0] == "0" or ', " or ",
       "k of 0 and leading zeros accepted in pass@k / pass^k names (pass@0, pass^01)"),
    _m("k-unicode-digits", "evsys_metrics", _ASCII, "not ch.isdecimal() for ch in digits",
       "\\d in the name pattern: non-ASCII decimal digits read as part of k"),
    _m("name-prefix-match", "evsys_metrics", _DIGITS,
       '    digits = name[5:][:len(name) - 5 - len(name[5:].lstrip("0123456789"))]',
       "a name matched by its prefix (re.match, no end anchor): text after pass@k ignored"),
    _m("name-dollar-anchor", "evsys_metrics", _DIGITS, '    digits = name[5:].removesuffix("\\n")',
       "a name matched with a $ anchor, which also matches before a final newline: 'pass@1\\n' is read as "
       "pass@1"),
    _m("names-caseless", "evsys_metrics", "def get(name: str) -> Metric:\n",
       "def get(name: str) -> Metric:\n    name = name.lower()\n",
       "metric names looked up case-insensitively (Pass@1 read as pass@1)"),
    _m("avg-unregistered", "evsys_metrics", '    "avg": mean_reward,\n', "",
       "avg not registered as another name of mean_reward"),
    _m("only-registered-k", "evsys_metrics", _FAMILY,
       _FAMILY.replace("if isinstance(name, str)", 'if name in ("pass@1", "pass@3", "pass^3")'),
       "only the registered pass@1, pass@3 and pass^3: other k are unknown names"),
    _m("unknown-value-error", "evsys_metrics", "        raise KeyError(", "        raise ValueError(",
       "an unknown metric name raises ValueError instead of KeyError"),
]
