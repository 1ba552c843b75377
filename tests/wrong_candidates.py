"""Deliberately wrong candidates: the reference with exactly one bug each.

Each is a plausible mistake of a real re-implementation. The suite must catch
every one, with the mismatch class named in ``CAUGHT_AS``.
"""

from __future__ import annotations

import json
import math
from unittest import mock

from conformance.kit.candidate import working_folder
from conformance.reference import candidate as reference
from conformance.reference import uv_script
from conformance.reference.cpython_sum import cpython312_sum
from conformance.surfaces.evsys_metric import reference as evsys_metrics
from conformance.surfaces.job_result import reference as job_result
from conformance.surfaces.metric_compute import reference as metrics
from conformance.surfaces.multi_step_reward import reference as multi_step
from conformance.surfaces.outcome_summary import reference as outcome_summary
from conformance.surfaces.pass_at_k import reference as pass_at_k
from conformance.surfaces.reason_normalize import reference as reason_codes
from conformance.surfaces.reward_parse import reference as reward_files


def _metric_with(aggregates: dict):
    def compute(request: dict) -> dict:
        config = request["metric"]
        kind = config.get("type", "mean")
        if kind in aggregates and config.get("kwargs", {}) == {}:
            return metrics.aggregate_reward_dicts(request["rewards"], kind, aggregates[kind])
        return reference.handlers["metric.compute"](request)  # a uv-script metric runs in its scripts' folder

    return compute


# 1. The mean through math.fsum (correctly rounded, but not what CPython's sum does).
mean_fsum = reference.derive("wrong-mean-fsum", **{
    "metric.compute": _metric_with({"mean": lambda values: math.fsum(values) / len(values)}),
})


def _naive_sum(values):
    total = 0
    for value in values:
        total += value
    return total


# 2. Left-to-right addition, as the prose spec describes sum(); Python 3.12 compensates.
sum_naive = reference.derive("wrong-sum-naive", **{
    "metric.compute": _metric_with({"sum": _naive_sum, "mean": lambda v: _naive_sum(v) / len(v)}),
})


def _txt_first(verifier_dir: dict):
    if verifier_dir.get("reward_txt") is not None:
        return reward_files.validate_rewards(reward_files.parse_reward_text(verifier_dir["reward_txt"]))
    return reward_files.parse(verifier_dir)


# 3. reward.txt read before reward.json.
txt_before_json = reference.derive("wrong-txt-before-json", **{"reward.parse": _txt_first})


def _strip_empty(verifier_dir: dict):
    for name in ("reward_json", "reward_txt"):
        data = verifier_dir.get(name)
        if data is not None and not data.strip():
            raise reward_files.RewardFileEmptyError(f"Reward file is empty at {name}")
        if data is not None:
            break
    return reward_files.parse(verifier_dir)


# 4. Emptiness decided by strip() instead of a zero byte size.
empty_by_strip = reference.derive("wrong-empty-by-strip", **{"reward.parse": _strip_empty})


def caught_by_strip(corpus) -> list[str]:
    """The reward.parse cases ``empty_by_strip`` fails: the first reward file is whitespace to bytes.strip(),
    not empty."""
    firsts = {loaded.id: next((loaded.case.input[k] for k in ("reward_json", "reward_txt")
                               if loaded.case.input.get(k) is not None), None)
              for loaded in corpus if loaded.case.surface == "reward.parse"}
    return sorted(i for i, data in firsts.items() if data and not data.strip())


def _with_pass_at_1(request: dict):
    result = pass_at_k.compute(request)
    groups: dict[str, list] = {}
    for trial in request["trials"]:
        key = pass_at_k.evals_key(trial["agent"], trial.get("model"), trial.get("source") or "adhoc")
        groups.setdefault(key, []).append(trial)
    out = {}
    for key, values in result.items():
        tasks: dict[str, list[int]] = {}
        for trial in groups[key]:
            rewards = trial["rewards"]
            tasks.setdefault(trial["task_name"], []).append(0 if rewards is None else int(next(iter(rewards.values()))))
        k1 = cpython312_sum(pass_at_k.pass_at_k_for_task(len(s), sum(s), 1) for s in tasks.values()) / len(tasks)
        out[key] = {1: k1, **values}
    return out


# 5. pass@1 included in the k values.
pass_at_1 = reference.derive("wrong-pass-at-1", pass_at_k=_with_pass_at_1)


def _unsigned_zero(value):
    if isinstance(value, float) and value == 0.0:
        return 0.0
    if isinstance(value, dict):
        return {k: _unsigned_zero(v) for k, v in value.items()}
    return value


# 6. -0.0 turned into 0.0 (a JSON library or a `value or 0.0` that loses the sign).
negative_zero_lost = reference.derive("wrong-negative-zero", **{
    "reward.parse": lambda d: _unsigned_zero(reward_files.parse(d)),
})


def _verbatim_json(verifier_dir: dict):
    data = verifier_dir.get("reward_json")
    if data is not None:
        parsed = reward_files.parse_reward_json(data)
        if parsed is not None and not isinstance(parsed, dict):
            raise reward_files.ValidationError("rewards should be a dict")
        return parsed
    return reward_files.parse(verifier_dir)


# 7. reward.json values returned as json.loads made them, without the model's coercion.
json_verbatim = reference.derive("wrong-json-verbatim", **{"reward.parse": _verbatim_json})

class _CompactJsonl(uv_script.UvScriptMetric):
    @staticmethod
    def jsonl_line(reward):
        # The rewards file written the way most JSON libraries write by default: no spaces.
        return "null\n" if reward is None else json.dumps(reward, separators=(",", ":")) + "\n"


