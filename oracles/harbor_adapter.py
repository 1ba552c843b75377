"""The harbor oracle: harbor's own scoring code behind the candidate protocol.

Runs inside a cached virtualenv holding one harbor release (see
``conformance.oracle.environments``), started as

    <venv>/bin/python -I -X utf8 harbor_adapter.py <path to the candidate kit, conformance/kit>

or, to measure which of harbor's lines it runs (``conformance.oracle.coverage``),
in a second environment that also has coverage.py, as
``python -I -X utf8 -m coverage run --branch ... harbor_adapter.py <path>``.

It serves through the suite's own candidate kit (``conformance/kit/``,
standard library only, loaded by path so nothing else of the harness enters
harbor's environment): the oracle is just another
candidate. Nothing of harbor is re-implemented here: each surface builds
harbor's own objects and calls harbor's own functions; an exception harbor
raises is the output (``raised``), never a failure of the adapter.

The same adapter serves every harbor release the upgrade gate runs
(``harbor==VERSION``, 0.13.0 to 0.25.0). Where a later release needs
something of it, the adapter does it in a way every release accepts, so
there is one code path, and says so here (tests/test_adapter_releases.py
runs each against the releases that need it):

* from 0.23.0, ``BaseAgent.parse_options`` calls ``cls.name()`` on the agent
  class before an instance exists: ``ScriptedAgent.name`` answers on the
  class too (harbor_job.py);
* from 0.25.0, the verifier clears stale reward files with ``rm -f --``
  before the tests run, checks the command's return code, and asks the
  environment ``is_path_mounted``: both sandboxes carry the removal out on
  their mounted folders, as a bind mount would (``remove_mounted`` in
  harbor_job.py), and reward.parse's reward files are written when the
  test script runs, not before ``verify()``, as a real test script writes
  them (``_Sandbox`` below);
* from 0.25.0, a trial hook event's ``trial_id`` is the trial's UUID: a
  cancelled job's trials are found by ``event.config.trial_name``, which
  every release has (harbor_job.py).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import platform
import shutil
import sys
import tempfile
import types
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from harbor.environments.base import ExecResult
from harbor.metrics.factory import MetricFactory
from harbor.models.metric.config import MetricConfig
from harbor.models.task.config import TaskOS
from harbor.models.task.task import Task
from harbor.models.trial.config import TaskConfig as TrialTaskConfig
from harbor.models.trial.config import TrialConfig
from harbor.models.trial.paths import TrialPaths
from harbor.models.trial.result import AgentInfo, ModelInfo, TrialResult
from harbor.models.verifier.result import VerifierResult
from harbor.utils.pass_at_k import compute_pass_at_k_by_evals
from harbor.verifier.verifier import Verifier


def _load_kit(kit_dir: str) -> types.ModuleType:
    """The suite's candidate kit (standard library only), imported from its folder as the package
    ``conformance_kit``: nothing else of the harness enters harbor's environment."""
    init = Path(kit_dir) / "__init__.py"
    spec = importlib.util.spec_from_file_location("conformance_kit", init, submodule_search_locations=[kit_dir])
    assert spec is not None and spec.loader is not None, kit_dir
    package = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = package  # the kit's relative imports resolve through it
    spec.loader.exec_module(package)
    return package


conformance_kit = _load_kit(sys.argv[1])
kit = conformance_kit.candidate


