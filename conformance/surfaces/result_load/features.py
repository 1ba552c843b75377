"""result.load: the kinds of result.json its strategy is meant to reach."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from conformance.core.features import Feature

# How harbor writes a datetime (pydantic's spelling of a naive one); anything else is another writer's.
_HARBOR_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?")
_DATETIME_KEYS = ("started_at", "updated_at", "finished_at", "occurred_at")
_SENSITIVE = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL|AUTH", re.IGNORECASE)
_COUNTS = ("n_completed_trials", "n_errored_trials", "n_running_trials", "n_pending_trials", "n_trials", "n_errors")


def _text(value: Any) -> str | None:
    try:
        return bytes(value["data"]).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _document(value: Any) -> Any:
    """The file's JSON value as Python's json reads it (NaN and Infinity accepted), None when it is no JSON."""
    text = _text(value)
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _job(value: Any) -> dict[str, Any] | None:
    document = _document(value) if value["file"] == "job" else None
    return document if isinstance(document, dict) else None


def _stats(value: Any) -> dict[str, Any]:
    stats = (_job(value) or {}).get("stats")
    return stats if isinstance(stats, dict) else {}


def _trials(value: Any) -> list[dict[str, Any]]:
    """The trial results the file holds: itself for a trial's file, its trial_results for a job's."""
    document = _document(value)
    if not isinstance(document, dict):
        return []
    found = [document] if value["file"] == "trial" else document.get("trial_results")
    return [trial for trial in found if isinstance(trial, dict)] if isinstance(found, list) else []


def _walk(node: Any) -> list[tuple[Any, Any]]:
    """Every (key, value) of the objects in a JSON value."""
    pairs = []
    if isinstance(node, dict):
        for key, item in node.items():
            pairs.append((key, item))
            pairs.extend(_walk(item))
    elif isinstance(node, list):
        for item in node:
            pairs.extend(_walk(item))
    return pairs


def _rewards(trial: dict[str, Any]) -> list[Any]:
    verifier_result = trial.get("verifier_result")
    rewards = verifier_result.get("rewards") if isinstance(verifier_result, dict) else None
    return list(rewards.values()) if isinstance(rewards, dict) else []


def _config(trial: dict[str, Any]) -> dict[str, Any]:
    config = trial.get("config")
    return config if isinstance(config, dict) else {}


def _sensitive_env(trial: dict[str, Any]) -> bool:
    config = _config(trial)
    parts = [config.get(name) for name in ("agent", "environment", "verifier")]
    envs = [part.get("env") for part in parts if isinstance(part, dict)]
    return any(isinstance(env, dict) and any(_SENSITIVE.search(key) for key in env) for env in envs)


def _odd_count(item: Any) -> bool:
    return isinstance(item, bool | str | float) or (isinstance(item, int) and not -(2**63) <= item < 2**63)


def _missing(value: Any) -> bool:
    job = _job(value)
    if job is not None and any(key not in job for key in ("id", "started_at", "n_total_trials")):
        return True
    return any(key not in trial for trial in _trials(value)
               for key in ("task_name", "trial_name", "task_checksum", "config"))


FEATURES = (
    # A trial's own file: TrialResult and its config, with no job migration around them.
    Feature("trial file", "a trial's result.json",
            lambda value: value["file"] == "trial",
            minimum={"ci": 0.08, "dev": 0.06, "explore": 0.08}),
    # A job file with its trials' results: the job's migration and the trials' models at once.
    Feature("trial results", "a job's result.json holding trial results",
            lambda value: bool(_trials(value)) and value["file"] == "job",
            minimum={"ci": 0.03, "dev": 0.01, "explore": 0.03}),
    # The legacy counts: migrated twice (JobResult, then JobStats) before the pending count is derived.
    Feature("legacy stats", "a job's stats with n_trials or n_errors and not the current count beside it",
            lambda value: any(legacy in _stats(value) and current not in _stats(value)
                              for legacy, current in (("n_trials", "n_completed_trials"),
                                                      ("n_errors", "n_errored_trials"))),
            minimum={"ci": 0.004, "dev": 0.004, "explore": 0.004}),
    # A status block: dropped, its updated_at and counts filling what the file lacks.
    Feature("status block", "a job's result.json with a status key",
            lambda value: "status" in (_job(value) or {}),
            minimum={"ci": 0.038, "dev": 0.026, "explore": 0.038}),
    # No pending count: derived from the total, completed and running counts, floored at 0.
    Feature("pending derived", "a job's stats without n_pending_trials",
            lambda value: _job(value) is not None and "n_pending_trials" not in _stats(value),
            minimum={"ci": 0.033, "dev": 0.03, "explore": 0.033}),
    # A count that is no plain int: a string, a float, a bool, beyond 64 bits.
    Feature("odd count", "n_total_trials or a stats count written as text, a float, a bool or a huge int",
            lambda value: any(_odd_count(item) for item in [(_job(value) or {}).get("n_total_trials"),
                                                           *(_stats(value).get(name) for name in _COUNTS)]),
            minimum={"ci": 0.01, "dev": 0.003, "explore": 0.01}),
    # NaN or an infinity in the rewards: written as null, and then no reward reads it back.
    Feature("non-finite reward", "a trial's reward is NaN or infinite",
            lambda value: any(isinstance(reward, float) and not math.isfinite(reward)
                              for trial in _trials(value) for reward in _rewards(trial)),
            minimum={"ci": 0.01, "dev": 0.003, "explore": 0.01}),
    # A trial config that names no trial, or a trial result without an id: harbor draws them (masked).
    Feature("drawn identity", "a trial without an id, or whose config has no trial_name",
            lambda value: any("id" not in trial or not _config(trial).get("trial_name") for trial in _trials(value)),
            minimum={"ci": 0.013, "dev": 0.006, "explore": 0.013}),
    # Env values a config writes redacted: the reload differs, yet the config's equality says same. Too rare
    # for ci's budget on every seed (none on some): an explore minimum only.
    Feature("sensitive env", "a trial config's env has a key that names a secret",
            lambda value: any(_sensitive_env(trial) for trial in _trials(value)),
            minimum={"explore": 0.005}),
    # A datetime spelled as another writer would: with Z or an offset, a date, a number.
    Feature("other datetime", "a datetime that is not harbor's own spelling",
            lambda value: any(key in _DATETIME_KEYS and item is not None and not (
                isinstance(item, str) and _HARBOR_DATETIME.fullmatch(item)) for key, item in _walk(_document(value))),
            minimum={"ci": 0.037, "dev": 0.036, "explore": 0.037}),
    # Bytes that are not UTF-8: read_text raises before any JSON is read.
    Feature("not UTF-8", "the file is not valid UTF-8",
            lambda value: _text(value) is None,
            minimum={"ci": 0.01, "dev": 0.003, "explore": 0.01}),
    # Not JSON at all (cut short, a byte order mark, padding JSON does not allow): json_invalid.
    Feature("invalid JSON", "the file decodes but is no JSON",
            lambda value: _text(value) is not None and _document(value) is None,
            minimum={"ci": 0.022, "dev": 0.016, "explore": 0.022}),
    # A key the model requires, left out (a job's stats is not one: the migration puts {} in its place).
    Feature("missing key", "a job's id, started_at or n_total_trials, or a trial's task_name, trial_name, "
                           "task_checksum or config, left out",
            lambda value: _missing(value),
            minimum={"ci": 0.004, "explore": 0.004}),
)