def _compact_jsonl(request: dict):
    with working_folder(request.get("scripts")):
        config = request["metric"]
        if isinstance(config, dict) and config.get("type") == "uv-script":
            return _CompactJsonl(**config.get("kwargs", {})).compute(request["rewards"])
        return metrics.compute(request)


# 8. A uv-script metric's rewards file written without the spaces json.dumps puts after , and :.
uv_jsonl_compact = reference.derive("wrong-uv-jsonl-compact", **{"metric.compute": _compact_jsonl})

def _final_last_good(request: dict):
    result = multi_step.compute(request)
    if request.get("strategy") == "final":
        # The last step that produced a result, instead of the last step that ran.
        good = [s["verifier_result"] for s in result["steps"] if s["verifier_result"] is not None]
        result["verifier_result"] = good[-1] if good else None
    return result


# 9. A multi-step trial's "final" reward taken from the last step with a result.
final_last_good = reference.derive("wrong-final-last-good", **{"multi_step.reward": _final_last_good})

_run_trial = job_result.run_trial


def _agent_timeout_ends_trial(outcome: dict):
    if outcome.get("raises") == "timeout" and outcome.get("raises_in") == "agent":
        return None, "AgentTimeoutError"  # as if the timeout ended the trial, like the stages before it
    return _run_trial(outcome)


def _job_with(**replaced):
    def compute(request: dict) -> dict:
        with working_folder(request.get("scripts")), mock.patch.multiple(job_result, **replaced):
            return job_result.compute(request)

    return compute


# 10. An agent timeout ending the trial: harbor records it and still runs the verifier.
agent_timeout_unverified = reference.derive("wrong-agent-timeout-unverified", **{
    "job.result": _job_with(run_trial=_agent_timeout_ends_trial),
})


# 11. The "obvious" metric lookup: a dataset named my__ds keeps its own metrics in result.json.
final_metrics_by_source = reference.derive("wrong-final-metrics-by-source", **{
    "job.result": _job_with(final_metrics_name=lambda evals_key, dataset: dataset),
})



def _reward_errors_in_own_words(verifier_dir: dict):
    try:
        return reward_files.parse(verifier_dir)
    except reward_files.RewardFileEmptyError:
        raise reward_files.RewardFileEmptyError("reward file has no content") from None


# 12. The right exception, in the runner's own words: agent-challenge no longer reads harbor_reward_empty.
reward_message_wording = reference.derive("wrong-reward-message-wording", **{
    "reward.parse": _reward_errors_in_own_words,
})


def _summary_with(**replaced):
    def compute(request: dict) -> dict:
        with mock.patch.multiple(outcome_summary, create=True, **replaced):
            return reference.handlers["outcome.summary"](request)

    return compute


# 13. resolved rounded half up, as most languages round; Python's round() goes half to even.
resolved_half_up = reference.derive("wrong-resolved-half-up", **{
    "outcome.summary": _summary_with(round=lambda x: math.floor(x + 0.5)),
})

_keywords = reason_codes._from_words


def _seed_literal_keywords(lowered: str):
    code = _keywords(lowered)
    if code in (None, "harbor_submission_code_failed") and "reward" in lowered:
        return "harbor_reward_parse_error"  # ("parse" in lowered or "malformed") is always true
    return code


# 14. The parse rule as the seed's prose writes it, taken literally: any "reward" text is a parse error.
reason_seed_parse_rule = reference.derive("wrong-reason-seed-parse-rule", **{
    "reason.normalize": lambda request: _patched(reason_codes, request, _from_words=_seed_literal_keywords),
})


def _patched(module, request: dict, **replaced):
    with mock.patch.multiple(module, **replaced):
        return module.compute(request)


def _macro_pass_rate(task_rewards: list) -> float:
    tasks = [rs for rs in task_rewards if rs]
    per_task = [sum(1 for r in rs if evsys_metrics.passes(r)) / len(rs) for rs in tasks]
    return sum(per_task) / len(per_task) if per_task else 0.0


# 15. pass_rate averaged per task (macro), like mean_reward; evsys-sdk pools the samples (micro).
pass_rate_macro = reference.derive("wrong-pass-rate-macro", **{
    "evsys.metric": lambda request: (_macro_pass_rate(request["task_rewards"]) if request["metric"] == "pass_rate"
                                     else evsys_metrics.compute(request)),
})

# Each wrong candidate, the surface its bug lives in, and the mismatch class it must be caught with.
CAUGHT_AS = {
    "mean_fsum": ("metric.compute", "ulp"),
    "sum_naive": ("metric.compute", "ulp"),
    "txt_before_json": ("reward.parse", "missing-key"),
    "empty_by_strip": ("reward.parse", "error-type"),
    "pass_at_1": ("pass_at_k", "extra-key"),
    "negative_zero_lost": ("reward.parse", "sign-of-zero"),
    "json_verbatim": ("reward.parse", "type"),
    "uv_jsonl_compact": ("metric.compute", "value"),
    "final_last_good": ("multi_step.reward", "type"),
    "agent_timeout_unverified": ("job.result", "type"),
    "final_metrics_by_source": ("job.result", "length"),
    "reward_message_wording": ("reward.parse", "reason-code"),
    "resolved_half_up": ("outcome.summary", "value"),
    "reason_seed_parse_rule": ("reason.normalize", "value"),
    "pass_rate_macro": ("evsys.metric", "float-far"),  # another formula: never a last bit off
}


