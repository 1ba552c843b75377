"""pass_at_k on the oracle's side: harbor's ``compute_pass_at_k_by_evals`` over TrialResults built from the trials.

Runs inside the oracle's virtualenv (standard library and harbor), loaded by
path by ``oracles/harbor_adapter.py``, which calls :func:`serve` once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harbor.models.trial.config import TaskConfig as TrialTaskConfig
from harbor.models.trial.config import TrialConfig
from harbor.models.trial.result import AgentInfo, ModelInfo, TrialResult
from harbor.models.verifier.result import VerifierResult
from harbor.utils.pass_at_k import compute_pass_at_k_by_evals

if TYPE_CHECKING:  # the adapter's Context and the kit's Handler, for the type check only (oracles/harbor_adapter.py)
    from conformance_kit.candidate import Handler
    from harbor_adapter import Context


def _trial_result(index: int, trial: dict[str, Any], configs: dict[Any, TrialConfig]) -> TrialResult:
    model = trial.get("model")
    rewards = trial.get("rewards")
    name = trial["task_name"]
    # The trial's config is scaffolding pass@k never reads, and building one costs 50 µs, most of a trial's
    # result: one per task name of the request (built when the name is first met, so a name it refuses still
    # raises at the same trial).
    config = configs.get(name) if isinstance(name, str) else None
    if config is None:
        config = TrialConfig(task=TrialTaskConfig(path=Path(name)))
        if isinstance(name, str):
            configs[name] = config
    return TrialResult(
        task_name=trial["task_name"],
        trial_name=f"trial-{index}",
        trial_uri=f"file:///trials/trial-{index}",
        task_id={"path": trial["task_name"]},
        source=trial.get("source"),
        task_checksum="0",
        config=config,
        agent_info=AgentInfo(
            name=trial["agent"], version="1.0",
            model_info=ModelInfo(name=model) if model is not None else None,
        ),
        verifier_result=VerifierResult(rewards=rewards) if rewards is not None else None,
    )


def pass_at_k(request: dict[str, Any]) -> Any:
    configs: dict[Any, TrialConfig] = {}
    results = [_trial_result(i, t, configs) for i, t in enumerate(request["trials"])]
    return compute_pass_at_k_by_evals(results)


def serve(context: Context) -> Handler:
    return pass_at_k
