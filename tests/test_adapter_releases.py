"""The one adapter serves later harbor releases: each thing a later release needs of it, run on that release.

oracles/harbor_adapter.py lists them. Each test runs the release that needs
it (its virtualenv is created on first use from oracles/locks/) and, where
the release changed what harbor does, 0.13.1 beside it: the expected values
come from the input and from what each release's source does, never from the
adapter.
"""

from __future__ import annotations

import pytest

from conformance.connection.connectors import connect
from conformance.kit import wire

ONE_TRIAL = {"agents": [{"name": "nop"}], "tasks": [{"name": "a", "trials": [{"reward_txt": b"1"}]}]}
PLANTED_ONLY = {"agents": [{"name": "nop"}],
                "tasks": [{"name": "a", "trials": [{"before_verifier": {"reward_txt": b"1"}}]}]}


@pytest.fixture(scope="module")
def harbor(harbor_release):
    connections = {}

    def get(version: str):
        if version not in connections:
            harbor_release(version)
            connections[version] = connect(f"harbor=={version}")
        return connections[version]

    yield get
    for connection in connections.values():
        connection.close()


def _run(connection, surface: str, value):
    reply = connection.run(1, surface, wire.encode(value))
    assert reply.kind in ("output", "raised"), reply.detail
    return reply


@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.13.1", "0.23.0", "0.25.0"])
def test_the_scripted_agent_serves_releases_that_ask_its_class_for_a_name(harbor, version):
    # 0.23.0 calls cls.name() before any agent exists; the trial still records the job's agent name.
    reply = _run(harbor(version), "job.result", ONE_TRIAL)
    assert reply.kind == "output", f"harbor {version} raised {reply.value}: {reply.detail}"
    trial = reply.value["trials"][0]
    assert (trial["agent"], trial["verifier_result"], trial["exception_type"]) == (
        "nop", {"rewards": {"reward": 1.0}}, None)
    assert list(reply.value["stats"]["evals"]) == ["nop__adhoc"]


def test_reward_files_the_agent_left_are_cleared_from_0_25_0_only(harbor):
    # 0.13.1 reads the reward.txt the agent left; 0.25.0 removes it before the tests (rm -f), finding none.
    old = _run(harbor("0.13.1"), "job.result", PLANTED_ONLY).value["trials"][0]
    new = _run(harbor("0.25.0"), "job.result", PLANTED_ONLY).value["trials"][0]
    assert (old["verifier_result"], old["exception_type"]) == ({"rewards": {"reward": 1.0}}, None)
    assert (new["verifier_result"], new["exception_type"]) == (None, "RewardFileNotFoundError")


@pytest.mark.parametrize("version", ["0.13.1", "0.25.0"])
def test_reward_parse_writes_the_files_when_the_test_script_runs(harbor, version):
    # 0.25.0 clears reward files before the test script and checks the rm's exit status: the files
    # of the request still reach the verifier, and nothing of one request is left for the next.
    connection = harbor(version)
    assert _run(connection, "reward.parse", {"reward_txt": b"0.5"}).value == {"reward": 0.5}
    assert _run(connection, "reward.parse", {"reward_json": b'{"a": 1}'}).value == {"a": 1}
    missing = _run(connection, "reward.parse", {})
    assert (missing.kind, missing.value) == ("raised", "RewardFileNotFoundError")


@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.13.1", "0.25.0"])
def test_a_cancelled_jobs_trials_are_found_by_name(harbor, version):
    # 0.25.0's hook events carry the trial's UUID as trial_id; the trial's folder is named after its name.
    interrupted = {"raises": "interrupt", "raises_in": "agent"}
    job = {"agents": [{"name": "nop"}], "tasks": [{"name": "a", "trials": [{"reward_txt": b"1"}]},
                                                  {"name": "b", "trials": [interrupted]},
                                                  {"name": "c", "trials": [{"reward_txt": b"1"}]}]}
    reply = _run(harbor(version), "job.result", job)
    assert reply.kind == "output", f"harbor {version} raised {reply.value}: {reply.detail}"
    assert [(t["task_name"], t["exception_type"]) for t in reply.value["trials"]] == [("a", None),
                                                                                   ("b", "CancelledError")]
    assert reply.value["stats"]["n_cancelled_trials"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.13.0", "0.13.1", "0.25.0"])
def test_every_result_json_a_job_writes_is_read_back(harbor, version):
    # Job.run writes result.json at its start and end, its hooks at each trial's start, cancellation request
    # and end: the oldest and the newest release the adapter serves write through the same method.
    # Each write as (finished, completed, running, pending, cancelled).
    cancelled = {**ONE_TRIAL, "tasks": [{"name": "a", "trials": [{"raises": "CancelledError", "raises_in": "agent"}]}]}
    for job, writes in ((ONE_TRIAL, [(False, 0, 0, 1, 0), (False, 0, 1, 0, 0), (False, 1, 0, 0, 0),
                                     (True, 1, 0, 0, 0)]),
                        (cancelled, [(False, 0, 0, 1, 0), (False, 0, 1, 0, 0), (False, 0, 1, 0, 1),
                                     (False, 1, 0, 0, 1)])):
        reply = _run(harbor(version), "job.result", job)
        assert reply.kind == "output", f"harbor {version} raised {reply.value}: {reply.detail}"
        assert [(s["finished"], *(s["stats"][count] for count in (
            "n_completed_trials", "n_running_trials", "n_pending_trials", "n_cancelled_trials")))
            for s in reply.value["snapshots"]] == writes, version


UNREADABLE_TRIAL_RESUMED = {
    "agents": [{"name": "nop"}],
    "tasks": [{"name": "a", "trials": [{"reward_txt": b"1"}, {"reward_txt": b"0.5"}]},
              {"name": "b", "trials": [{"reward_txt": b"1"}]}],
    "resume": {"stop_after": 1, "trial_results": [{"trial": 0, "replace": b"{"}]},
}


@pytest.mark.slow
def test_a_resume_skips_a_trial_result_it_cannot_read_from_0_16_0_only(harbor):
    # 0.13.1 reads the broken result.json and raises; 0.25.0 skips it and runs task a again with its next
    # outcome (0.5), after the interrupted b, which the filter removed and which runs again with none left.
    old = _run(harbor("0.13.1"), "job.result", UNREADABLE_TRIAL_RESUMED)
    new = _run(harbor("0.25.0"), "job.result", UNREADABLE_TRIAL_RESUMED)
    assert (old.kind, old.value) == ("raised", "ValidationError")
    assert new.kind == "output", new.detail
    assert new.value["resumed"] == {"ran": ["trial-2", "trial-3"], "kept": [], "removed": ["trial-1"]}
    assert [(t["task_name"], t["verifier_result"]) for t in new.value["trials"]] == [
        ("a", {"rewards": {"reward": 0.5}}), ("b", None)]
