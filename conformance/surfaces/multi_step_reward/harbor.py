"""multi_step.reward on the oracle's side: one multi-step task through harbor's own Trial.create and run.

Runs inside the oracle's virtualenv (standard library, harbor, and the
oracle folder's scripted sandbox ``harbor_job``), loaded by path by
``oracles/harbor_adapter.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import harbor_job

if TYPE_CHECKING:  # the adapter's Context (oracles/harbor_adapter.py) and harbor's models, for the type check only
    from harbor.models.trial.config import EnvironmentConfig, TrialConfig
    from harbor.models.trial.result import ExceptionInfo
    from harbor.models.verifier.result import VerifierResult
    from harbor_adapter import Context


def _verifier_result(result: VerifierResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {"rewards": None if result.rewards is None else dict(result.rewards)}


def _exception_type(info: ExceptionInfo | None) -> str | None:
    return None if info is None else info.exception_type


def one_trial(task_dir: Path, trials_dir: Path, environment: EnvironmentConfig, *, agent: str = "nop",
              verifier_disabled: bool = False) -> TrialConfig:
    """The TrialConfig of one local task, as a Job would make it: the scripted agent named ``agent``
    (it does nothing, or raises where the script says so), the verifier disabled if asked."""
    from harbor.models.trial.config import AgentConfig, TaskConfig, TrialConfig, VerifierConfig

    return TrialConfig(task=TaskConfig(path=task_dir), trials_dir=trials_dir,
                       agent=AgentConfig(import_path=harbor_job.AGENT_IMPORT_PATH, kwargs={"agent_name": agent}),
                       environment=environment, verifier=VerifierConfig(disable=verifier_disabled))


class MultiStepReward:
    """multi_step.reward: one multi-step task through harbor's own Trial.create and run.

    The trial runs on its own, as a Job would run it (the scripted agent,
    named ``nop``): a job around it would add the job's own metrics over the
    trial's reward, whose failures are not this surface's.

    Request: ``{"strategy": "final" | "mean" | None, "steps": [phase, ...],
    "verifier_disabled": bool}`` (step i is named ``step-<i+1>``; None leaves
    ``multi_step_reward_strategy`` unset). A step's phase: its reward files,
    ``raises`` (its test script raises: ``timeout`` or an exception class),
    ``agent_raises`` (the agent's run in that step raises) and ``min_reward``
    (written into the step's ``[[steps]]`` table). ``verifier_disabled`` is
    the TrialConfig's ``verifier.disable``. Output: the trial's
    ``verifier_result`` and exception type, and each step that ran, in order,
    from the in-memory TrialResult.
    """

    TASK = "task"

    def __init__(self, runner: harbor_job.TrialRunner) -> None:
        self.runner = runner

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        phases = list(request["steps"])
        names = [f"step-{i}" for i in range(1, len(phases) + 1)]
        step_keys = [{"min_reward": p["min_reward"]} if p.get("min_reward") is not None else {} for p in phases]
        strategy = request.get("strategy")
        top_level = "" if strategy is None else f"multi_step_reward_strategy = {harbor_job.toml_string(strategy)}"

        def config_for(folder: Path, environment: EnvironmentConfig) -> TrialConfig:
            task_dir = harbor_job.write_task(folder / "tasks", self.TASK, top_level=top_level, steps=names,
                                             step_keys=step_keys)
            return one_trial(task_dir, folder / "trials", environment,
                             verifier_disabled=bool(request.get("verifier_disabled")))

        trial = self.runner.run(config_for,
                                lambda folder: harbor_job.Script({folder / "tasks" / self.TASK: [{"steps": phases}]}))
        return {
            "verifier_result": _verifier_result(trial.verifier_result),
            "exception_type": _exception_type(trial.exception_info),
            "steps": [
                {"name": step.step_name, "verifier_result": _verifier_result(step.verifier_result),
                 "exception_type": _exception_type(step.exception_info)}
                for step in trial.step_results or []
            ],
        }


def serve(context: Context) -> MultiStepReward:
    return MultiStepReward(context.runner())