def _load_sibling(name: str) -> types.ModuleType:
    """A module beside this file (``-I`` keeps its folder off sys.path), under its plain name:
    harbor imports the scripted environment class as ``harbor_job:ScriptedEnvironment``."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


harbor_job = _load_sibling("harbor_job")
agent_challenge = _load_sibling("agent_challenge")
evsys_sdk = _load_sibling("evsys_sdk")

HARBOR_VERSION = importlib.metadata.version("harbor")


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
        self.files: dict[str, Any] = {}
        self.tests = str(harbor_job.EnvironmentPaths().tests_dir / "test.")

    def _host_path(self, env_path: str) -> Path | None:
        parent, _, name = env_path.rpartition("/")
        return self.paths.verifier_dir / name if parent == str(harbor_job.EnvironmentPaths().verifier_dir) else None

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
        self.verifier = Verifier(task=Task(task_dir), trial_paths=self.paths, environment=self.sandbox)
        self.loop = asyncio.new_event_loop()

    def __call__(self, verifier_dir: dict[str, Any]) -> Any:
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


def metric_compute(request: dict[str, Any]) -> Any:
    if not kit.reads_files(request["metric"], request.get("scripts")):
        return _metric(request)
    # A uv-script metric's script_path resolves against the folder holding the request's scripts.
    with kit.working_folder(request.get("scripts")):
        return _metric(request)


def _metric(request: dict[str, Any]) -> Any:
    config = MetricConfig.model_validate(request["metric"])
    metric = MetricFactory.create_metric(config.type, **config.kwargs)
    return metric.compute(request["rewards"])


def _trial_result(index: int, trial: dict[str, Any]) -> TrialResult:
    model = trial.get("model")
    rewards = trial.get("rewards")
    return TrialResult(
        task_name=trial["task_name"],
        trial_name=f"trial-{index}",
        trial_uri=f"file:///trials/trial-{index}",
        task_id={"path": trial["task_name"]},
        source=trial.get("source"),
        task_checksum="0",
        config=TrialConfig(task=TrialTaskConfig(path=Path(trial["task_name"]))),
        agent_info=AgentInfo(
            name=trial["agent"], version="1.0",
            model_info=ModelInfo(name=model) if model is not None else None,
        ),
        verifier_result=VerifierResult(rewards=rewards) if rewards is not None else None,
    )


def pass_at_k(request: dict[str, Any]) -> Any:
    results = [_trial_result(i, t) for i, t in enumerate(request["trials"])]
    return compute_pass_at_k_by_evals(results)


def reason_normalize(request: dict[str, Any]) -> dict[str, Any]:
    value = request.get("value")
    return {"reason_code": agent_challenge.normalize_reason_code(value),
            "failure": agent_challenge.classify_failure(value, request.get("attempt_number", 1))}


def build(workdir: Path):
    deps = {name: importlib.metadata.version(name) for name in ("harbor", "pydantic", "pydantic-core")}
    deps["python"] = platform.python_version()
    oracle = kit.Candidate("harbor", HARBOR_VERSION, homepage="https://pypi.org/project/harbor/", dependencies=deps)
    oracle.surface("reward.parse")(RewardParse(workdir / "reward.parse"))
    oracle.surface("metric.compute")(metric_compute)
    oracle.surface("pass_at_k")(pass_at_k)
    runner = harbor_job.TrialRunner(workdir / "trials")
    oracle.surface("multi_step.reward")(harbor_job.MultiStepReward(runner))
    job_result = harbor_job.JobResultSurface(runner)

    @oracle.surface("job.result")
    def _job_result(request: dict[str, Any]) -> Any:
        with kit.working_folder(request.get("scripts")):  # where a uv-script metric's script_path resolves
            return job_result(request)

    @oracle.surface("outcome.summary")
    def _outcome_summary(request: dict[str, Any]) -> Any:
        job = request.get("job")
        if job is not None:
            with kit.working_folder(job.get("scripts")):
                summary = job_result.read_after(job, agent_challenge.summarize)
        else:
            present = request.get("result_json") is not None
            with kit.working_folder({"result.json": request["result_json"]} if present else None):
                summary = agent_challenge.summarize(Path("result.json"))
        return {"summary": summary, "line": agent_challenge.result_line(summary)}

    # agent-challenge and evsys-sdk are not on PyPI: their oracles are transcriptions, run here on CPython 3.12.
    oracle.surface("reason.normalize")(reason_normalize)
    oracle.surface("evsys.metric")(evsys_sdk.compute)
    return oracle


def main() -> None:
    # serve() returns on `stop` or end of input, and the interpreter then exits
    # normally: under `coverage run` that is when the data file is written (an
    # exit hook, which os._exit or a kill would skip).
    workdir = Path(tempfile.mkdtemp(prefix="harbor-oracle-"))
    try:
        build(workdir).serve()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
