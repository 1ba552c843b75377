"""job.result on the oracle's side: a whole job through harbor's ``Job.create(config).run()``.

Runs inside the oracle's virtualenv (standard library, harbor, and the
oracle folder's scripted sandbox ``harbor_job``), loaded by path by
``oracles/harbor_adapter.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import harbor_job

if TYPE_CHECKING:  # the adapter's Context (oracles/harbor_adapter.py) and harbor's models, for the type check only
    from conformance_kit.candidate import Handler
    from harbor.job import Job
    from harbor.models.job.config import JobConfig, RetryConfig
    from harbor.models.trial.config import EnvironmentConfig
    from harbor.trial.hooks import TrialHookEvent
    from harbor_adapter import Context

_Read = TypeVar("_Read")


def _registry_entry(name: str, version: str, metrics: list[Any], task_dirs: list[Path]) -> dict[str, Any]:
    return {"name": name, "version": version, "description": "", "metrics": metrics,
            "tasks": [{"name": task_dir.name, "path": str(task_dir)} for task_dir in task_dirs]}


class JobResultSurface:
    """job.result: a whole job through harbor's ``Job.create(config).run()``.

    Request (see ``JobResultInput`` in this folder's ``__init__.py``): ``agents``
    (name, model), ``n_attempts``, ``retry`` (a retry policy), the job's
    ``metrics``, ad-hoc ``tasks`` and registry ``datasets`` (name, metrics,
    tasks); a task is ``{name, trials: [phase, ...]}``, its trials' runs in
    the job's order (attempt, then agent; a retry right after its run).

    Datasets are served from a local registry.json (one entry each, version
    "1.0"), the way a registry lists them; task folders are
    ``tasks/<group>/<name>`` so two datasets may both hold a task "a". The job
    runs with one trial at a time, no retries unless the request has a
    policy (then no wait between runs), its trials in harbor's own order.
    Output: harbor's ``result.json`` as written, cut to its scoring part
    (``n_retries`` only with a retry policy), and each trial's ``result.json``
    verifier result and exception type; trial names (random) become
    ``trial-<i>``, their index in that order. When a trial is cancelled,
    ``Job.run`` raises CancelledError: the output is then the result.json as
    last written and the trials that started, in the order they started.
    ``snapshots``: every result.json the job wrote, in order, each cut as a
    live viewer reads it (its counts, whether ``finished_at`` is set, evals).
    """

    VERSION = "1.0"

    def __init__(self, runner: harbor_job.TrialRunner) -> None:
        self.runner = runner

    @staticmethod
    def _task_groups(request: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
        groups = [("adhoc", request.get("tasks") or [])]
        groups += [(f"dataset-{i}", d.get("tasks") or []) for i, d in enumerate(request.get("datasets") or [])]
        return groups

    def _script(self, request: dict[str, Any], folder: Path) -> harbor_job.Script:
        return harbor_job.Script({folder / "tasks" / group / task["name"]: list(task.get("trials") or [])
                       for group, tasks in self._task_groups(request) for task in tasks})

    def _config(self, request: dict[str, Any], folder: Path, environment: EnvironmentConfig) -> JobConfig:
        from harbor.models.job.config import DatasetConfig, JobConfig, RetryConfig
        from harbor.models.trial.config import AgentConfig, TaskConfig

        dirs = {group: [harbor_job.write_task(folder / "tasks" / group, task["name"]) for task in tasks]
                for group, tasks in self._task_groups(request)}
        datasets = request.get("datasets") or []
        registry = folder / "registry.json"
        registry.write_text(json.dumps([
            _registry_entry(d["name"], self.VERSION, d.get("metrics") or [], dirs[f"dataset-{i}"])
            for i, d in enumerate(datasets)
        ]))
        return JobConfig(
            job_name="job", jobs_dir=folder / "jobs", n_attempts=request.get("n_attempts", 1),
            n_concurrent_trials=1, quiet=True, retry=self._retry(request.get("retry"), RetryConfig),
            agents=[AgentConfig(import_path=harbor_job.AGENT_IMPORT_PATH, model_name=a.get("model"),
                                kwargs={"agent_name": a["name"]}) for a in request["agents"]],
            environment=environment,
            metrics=request.get("metrics") or [],
            tasks=[TaskConfig(path=path, source=task.get("source"))
                   for path, task in zip(dirs["adhoc"], request.get("tasks") or [], strict=True)],
            datasets=[DatasetConfig(name=d["name"], version=self.VERSION, registry_path=registry) for d in datasets],
        )

    @staticmethod
    def _retry(retry: dict[str, Any] | None, retry_config: type[RetryConfig]) -> RetryConfig:
        """The job's RetryConfig: none without ``retry``; else its policy, with no wait between runs.

        An ``exclude_exceptions`` left out (or null) keeps harbor's default set.
        The wait (``min_wait_sec`` and up) is never part of what is written.
        """
        if retry is None:
            return retry_config(max_retries=0)
        policy = {key: retry[key] for key in ("max_retries", "include_exceptions", "exclude_exceptions")
                  if retry.get(key) is not None}
        return retry_config(**policy, min_wait_sec=0.0, max_wait_sec=0.0)

    @staticmethod
    async def _run_job(config: JobConfig, with_retries: bool = False) -> dict[str, Any]:
        from harbor.job import Job

        writes: list[bytes] = []  # each result.json the job writes, as written
        job = await Job.create(config)
        # Each trial's name, in the order the trials start (a retry starts its trial again).
        started: dict[str, None] = {}

        async def on_start(event: TrialHookEvent) -> None:
            started.setdefault(event.config.trial_name, None)  # (trial_id is a UUID from 0.25.0 on)

        job.on_trial_started(on_start)
        task = asyncio.current_task()
        assert task is not None
        harbor_job.script_of(config.environment.kwargs["script"]).interrupt = task.cancel
        try:
            with _observing_writes(writes):
                result = await job.run()
            finished = [trial.trial_name for trial in result.trial_results]
        except asyncio.CancelledError:
            # A cancelled trial makes Job.run raise once every trial left has run, or at once when the
            # job itself is cancelled: what the job wrote is its result.json as last written, and the
            # result.json of each trial that started.
            if task.cancelling():
                task.uncancel()
            finished = list(started)
        names = {name: f"trial-{i}" for i, name in enumerate(finished)}
        return _written(config.jobs_dir / config.job_name, finished, names, with_retries, writes)

    @staticmethod
    async def _run_resumed(config: JobConfig, resume: dict[str, Any], with_retries: bool) -> dict[str, Any]:
        """Run the job until ``stop_after``, alter its folder, resume it with ``harbor jobs resume``.

        The resume is harbor's CLI command itself (``harbor.cli.jobs.resume``),
        so which trials its filter removes is harbor's doing. It runs the job
        under its own ``asyncio.run``, which cannot start inside the loop
        running this coroutine: it runs in a thread of its own.
        """
        from harbor.cli.jobs import resume as harbor_resume
        from harbor.job import Job

        script = harbor_job.script_of(config.environment.kwargs["script"])
        job = await Job.create(config)
        started: dict[str, None] = {}

        async def on_start(event: TrialHookEvent) -> None:
            started.setdefault(event.config.trial_name, None)

        job.on_trial_started(on_start)
        task = asyncio.current_task()
        assert task is not None
        script.interrupt, script.stop_after = task.cancel, resume.get("stop_after")
        try:
            await job.run()
        except asyncio.CancelledError:  # stopped part-way, or a trial cancelled: the folder is resumed all the same
            if task.cancelling():
                task.uncancel()
        script.interrupt, script.stop_after = None, None
        earlier = list(started)
        job_dir = config.jobs_dir / config.job_name
        for change in resume.get("trial_results") or []:
            _change_file(job_dir / earlier[change["trial"]] / "result.json", change.get("replace"))
        if resume.get("job_result") is not None:
            _change_file(job_dir / "result.json", resume["job_result"].get("replace"))

        writes: list[bytes] = []  # each result.json the resumed job writes, as written

        def resume_job() -> BaseException | None:
            try:
                with _listed_in_order(job_dir, earlier), _observing_writes(writes):
                    harbor_resume(job_path=job_dir, filter_error_types=resume.get("filter_error_types",
                                                                                  ["CancelledError"]))
            except BaseException as error:  # a CancelledError too: it is the resumed job's, not this task's
                return error
            return None

        error = await asyncio.to_thread(resume_job)
        if error is not None and not isinstance(error, asyncio.CancelledError):
            raise error
        # From 0.16.0 on, harbor skips a trial folder whose result.json it cannot read, and runs the trial
        # again: kept is what the resumed job counts, which its own TrialResult decides.
        kept = [name for name in earlier if (job_dir / name).is_dir() and _reads_back(job_dir / name / "result.json")]
        # The resumed run's trials, in the order they started (one at a time: a trial's last run
        # starts before the next trial's first).
        ran = sorted((path.name for path in job_dir.iterdir() if path.is_dir() and path.name not in started
                      and (path / "result.json").is_file()),
                     key=lambda name: json.loads((job_dir / name / "result.json").read_bytes())["started_at"])
        names = {name: f"trial-{i}" for i, name in enumerate([*earlier, *ran])}
        done = _written(job_dir, [*kept, *ran], names, with_retries, writes)
        return {**done, "resumed": {"ran": [names[n] for n in ran], "kept": [names[n] for n in kept],
                                    "removed": [names[n] for n in earlier if not (job_dir / n).is_dir()]}}

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        with_retries = request.get("retry") is not None
        resume = request.get("resume")
        if resume is not None:
            return self.runner.run(lambda folder, env: self._config(request, folder, env),
                                   lambda folder: self._script(request, folder),
                                   lambda config: self._run_resumed(config, resume, with_retries))
        return self.runner.run(lambda folder, env: self._config(request, folder, env),
                               lambda folder: self._script(request, folder),
                               lambda config: self._run_job(config, with_retries))

    def read_after(self, request: dict[str, Any], read: Callable[[Path], _Read]) -> _Read:
        """``read(path of the job's result.json)`` once the job has finished, failed, or been refused.

        What a job leaves behind is read whatever became of it: a job that
        fails mid-way leaves the result.json it last wrote; one harbor refuses
        (its config, its metrics) leaves none.
        """
        folders: list[Path] = []

        def config_for(folder: Path, environment: EnvironmentConfig) -> JobConfig | None:
            folders.append(folder)
            try:
                return self._config(request, folder, environment)
            except Exception:  # harbor refused the job before it ran
                return None

        async def run_then_read(config: JobConfig | None) -> _Read:
            from harbor.job import Job

            if config is not None:
                task = asyncio.current_task()
                assert task is not None
                harbor_job.script_of(config.environment.kwargs["script"]).interrupt = task.cancel
                try:
                    await (await Job.create(config)).run()
                except asyncio.CancelledError:  # a trial, or the job, was cancelled
                    if task.cancelling():
                        task.uncancel()
                except Exception:  # the job failed; what it wrote so far is what is read
                    pass
            return read(folders[0] / "jobs" / "job" / "result.json")

        return self.runner.run(config_for, lambda folder: self._script(request, folder), run_then_read)


_EVAL_FIELDS = ("n_trials", "n_errors", "metrics", "pass_at_k", "reward_stats", "exception_stats")
# A written result.json's progress counts, in the order harbor's JobStats has them.
# A snapshot's evals: no reward or exception lists (LiveEvalStats in __init__.py says why).
_LIVE_EVAL_FIELDS = ("n_trials", "n_errors", "metrics")
_PROGRESS_COUNTS = ("n_completed_trials", "n_errored_trials", "n_running_trials", "n_pending_trials",
                    "n_cancelled_trials", "n_retries")


def _evals(stats: dict[str, Any], fields: tuple[str, ...] = _EVAL_FIELDS) -> dict[str, Any]:
    return {key: {field: ev[field] for field in fields} for key, ev in stats["evals"].items()}


def _snapshot(written: dict[str, Any]) -> dict[str, Any]:
    """One written result.json, cut to what a live viewer reads: the counts, whether it is final, the evals."""
    stats = written["stats"]
    return {
        "n_total_trials": written["n_total_trials"],
        "finished": written.get("finished_at") is not None,
        "stats": {**{count: stats[count] for count in _PROGRESS_COUNTS},
                  "evals": _evals(stats, _LIVE_EVAL_FIELDS)},
    }


@contextlib.contextmanager
def _observing_writes(writes: list[bytes]) -> Iterator[None]:
    """While it lasts, each result.json a harbor Job writes is read back and added to ``writes``.

    Observing only: every write of the job's result.json, at its start, when
    a trial starts, ends or has its cancellation requested, and at its end,
    goes through ``Job._write_job_result`` in every release the adapter
    serves (the hooks' writes run it in a worker thread, through
    ``_write_job_result_async``). Reading the file back right after, in the
    same call, sees each write whole and in order, whatever harbor puts in
    it; harbor's own method still does the writing. The method is wrapped on
    the class, not a subclass, so a job that harbor's own command creates (a
    resume) is observed too; the oracle runs one input at a time.
    """
    from harbor.job import Job

    write = Job._write_job_result

    def observed(self: Job, *, exclude_trial_results: bool = False) -> None:
        write(self, exclude_trial_results=exclude_trial_results)
        writes.append(self._job_result_path.read_bytes())

    Job._write_job_result = observed  # type: ignore[method-assign]
    try:
        yield
    finally:
        Job._write_job_result = write  # type: ignore[method-assign]


def _written(job_dir: Path, trial_names: list[str], names: dict[str, str], with_retries: bool,
             writes: list[bytes]) -> dict[str, Any]:
    """The scoring part of the job's result.json and of the named trials' own, and each of ``writes`` (the
    job's result.json as written while it ran), trial names as ``names`` has them."""
    written = json.loads((job_dir / "result.json").read_bytes(), object_pairs_hook=_KeepDuplicates(names))
    trials = []
    for trial_name in trial_names:
        on_disk = json.loads((job_dir / trial_name / "result.json").read_bytes(),
                             object_pairs_hook=_KeepDuplicates(names))
        info = on_disk.get("exception_info")
        trials.append({
            "trial": names[trial_name],
            "task_name": on_disk["task_name"],
            "source": on_disk.get("source"),
            "agent": on_disk["agent_info"]["name"],
            "verifier_result": on_disk.get("verifier_result"),
            "exception_type": None if info is None else info["exception_type"],
        })
    stats = written["stats"]
    counts = ("n_completed_trials", "n_errored_trials", "n_cancelled_trials",
              *(("n_retries",) if with_retries else ()))
    return {
        "n_total_trials": written["n_total_trials"],
        "stats": {
            **{count: stats[count] for count in counts},
            "evals": _evals(stats),
        },
        "trials": trials,
        "snapshots": [_snapshot(json.loads(data, object_pairs_hook=_KeepDuplicates(names))) for data in writes],
    }


def _reads_back(path: Path) -> bool:
    """Whether harbor's TrialResult reads the trial result.json at ``path``."""
    from harbor.models.trial.result import TrialResult

    try:
        TrialResult.model_validate_json(path.read_bytes())
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        return False
    return True


def _change_file(path: Path, replace: bytes | None) -> None:
    """A result.json replaced by ``replace``, or removed (None)."""
    if replace is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(replace)


@contextlib.contextmanager
def _listed_in_order(job_dir: Path, order: list[str]) -> Iterator[None]:
    """While inside, ``job_dir`` lists its earlier trials' folders in the order they started, then the rest by name.

    harbor reads an existing job's trials in the order the folder lists them
    (``Path.iterdir``), which the file system decides and which differs from
    one run to the next; it orders the stats a resumed job writes (reward
    buckets and their names, the sums of metrics). A fixed order, one a file
    system may well give, makes the oracle's answer one thing.
    """
    original = Path.iterdir
    rank = {name: i for i, name in enumerate(order)}

    def iterdir(self: Path) -> Iterator[Path]:
        if self != job_dir:
            return original(self)
        return iter(sorted(original(self), key=lambda path: (rank.get(path.name, len(rank)), path.name)))

    Path.iterdir = iterdir  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        Path.iterdir = original  # type: ignore[method-assign]


class _KeepDuplicates:
    """A json object_pairs_hook: trial names become ``trial-<i>``; a key written twice is kept.

    harbor writes one key twice when two reward values are unequal yet print
    alike (two NaN rewards are two dict keys): the kit's ``distinct_keys``
    keeps the n-th repeat as ``<key> (n)``.
    """

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def _value(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.names.get(item, item) if isinstance(item, str) else item for item in value]
        return value

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        from conformance_kit.candidate import distinct_keys  # the suite's kit, loaded by harbor_adapter.py

        return distinct_keys([(key, self._value(value)) for key, value in pairs])


def serve(context: Context) -> Handler:
    job_result = JobResultSurface(context.runner())

    def answer(request: dict[str, Any]) -> Any:
        with context.kit.working_folder(request.get("scripts")):  # where a uv-script metric's script_path resolves
            return job_result(request)

    return answer
