"""result.load: result.json files near harbor's schema, as harbor writes them and as other writers spell them.

Each draw starts from a real payload (templates below, dumped from harbor
0.13.1's own models: a running job's result.json, one with its trial
results, a trial's result.json, a legacy job with ``n_trials``/``n_errors``,
a job with a ``status`` block), applies a few perturbations (a key dropped,
an unknown key added, a value replaced from a pool of hard values chosen by
what the key holds: counts, floats, datetimes, UUIDs, rewards, names,
paths), and writes it out, now and then damaged: cut at a byte, a byte
order mark, duplicate keys, bytes that are not UTF-8, NaN tokens, padding.
One draw in ten is a trial whose config takes any of the config validators'
inputs at once (where its task comes from, older env spellings, MCP servers,
host allowlists).

Hypothesis draws a ``sampled_from``'s first elements far more often than
their share, so each pool starts with what matters most.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from conformance.strategies.labels import composite
from conformance.strategies.picks import pick
from conformance.strategies.weights import weighted

_T0 = "2026-03-01T12:00:00.123456"
_JOB_ID = "4f1c2b7e-9a3d-4e5f-8b6a-0c1d2e3f4a5b"
_NAME = "hello-world__aB3dE5f"

# A trial's config as harbor 0.13.1 writes it (TrialConfig.model_dump_json).
CONFIG: dict[str, Any] = {
    "task": {"path": "tasks/hello-world", "git_url": None, "git_commit_id": None, "name": None, "ref": None,
             "overwrite": False, "download_dir": None, "source": None},
    "trial_name": _NAME, "trials_dir": "jobs/2026-03-01__12-00-00", "timeout_multiplier": 1.0,
    "agent_timeout_multiplier": None, "verifier_timeout_multiplier": None, "agent_setup_timeout_multiplier": None,
    "environment_build_timeout_multiplier": None,
    "agent": {"name": "oracle", "import_path": None, "model_name": None, "skills": [], "override_timeout_sec": None,
              "override_setup_timeout_sec": None, "max_timeout_sec": None, "extra_allowed_hosts": [], "kwargs": {},
              "env": {}, "mcp_servers": []},
    "environment": {"type": "docker", "import_path": None, "force_build": False, "delete": True,
                    "cpu_enforcement_policy": "auto", "memory_enforcement_policy": "auto", "override_cpus": None,
                    "override_memory_mb": None, "override_storage_mb": None, "override_gpus": None,
                    "override_tpu": None, "mounts": None, "extra_docker_compose": [], "env": {}, "kwargs": {},
                    "extra_allowed_hosts": []},
    "verifier": {"override_timeout_sec": None, "max_timeout_sec": None, "env": {}, "disable": False},
    "artifacts": [], "extra_instruction_paths": [], "job_id": _JOB_ID,
}
# A trial's result.json (TrialResult.model_dump_json): one that scored, with its agent's tokens and cost.
TRIAL: dict[str, Any] = {
    "id": "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "task_name": "hello-world", "trial_name": _NAME,
    "trial_uri": "file:///jobs/2026-03-01__12-00-00/" + _NAME, "task_id": {"path": "tasks/hello-world"},
    "source": "terminal-bench", "task_checksum": "3f2a9c", "config": CONFIG,
    "agent_info": {"name": "oracle", "version": "1.0.0", "model_info": {"name": "gpt-5", "provider": "openai"}},
    "agent_result": {"n_input_tokens": 1200, "n_cache_tokens": 200, "n_output_tokens": 300, "cost_usd": 0.0125,
                     "rollout_details": None, "metadata": None},
    "verifier_result": {"rewards": {"reward": 1.0}}, "exception_info": None,
    "started_at": _T0, "finished_at": "2026-03-01T12:00:42.123456",
    "environment_setup": {"started_at": _T0, "finished_at": "2026-03-01T12:00:05.123456"}, "agent_setup": None,
    "agent_execution": {"started_at": "2026-03-01T12:00:06.123456", "finished_at": "2026-03-01T12:00:30.123456"},
    "verifier": None, "step_results": None,
}
# One that ended with an exception (no rewards, no agent context).
ERRORED_TRIAL: dict[str, Any] = {
    **TRIAL, "id": "1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e", "trial_name": "hello-world__Qw9rT2y",
    "agent_result": None, "verifier_result": None,
    "exception_info": {"exception_type": "AgentTimeoutError",
                       "exception_message": "Agent timed out after 600.0 seconds",
                       "exception_traceback": "Traceback (most recent call last):\n  ...\nAgentTimeoutError",
                       "occurred_at": "2026-03-01T12:00:40.123456"},
}
# A running job's result.json: Job._write_job_result(exclude_trial_results=True).
STATS: dict[str, Any] = {
    "n_completed_trials": 2, "n_errored_trials": 1, "n_running_trials": 1, "n_pending_trials": 1,
    "n_cancelled_trials": 0, "n_retries": 0,
    "evals": {"oracle__gpt-5__terminal-bench": {
        "n_trials": 1, "n_errors": 1, "metrics": [{"mean": 0.5}], "pass_at_k": {"1": 0.5},
        "reward_stats": {"reward": {"1.0": [_NAME]}},
        "exception_stats": {"AgentTimeoutError": ["hello-world__Qw9rT2y"]}}},
    "n_input_tokens": 1200, "n_cache_tokens": 200, "n_output_tokens": 300, "cost_usd": 0.0125,
}
JOB: dict[str, Any] = {"id": _JOB_ID, "started_at": _T0, "updated_at": "2026-03-01T12:00:50.123456",
                       "finished_at": None, "n_total_trials": 4, "stats": STATS}
# A finished job's, with its trials' results.
JOB_WITH_TRIALS: dict[str, Any] = {**JOB, "finished_at": "2026-03-01T12:01:00.123456",
                                   "trial_results": [TRIAL, ERRORED_TRIAL]}
# An older harbor's: stats counted n_trials and n_errors, with no progress counts and no updated_at.
LEGACY_JOB: dict[str, Any] = {
    "id": _JOB_ID, "started_at": _T0, "finished_at": "2026-03-01T12:01:00.123456", "n_total_trials": 4,
    "stats": {"n_trials": 2, "n_errors": 1, "evals": {"oracle__adhoc": {
        "n_trials": 2, "n_errors": 1, "metrics": [{"mean": 0.5}], "reward_stats": {"reward": {"0.0": ["a"]}},
        "exception_stats": {}}}},
}
# A job whose progress sits in a status block beside thin stats.
STATUS_JOB: dict[str, Any] = {
    "id": _JOB_ID, "started_at": _T0, "updated_at": None, "finished_at": "2026-03-01T12:01:00",
    "n_total_trials": 5, "stats": {"evals": {}},
    "status": {"updated_at": "2026-03-01T12:00:55+00:00", "n_completed_trials": 2, "n_errored_trials": 1,
               "n_running_trials": 1, "n_cancelled_trials": 0, "n_retries": 1},
}
# A trial result written by hand or by another tool: no id, and a config that names no trial (harbor draws both).
UNNAMED_TRIAL: dict[str, Any] = {
    **{key: value for key, value in TRIAL.items() if key != "id"},
    "config": {"task": {"path": "tasks/hello-world-task_-"}, "trial_name": ""},
}
JOBS = (JOB_WITH_TRIALS, JOB, JOB, JOB_WITH_TRIALS, LEGACY_JOB, LEGACY_JOB, STATUS_JOB, STATUS_JOB)
TRIALS = (TRIAL, UNNAMED_TRIAL, ERRORED_TRIAL, TRIAL)
# A patch's value that takes the key out.
DROP = object()

# Hard values, by what a key holds.
ODD = [None, True, False, "", "x", [], {}, "3", 2.5, -1, 10**30, [1], {"a": 1}]
COUNTS: list[Any] = [7, 0, 1, 2, True, False, 4.0, "3", " 3", "3.0", 2.0, 2.5, True, None, -1, 0, 10**30, 2**63,
                     2**63 - 1, -(2**63), 1e20, "", "x", float("nan"), float("inf"), [], 7]
FLOATS: list[Any] = [float("nan"), float("inf"), -float("inf"), None, "1.5", "NaN", "inf", True, 0, -0.0, 10**30,
                     10**400, 1e308, 5e-324, "", [], 2.5]
REWARDS = [float("nan"), float("inf"), None, 1, 0, 0.5, -0.0, True, "1", "1.0", "NaN", 10**30, 2**63, 1e-300,
           [1], {"x": 1}]
DATETIMES = ["2026-03-01T12:00:00Z", "2026-03-01T12:00:00+02:00", "2026-03-01T12:00:00-00:30", "2026-03-01",
             "2026-03-01 12:00:00", "2026-03-01T12:00", "2026-03-01T12:00:00.123456789", "2026-03-01T24:00:00",
             "2026-02-30T00:00:00", "20260301T120000", 1772366400, 1772366400.5, "1772366400", 0, -1, 10**20,
             1772366400123, "now", "", None, True, "2026-03-01T12:00:00.5Z", "  2026-03-01T12:00:00 "]
UUIDS = ["4F1C2B7E-9A3D-4E5F-8B6A-0C1D2E3F4A5B", "4f1c2b7e9a3d4e5f8b6a0c1d2e3f4a5b",
         "urn:uuid:4f1c2b7e-9a3d-4e5f-8b6a-0c1d2e3f4a5b", "{4f1c2b7e-9a3d-4e5f-8b6a-0c1d2e3f4a5b}",
         "4f1c2b7e-9a3d-4e5f-8b6a-0c1d2e3f4a5", "00000000-0000-0000-0000-000000000000",
         "4f1c2b7e-9a3d-1e5f-8b6a-0c1d2e3f4a5b", "", 12345, None, " 4f1c2b7e-9a3d-4e5f-8b6a-0c1d2e3f4a5b"]
NAMES = ["", "x", None, 3, "日本語", "a\u0000b", "a" * 40 + "__", "tasks/x", True]
PATHS = ["tasks/hello-world", "tasks/hello-world/", "tasks//a", "a/b/c_-_", "/abs/task", "./x", "x" * 40,
         "tasks/hello_", ".hidden", None, 3]
HOSTS = [[""], ["http://x"], ["Example.COM."], ["api.openai.com"], ["a_b"], ["x:80"], "example.com", [3], None]
ENVS = [{"OPENAI_API_KEY": "sk-0123456789abcdef"}, {"AUTH": "${AUTH:-x}", "MY_TOKEN": "short"}, {"PATH": "/bin"},
        {"AUTH": "${AUTH:-x}"}, ["A=1", " B = 2 "], ["NOEQUALS"], {"A": 1}, None, "A=1"]
MCP = [[{"name": "m", "transport": "stdio"}], [{"name": "m", "transport": "http", "url": "http://x"}],
       [{"name": "m"}], [{"name": "m", "transport": "stdio", "command": "run", "args": ["-v"]}],
       [{"name": "m", "transport": "tcp"}]]
MOUNTS = [[{"type": "bind", "source": "/a", "target": "/b"}], [{"type": "bind", "source": "/a", "target": "/b",
                                                              "read_only": False}],
          [{"type": "volume", "source": "v", "target": "/b", "volume": {"subpath": "s"}}], [{"type": "nfs"}], []]
TASK_IDS = [{"path": "tasks/x", "git_url": "https://g/x.git"}, {"git_url": "https://g", "path": "p",
                                                               "git_commit_id": "abc"},
            {"org": "harbor", "name": "hello", "ref": "latest"}, {"org": "o"}, {}, {"path": 3}, "tasks/x"]
TASKS = [{}, {"path": "repo/task-one", "git_url": "https://g/r.git", "git_commit_id": "abc"},
         {"name": "harbor/hello-world", "ref": "3"}, {"path": "t", "git_commit_id": "abc"}, {"name": "nohello"},
         {"path": "t", "name": "a/b"}, {"path": "tasks/x", "ref": "3"}, {"name": "a/b/c" * 9}]
REWARD_KEYS = ["1.0", "1e3", "2.50", "1_0", "0x1", "1.0", "1", "0", "-0.0", "1e3", "nan", "NaN", "inf", "x", "",
               " 1", "1_0", "0x1", "2.50"]
REWARD_MAPS = [{"reward": float("nan")}, {"reward": 1}, {"reward": float("nan"), "speed": 1}, {"reward": -float("inf")},
               {"reward": float("inf"), "x": 0}, {"reward": None}, {"reward": 1, "speed": 0.25}, {"reward": 10**30}]
# The ones most results hinge on, drawn more often than the others: the migrations' inputs, keys read as
# numbers, NaN rewards, what a config writes differently from what it reads.
JOB_HOT: list[tuple[tuple[Any, ...], list[Any]]] = [
    # The first entries are drawn most (Hypothesis favours a sampled_from's first elements).
    (("status",), [{"updated_at": "2026-03-01T13:00:00+01:00", "n_completed_trials": True, "n_running_trials": 3},
                   {"n_completed_trials": 9}, {"updated_at": None, "n_pending_trials": "2"}, None, "running"]),
    (("n_total_trials",), [4.0, 2.0, True, "4", 0, 1, 10**30, DROP]),
    (("stats",), ["x", [1], 3, None, []]),  # no object: the migration puts {} in its place
    # Several keys at once (an empty path merges): a total the pending count is derived from.
    ((), [{"n_total_trials": total, "stats": {"n_completed_trials": 1, "n_running_trials": running}}
          for total in (4.0, True, "4", 10**30, 2) for running in (1, True)]),
    (("stats", "evals", "oracle__gpt-5__terminal-bench", "pass_at_k"), [{"02": 0.5}, {" 1": 1.0}, {"x": 0.5},
                                                                      {"1": 1}, {"+3": 0.5}]),
    (("stats", "n_trials"), [True, 5, 2.0, "3", DROP]),
    (("id",), [DROP, "4F1C2B7E-9A3D-4E5F-8B6A-0C1D2E3F4A5B", "{4f1c2b7e-9a3d-4e5f-8b6a-0c1d2e3f4a5b}"]),
    (("started_at",), [DROP, "2026-03-01T12:00:00Z", 1772366400, "2026-03-01"]),
    (("updated_at",), [None, DROP, "2026-03-01T12:00:59Z"]), (("finished_at",), [None, DROP, "2026-03-02"]),
    (("stats", "n_pending_trials"), [DROP, DROP, None, "1"]),
    (("stats", "n_completed_trials"), [DROP, True, False, 6, 2.0, "2"]),
    (("stats", "n_running_trials"), [DROP, True, 3, 1.0]),
    (("trial_results", 0, "verifier_result", "rewards"), REWARD_MAPS),
    (("stats", "evals", "oracle__gpt-5__terminal-bench", "reward_stats", "reward"),
     [{key: ["a"]} for key in REWARD_KEYS]),
]
TRIAL_HOT: list[tuple[tuple[Any, ...], list[Any]]] = [
    # Weighted by repetition (and the first, which Hypothesis favours): NaN rewards and secrets are what most
    # of a trial's write-back hinges on.
    (("verifier_result", "rewards"), REWARD_MAPS), (("config", "agent", "env"), ENVS[:2]),
    (("task_checksum",), [DROP, 3, None]),
    (("id",), [DROP, "4F1C2B7E-9A3D-4E5F-8B6A-0C1D2E3F4A5B", "urn:uuid:4f1c2b7e-9a3d-4e5f-8b6a-0c1d2e3f4a5b"]),
    (("verifier_result", "rewards"), REWARD_MAPS), (("verifier_result", "rewards"), REWARD_MAPS),
    (("config", "agent", "env"), ENVS[:4]),
    (("config", "trial_name"), ["", DROP]),
    (("config", "task", "path"), ["tasks/ends-with_-", "t/" + "x" * 40, "tasks/hello-world", "a/b__"]),
    (("config", "agent", "env"), ENVS[:4]), (("config", "environment", "env"), ENVS[:2] + ENVS[4:6]),
    (("config", "environment", "suppress_override_warnings"), [True, False]),
    (("config", "environment"), [{"mounts_json": MOUNTS[0]}, {"mounts_json": MOUNTS[2], "mounts": None}]),
]
# A trial config's own validators: where the task comes from, MCP servers, host allowlists, the older env
# spellings; drawn as a branch of their own, or the trial's other values would crowd them out.
CONFIG_HOT: list[tuple[tuple[Any, ...], list[Any]]] = [
    # A config that names no trial, whose name is drawn from its task's: a git task, a package, a local one.
    (("config",), [{"task": task, "trial_name": ""} for task in (
        {"path": "repo/task-one", "git_url": "https://g/r.git", "git_commit_id": "abc"},
        {"name": "harbor/hello-world", "ref": "3"}, {"name": "nohello"}, {"path": "tasks/hello_"})]),
    (("config", "task"), [{"path": "t", "name": "a/b"}, {"path": "tasks/x", "ref": "3"},
                          {"path": "t", "git_commit_id": "abc"}, {}]),  # each of validate_task_source's refusals
    (("config", "environment"), [{"type": "MODAL", "env": ["A=1", " B = 2 "]}, {"env": []},
                                 {"import_path": "m:E", "extra_allowed_hosts": ["Example.COM."]},
                                 # the legacy keys' warnings: mounts_json where no mounts is given
                                 {"mounts_json": MOUNTS[0], "suppress_override_warnings": True}]),
    (("config", "environment", "cpu_enforcement_policy"), [1, "LIMIT", None, "Ignore"]),
    (("config", "environment", "env"), [["NOEQUALS"], ["A=1"], "A=1", {"A": 1}]),
    (("config", "agent", "mcp_servers"), MCP),
    (("config", "agent", "extra_allowed_hosts"), HOSTS),
    (("config", "agent", "import_path"), ["m:A", None]),
    (("config", "verifier"), [{"import_path": "m:V", "kwargs": {"a": 1}, "env": {"TOKEN": "${TOKEN}"}},
                              {"disable": True, "kwargs": {}}]),
]
UNKNOWN = ["extra", "schema_version", "n_trials", "n_errors", "status", "notes"]

# Where a targeted value goes: a path (relative to a trial for the trial pools) and the pool drawn from.
JOB_PATCHES: list[tuple[tuple[Any, ...], list[Any]]] = [
    (("id",), UUIDS), (("started_at",), DATETIMES), (("updated_at",), DATETIMES), (("finished_at",), DATETIMES),
    (("n_total_trials",), COUNTS), (("stats",), [None, [], {}, "x", 3]),
    (("stats", "n_completed_trials"), COUNTS), (("stats", "n_running_trials"), COUNTS),
    (("stats", "n_pending_trials"), COUNTS), (("stats", "n_errored_trials"), COUNTS),
    (("stats", "n_trials"), COUNTS), (("stats", "n_errors"), COUNTS), (("stats", "n_retries"), COUNTS),
    (("stats", "cost_usd"), FLOATS), (("stats", "n_input_tokens"), COUNTS),
    (("status",), [None, [], "running", {}, {"updated_at": None}, {"n_pending_trials": 9}]),
    (("status", "updated_at"), DATETIMES), (("status", "n_completed_trials"), COUNTS),
    (("status", "n_running_trials"), COUNTS), (("status", "n_pending_trials"), COUNTS),
    (("stats", "evals", "oracle__gpt-5__terminal-bench", "pass_at_k"), [{"1": 0.5, "x": 1}, {"2.0": 1},
                                                                      {"1": None}, {"1": float("nan")}]),
    (("stats", "evals", "oracle__gpt-5__terminal-bench", "metrics"), [[{"mean": float("nan")}], [1], [None],
                                                                    [{"mean": None}], [{"m": 10**30}]]),
    (("stats", "evals", "oracle__adhoc", "n_trials"), COUNTS),
    (("stats", "evals", "oracle__gpt-5__terminal-bench", "reward_stats", "reward"),
     [{key: ["a"]} for key in REWARD_KEYS] + [{"1": ["a"], "1.0": ["b"]}, {"1.0": "a"}, {"1.0": [3]}]),
    (("stats", "evals", "oracle__adhoc", "reward_stats", "reward"), [{key: ["a"]} for key in REWARD_KEYS]),
]
TRIAL_PATCHES: list[tuple[tuple[Any, ...], list[Any]]] = [
    (("id",), UUIDS), (("task_name",), NAMES), (("trial_name",), NAMES), (("task_id",), TASK_IDS),
    (("started_at",), DATETIMES), (("finished_at",), DATETIMES), (("source",), NAMES),
    (("verifier_result",), [None, {}, {"rewards": None}, {"rewards": {}}, {"rewards": {"reward": None}},
                            {"rewards": {"reward": 1, "speed": 0.25}}, [], "1"]),
    (("verifier_result", "rewards", "reward"), REWARDS), (("verifier_result", "rewards", "reward"), REWARDS),
    (("agent_result", "cost_usd"), FLOATS), (("agent_result", "n_input_tokens"), COUNTS),
    (("agent_result", "rollout_details"), [[{"prompt_token_ids": [[1, 2]], "logprobs": [[-0.5, float("nan")]]}],
                                           [{"x": 1}], [{"completion_token_ids": [["1"]]}], [[]]]),
    (("agent_result", "metadata"), [{"a": float("nan")}, {"a": 10**30}, [], None]),
    (("exception_info",), [None, {}, {"exception_type": "CancelledError", "exception_message": "",
                                      "exception_traceback": "", "occurred_at": "2026-03-01"}]),
    (("exception_info", "occurred_at"), DATETIMES),
    (("agent_info", "model_info"), [None, {}, {"name": "m"}, {"name": None}, "gpt-5"]),
    (("agent_info", "version"), NAMES), (("environment_setup",), [None, {}, [], {"started_at": None}]),
    (("step_results",), [[], [{"step_name": "s1", "verifier_result": {"rewards": {"reward": 0.5}}}],
                         [{"step_name": 3}], [{}], None]),
    (("config", "trial_name"), ["", "", "", None, "x", "a__b"]), (("config", "task"), TASKS),
    (("config", "task", "path"), PATHS), (("config", "job_id"), UUIDS), (("config", "trials_dir"), PATHS),
    (("config", "timeout_multiplier"), FLOATS), (("config", "agent_timeout_multiplier"), FLOATS),
    (("config", "agent", "name"), [None, "", 3, "claude-code"]), (("config", "agent", "import_path"), [None, "m:A"]),
    (("config", "agent", "extra_allowed_hosts"), HOSTS), (("config", "environment", "extra_allowed_hosts"), HOSTS),
    (("config", "agent", "env"), ENVS), (("config", "environment", "env"), ENVS), (("config", "verifier", "env"), ENVS),
    (("config", "agent", "mcp_servers"), MCP), (("config", "agent", "skills"), [["a//b/"], [3], None, "x"]),
    (("config", "agent", "kwargs"), [{"temperature": float("nan")}, {"n": 10**30}, [], None]),
    (("config", "environment", "type"), ["DOCKER", "modal", "nope", None, 3]),
    (("config", "environment", "import_path"), [None, "m:E"]),
    (("config", "environment", "cpu_enforcement_policy"), ["LIMIT", "Ignore", "none", 1, None]),
    (("config", "environment", "suppress_override_warnings"), [True, False, "yes", 1]),
    (("config", "environment", "mounts_json"), MOUNTS), (("config", "environment", "mounts"), MOUNTS),
    (("config", "environment", "override_cpus"), COUNTS), (("config", "environment", "force_build"),
                                                          ["true", "yes", 1, 0, "on", 2, None]),
    (("config", "environment", "override_tpu"), [{"type": "v6e", "topology": " 2x4 "}, {"type": "", "topology": "2"},
                                                 {"type": "v4", "topology": "0x2"}]),
    (("config", "verifier", "import_path"), [None, "m:V", ""]),
    (("config", "verifier", "kwargs"), [{}, {"a": 1}, None]),
    (("config", "verifier", "disable"), [True, "false", 0]),
    (("config", "artifacts"), [["logs/"], [{"source": "a"}], [{"source": "a", "exclude": ["*.pyc"]}], [3], "x"]),
]
_IN_JOB = ("trial_results", 0)


def _set(document: Any, path: tuple[Any, ...], value: Any) -> None:
    """Put ``value`` at ``path`` when its parent is there (an object or a list long enough); merge it into
    the document at the empty path."""
    if not path:
        document.update(copy.deepcopy(value))
        return
    parent = document
    for step in path[:-1]:
        if isinstance(parent, dict) and step in parent:
            parent = parent[step]
        elif isinstance(parent, list) and isinstance(step, int) and step < len(parent):
            parent = parent[step]
        else:
            return
    if isinstance(parent, dict) and value is DROP:
        parent.pop(path[-1], None)
    elif isinstance(parent, dict):
        parent[path[-1]] = copy.deepcopy(value)  # later perturbations edit it in place: not the pool's own


def _nodes(document: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path of an object's key in the document."""
    found = []
    if isinstance(document, dict):
        for key, value in document.items():
            found.append((*path, key))
            found.extend(_nodes(value, (*path, key)))
    elif isinstance(document, list):
        for index, value in enumerate(document[:2]):
            found.extend(_nodes(value, (*path, index)))
    return found


