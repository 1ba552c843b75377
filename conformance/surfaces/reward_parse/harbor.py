"""reward.parse on the oracle's side: harbor's ``Verifier.verify()`` of a real Task and TrialPaths.

Runs inside the oracle's virtualenv (standard library, harbor, and the oracle
folder's scripted sandbox ``harbor_job``), loaded by path by
``oracles/harbor_adapter.py``, which calls :func:`serve` once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import harbor_job
from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.models.task.config import TaskOS
from harbor.models.task.task import Task
from harbor.models.trial.paths import EnvironmentPaths, TrialPaths
from harbor.verifier.verifier import Verifier

if TYPE_CHECKING:  # the adapter's Context, for the type check only (oracles/harbor_adapter.py)
    from harbor_adapter import Context


class _Sandbox:
    """The environment a Verifier talks to: a bind mount of the trial's verifier folder.

    Running the test script leaves the request's reward files there; ``rm -f``
    removes files there (harbor 0.25.0 on clears stale rewards so before the
    tests run, and asks ``is_path_mounted`` before reading them on the host).
    """

    os = TaskOS.LINUX
    capabilities = SimpleNamespace(mounted=True)

    def __init__(self, paths: TrialPaths) -> None:
        self.paths = paths
        self.files: harbor_job.Phase = {}
        self.tests = str(EnvironmentPaths().tests_dir / "test.")

    def _host_path(self, env_path: str) -> Path | None:
        parent, _, name = env_path.rpartition("/")
        return self.paths.verifier_dir / name if parent == str(EnvironmentPaths().verifier_dir) else None

    async def exec(self, command: str, **_: Any) -> ExecResult:
        harbor_job.remove_mounted(command, self._host_path)
        if self.tests in command and not command.startswith("chmod "):
            harbor_job.write_reward_files(self.paths, self.files, replace=False)
        return ExecResult(stdout="", stderr="", return_code=0)

    def is_path_mounted(self, environment_path: Any, host_path: Path) -> bool:
        return True

    async def upload_dir(self, source_dir: Any, target_dir: Any) -> None:
        return None


class RewardParse:
    """reward.parse through ``Verifier.verify()`` of a real Task and TrialPaths."""

    def __init__(self, workdir: Path) -> None:
        task_dir = workdir / "task"
        (task_dir / "tests").mkdir(parents=True)
        (task_dir / "task.toml").write_text('version = "1.0"\n')
        (task_dir / "instruction.md").write_text("conformance\n")
        (task_dir / "tests" / "test.sh").write_text("#!/bin/sh\n")
        self.paths = TrialPaths(workdir / "trial")
        self.paths.verifier_dir.mkdir(parents=True)
        self.sandbox = _Sandbox(self.paths)
        # The Verifier uses only what _Sandbox has of an environment (exec, upload_dir, is_path_mounted, os,
        # capabilities); a whole BaseEnvironment would have to be started.
        self.verifier = Verifier(task=Task(task_dir), trial_paths=self.paths,
                                 environment=cast(BaseEnvironment, self.sandbox))
        self.loop = asyncio.new_event_loop()

    def __call__(self, verifier_dir: harbor_job.Phase) -> dict[str, float | int] | None:
        harbor_job.write_reward_files(self.paths, {})  # nothing left of the request before
        self.sandbox.files = verifier_dir
        try:
            return self.loop.run_until_complete(self.verifier.verify()).rewards
        except Exception as error:
            # Messages name the reward files relative to the trial folder ("verifier/reward.txt"),
            # as a candidate can: the oracle's own temporary path holds words ("reward.parse")
            # that agent-challenge's reason-code rules match on.
            if len(error.args) == 1 and isinstance(error.args[0], str):
                error.args = (error.args[0].replace(f"{self.paths.trial_dir}/", ""),)
            raise


def serve(context: Context) -> RewardParse:
    return RewardParse(context.workdir)
