"""multi_step.reward: a multi-step trial's reward from its steps."""

from conformance.mutation.mutants import Mutant

SURFACE = "multi_step.reward"


def _m(slug: str, find: str, replace: str, bug: str, equivalent: str | None = None) -> Mutant:
    return Mutant(slug, SURFACE, f"{__package__}.reference", find, replace, bug, equivalent)


MUTANTS = [
    _m("agent-failure-ends-step", "    if verifier_disabled:\n        return result\n",
       "    if verifier_disabled or agent_raised is not None:\n        return result\n",
       "an agent failure inside a step skips its verifier, as a single-step trial does"),
    _m("agent-timeout-name", '"AgentTimeoutError" if agent_raised == "timeout" else agent_raised',
       '"TimeoutError" if agent_raised == "timeout" else agent_raised',
       "an agent timeout inside a step recorded as the bare TimeoutError"),
    _m("verifier-timeout-name", '_Raised("TimeoutError" if raised == "timeout" else raised)',
       '_Raised("VerifierTimeoutError" if raised == "timeout" else raised)',
       "a step's verifier timeout recorded as VerifierTimeoutError (harbor records the bare TimeoutError)"),
    _m("last-exception-kept", '        if result["exception_type"] is None:\n            result["exception_type"] =',
       '        if True:\n            result["exception_type"] =',
       "a step keeps its verifier's exception over its agent's (harbor keeps the first)"),
    _m("threshold-inclusive", "if actual < float(threshold):", "if actual <= float(threshold):",
       "a reward equal to its step's min_reward stops the steps after it"),
    _m("missing-key-passes", "actual = rewards.get(key, -math.inf) if rewards else -math.inf",
       "actual = rewards.get(key, math.inf) if rewards else math.inf",
       "a key missing from the step's rewards passes its threshold (harbor counts it as -inf)"),
    _m("nan-stops", "if actual < float(threshold):", "if not actual >= float(threshold):",
       "a NaN reward (or threshold) stops the steps after it (a comparison with NaN is false)"),
    _m("threshold-only-reward-key",
       'thresholds = min_reward if isinstance(min_reward, dict) else {"reward": min_reward}',
       'thresholds = {"reward": min_reward.get("reward", -math.inf)} if isinstance(min_reward, dict) '
       'else {"reward": min_reward}',
       "a table of thresholds read for its reward key only"),
    _m("threshold-when-disabled", '    if step.get("min_reward") is None or verifier_disabled:\n',
       '    if step.get("min_reward") is None:\n',
       "thresholds applied with the verifier disabled, where no step has rewards"),
    _m("failure-does-not-stop", '    if result["exception_type"] is not None and result["verifier_result"] is None:\n'
       "        return True\n", "",
       "a step that failed without a verifier result does not stop the steps after it"),
    _m("mean-skips-null-rewards",
       'valid = [s["verifier_result"]["rewards"] or {} for s in steps if s["verifier_result"] is not None]',
       'valid = [s["verifier_result"]["rewards"] for s in steps if s["verifier_result"] is not None '
       'and s["verifier_result"]["rewards"]]',
       "steps whose rewards are null or empty left out of the mean (harbor counts them, as zeros)"),
    _m("mean-over-all-steps", "for key in keys}}", "for key in keys}} if len(valid) == len(steps) else None",
       "no mean when some step that ran has no verifier result (harbor averages those that have one)"),
    _m("missing-key-skipped", "cpython312_sum(r.get(key, 0) for r in valid) / len(valid)",
       "cpython312_sum(r[key] for r in valid if key in r) / sum(1 for r in valid if key in r)",
       "a key averaged over the steps that have it, where harbor counts it 0 in the others"),
    _m("mean-naive-sum", "cpython312_sum(r.get(key, 0) for r in valid) / len(valid)",
       '__import__("functools").reduce(lambda a, b: a + b, (r.get(key, 0) for r in valid)) / len(valid)',
       "the mean summed left to right (Python 3.12's sum compensates)"),
    _m("final-last-with-result", 'steps[-1]["verifier_result"] if strategy == "final"',
       'next((s["verifier_result"] for s in reversed(steps) if s["verifier_result"] is not None), None) '
       'if strategy == "final"',
       "final takes the last step with a verifier result, not the last step that ran"),
    _m("unset-strategy-is-final", 'if strategy == "final" else _mean(steps)',
       'if strategy in ("final", None) else _mean(steps)',
       "an unset strategy taken as final (harbor's default is mean)"),
    _m("empty-mean-is-empty-rewards", "    if not valid or not keys:\n        return None\n",
       "    if not valid:\n        return None\n",
       "steps with results but no keys give empty rewards, where harbor gives no verifier result"),
]