def _parent(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        document = document[step]
    return document


@composite
def _perturbed(draw: st.DrawFn, templates: tuple[dict[str, Any], ...], hot: list[tuple[tuple[Any, ...], list[Any]]],
               patches: list[tuple[tuple[Any, ...], list[Any]]]) -> dict[str, Any]:
    document: dict[str, Any] = copy.deepcopy(pick(draw, templates))
    in_trial = () if patches is TRIAL_PATCHES else _IN_JOB  # where a trial's patches go: a job's first trial
    # One of the values most results hinge on (seven draws in eight), then up to two more perturbations.
    kinds = ["hot"] * pick(draw, [1, 1, 1, 1, 1, 1, 1, 0])
    kinds += draw(_MORE_KINDS)
    for kind in kinds:
        if kind in ("hot", "patch", "trial"):
            path, pool = pick(draw, hot if kind == "hot" else patches if kind == "patch" else
                                              TRIAL_HOT + TRIAL_PATCHES)
            _set(document, (*in_trial, *path) if kind == "trial" else path, pick(draw, pool))
        elif nodes := _nodes(document):
            path = pick(draw, nodes)
            parent = _parent(document, path)
            if kind == "drop":
                del parent[path[-1]]
            elif kind == "add":
                parent[pick(draw, UNKNOWN)] = copy.deepcopy(pick(draw, ODD))
            else:
                parent[path[-1]] = copy.deepcopy(pick(draw, ODD))
    return document


# Made once: a strategy made in the draw is made and checked on every draw.
_MORE_KINDS = st.lists(st.sampled_from(["hot", "patch", "patch", "trial", "trial", "drop", "add", "odd"]), max_size=2)
jobs = _perturbed(JOBS, JOB_HOT, JOB_PATCHES)
trials = _perturbed(TRIALS, TRIAL_HOT, TRIAL_PATCHES)


def _dumped(document: Any, indent: int | None) -> bytes:
    # Python's json writes NaN and Infinity tokens for non-finite floats, as a writer that allows them does.
    return json.dumps(document, indent=indent, ensure_ascii=False).encode()


def _duplicated(data: bytes, key: bytes, value: bytes, first: bool) -> bytes:
    """The object written with one more member, a key it may already have: before its others, or after them."""
    start, end = data.find(b"{"), data.rfind(b"}")
    if start < 0 or end < 0:
        return data
    member = b'"' + key + b'": ' + value
    return data[:start + 1] + member + b", " + data[start + 1:] if first else data[:end] + b", " + member + data[end:]


@composite
def _written(draw: st.DrawFn, documents: st.SearchStrategy[Any]) -> bytes:
    """A drawn document's bytes: mostly as harbor writes them (indent 4), sometimes compact or damaged."""
    document = draw(documents)  # drawn here, not through flatmap: one strategy, labelled once
    data = _dumped(document, pick(draw, [4, 4, 4, None, 2]))
    # Hypothesis draws the first element of a sampled_from far more often than its share: it is "none".
    damage = pick(draw, ["none", "empty", "cut", "bom", "duplicate", "duplicate", "latin-1", "bytes",
                                   "bytes", "pad", "crlf", "tokens"] + ["none"] * 20)
    if damage == "cut":
        return data[:draw(st.integers(0, len(data) - 1))]
    if damage == "bom":
        return b"\xef\xbb\xbf" + data
    if damage == "duplicate":
        key = pick(draw, [b"n_total_trials", b"id", b"stats", b"started_at", b"trial_name", b"config"])
        value = pick(draw, [b"3", b'"x"', b"null", b"{}", b"NaN", b'"2026-03-01T12:00:00Z"'])
        return _duplicated(data, key, value, draw(st.booleans()))
    if damage == "latin-1":  # a writer of another encoding: a non-ASCII letter as one byte
        return data.replace(b'"hello-world"', b'"h\xe9llo-world"', 1) if b'"hello-world"' in data else data + b"\xe9"
    if damage == "bytes":
        at = draw(st.integers(0, len(data)))
        return data[:at] + pick(draw, [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80abc", b"\xf0\x9f"])
    if damage == "pad":
        pad = pick(draw, [" ", "\n\n", "\t", "\u00a0", "\x00", "\r", "\x0c"]).encode()
        return pad + data + pad
    if damage == "crlf":
        return data.replace(b"\n", b"\r\n")
    if damage == "tokens":  # numbers spelled as JSON's extensions and other readers' spellings
        return data.replace(b"0.0125", pick(draw, [b"Infinity", b"-Infinity", b"NaN", b"1E400", b"-0",
                                                              b"1.25e-2", b"0012"]), 1)
    if damage == "empty":
        return pick(draw, [b"[]", b"", b"null", b"{}", b"\"x\"", b"3"])
    return data


@st.composite
def _configs(draw: st.DrawFn) -> dict[str, Any]:
    """A trial whose config takes each of CONFIG_HOT's patches or not: pydantic runs every field's validators
    before it reports, so one file reaches several of them."""
    document: dict[str, Any] = copy.deepcopy(TRIAL)
    for path, pool in CONFIG_HOT:
        if draw(st.booleans()):
            _set(document, path, pick(draw, pool))
    return document


configs = _configs()

load_inputs = weighted(
    (6, _written(jobs).map(lambda data: {"file": "job", "data": data})),
    (3, _written(trials).map(lambda data: {"file": "trial", "data": data})),
    (2, _written(configs).map(lambda data: {"file": "trial", "data": data})),
)
