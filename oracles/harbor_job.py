"""harbor trials in-process: harbor's own Trial and Verifier code over a scripted sandbox.

Loaded by ``harbor_adapter.py`` from its own folder, inside the oracle's
virtualenv, and registered in ``sys.modules`` as ``harbor_job``: harbor
imports the environment class by name (``EnvironmentConfig.import_path =
"harbor_job:ScriptedEnvironment"``).

Nothing of harbor's scoring is re-implemented: a trial is built with
``TrialConfig`` and run with ``Trial.create(...).run()``, as a Job does for
each of its trials; the scripted agent does nothing (or raises where
told), and the environment only plays back what each trial's verifier
leaves in its verifier dir (``reward.txt`` / ``reward.json`` bytes) or
which exception its test script raises. Everything else (which Trial class
runs, how steps are aggregated, what is recorded as an exception) is
harbor's.

The pieces, for any surface that needs real trials:

* :class:`ScriptedEnvironment`: a harbor ``BaseEnvironment`` (mounted, no
  container) that plays back a :class:`Script`.
* :func:`write_task`: one task directory (single- or multi-step).
* :class:`TrialRunner`: runs one ``TrialConfig`` per call on a persistent
  event loop, in a fresh folder that is removed afterwards,
  with nothing written to stdout (the protocol channel) and harbor's log
  handlers removed again.

The surfaces that run real trials (``multi_step.reward``, ``job.result``)
build on these in their folders' ``harbor.py``.

harbor's ``harbor.trial`` imports litellm (seconds); it is imported on the
first trial, not when this module loads, so serving the other surfaces does
not wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

# Before anything imports litellm (harbor.trial -> harbor.agents): use the cost
# map bundled with litellm instead of fetching it over the network at import.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from harbor.agents.base import BaseAgent  # noqa: E402
from harbor.environments.base import BaseEnvironment, ExecResult  # noqa: E402
from harbor.environments.capabilities import EnvironmentCapabilities  # noqa: E402
from harbor.models.trial.paths import EnvironmentPaths, TrialPaths  # noqa: E402

if TYPE_CHECKING:  # harbor.trial's modules import litellm (seconds): at run time, on the first trial only
    from harbor.models.trial.config import EnvironmentConfig, TrialConfig
    from harbor.models.trial.result import TrialResult

MODULE_NAME = "harbor_job"
ENVIRONMENT_IMPORT_PATH = f"{MODULE_NAME}:ScriptedEnvironment"
AGENT_IMPORT_PATH = f"{MODULE_NAME}:ScriptedAgent"

# A phase: {"reward_txt": bytes, "reward_json": bytes, "raises": "timeout" | <exception class name>,
# "raises_in": "environment" | "agent_setup" | "agent" | "verifier" (the default)}.
# Absent / None reward keys write no file. "raises" makes that stage raise; raised by the verifier's
# test script, no files are written; raised earlier, the verifier writes them if harbor still runs it.
# "raises": "interrupt" cancels the running job while that stage runs (see act_if_scripted).
# A step of a multi-step trial: {"reward_txt", "reward_json", "raises" (its test script),
# "agent_raises" (the agent's run in that step), "min_reward" (its task.toml threshold)}.
Phase = dict[str, Any]


def scripted_exception(name: str) -> BaseException:
    """The exception a scripted ``raises`` names: "timeout" is TimeoutError (asyncio's too).

    A harbor error class harbor treats specially (``NonZeroAgentExitCodeError``)
    is harbor's own; any other unknown name is a fresh class of that name.
    """
    message = "scripted failure"
    if name in ("timeout", "TimeoutError"):
        return TimeoutError(message)  # asyncio.TimeoutError is this class (3.11+)
    if name == "CancelledError":
        return asyncio.CancelledError(message)  # what a cancelled await raises (a BaseException)
    if name == "NonZeroAgentExitCodeError":
        from harbor.agents.installed.base import NonZeroAgentExitCodeError

        return NonZeroAgentExitCodeError(message)
    builtin = getattr(__import__("builtins"), name, None)
    if isinstance(builtin, type) and issubclass(builtin, Exception):
        return builtin(message)
    made: type[Exception] = type(name, (Exception,), {})
    return made(message)  # recorded as exception_type == name


def raise_if_scripted(phase: Phase, stage: str) -> None:
    if phase.get("raises") is not None and (phase.get("raises_in") or "verifier") == stage:
        raise scripted_exception(phase["raises"])


INTERRUPT = "interrupt"


async def act_if_scripted(phase: Phase, stage: str, script: Script) -> None:
    """What ``stage`` does as scripted: raise, or (``interrupt``) have the job cancelled while it runs.

    ``interrupt`` is what Ctrl-C does to a running job: asyncio cancels the
    task that runs ``Job.run``, its TaskGroup cancels the trials, and this
    stage's pending await is where the running trial receives CancelledError.
    """
    if phase.get("raises") == INTERRUPT and (phase.get("raises_in") or "verifier") == stage:
        if script.interrupt is None:
            raise RuntimeError("an interrupt is scripted, but nothing runs a job to cancel")
        script.interrupt()
        await asyncio.get_running_loop().create_future()  # never done: cancelled with the job
    raise_if_scripted(phase, stage)


@dataclass
class Script:
    """What each trial's environment plays back: per task folder, one entry per trial of that task.

    An entry is a phase (single-step task) or ``{"steps": [phase, ...]}``
    (multi-step task: the n-th step's agent run and test script get the n-th
    phase). The n-th environment constructed for a task gets its n-th entry;
    with ``n_concurrent_trials=1`` that is the job's trial order, a retried
    trial's runs following each other.
    """

    attempts: dict[Path, list[dict[str, Any]]]
    _constructed: dict[Path, int] = field(default_factory=dict)
    # Cancels the task running the job (a scripted ``interrupt``); set by whatever runs the job.
    interrupt: Callable[[], Any] | None = None
    # Interrupt the job in the agent stage of the trial that starts after this many trials started
    # (a retry starts no new trial): a job stopped part-way, as Ctrl-C stops it.
    stop_after: int | None = None
    _trials_started: dict[str, None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.attempts = {Path(task_dir).resolve(): entries for task_dir, entries in self.attempts.items()}

    def next_attempt(self, task_dir: Path) -> dict[str, Any]:
        task_dir = Path(task_dir).resolve()
        index = self._constructed.get(task_dir, 0)
        self._constructed[task_dir] = index + 1
        attempts = self.attempts.get(task_dir, [])
        return attempts[index] if index < len(attempts) else {}

    def entry_for(self, task_dir: Path, trial_name: str) -> dict[str, Any]:
        """The next entry of ``task_dir`` for a run of ``trial_name``; an interrupt when ``stop_after`` says so.

        The interrupted trial takes up its entry all the same: a run of it
        had started when the job was stopped.
        """
        entry = self.next_attempt(task_dir)
        if trial_name in self._trials_started:
            return entry
        self._trials_started[trial_name] = None
        if self.stop_after is not None and len(self._trials_started) == self.stop_after + 1:
            return {"raises": INTERRUPT, "raises_in": "agent"}
        return entry


_SCRIPTS: dict[str, Script] = {}
_SCRIPT_KEYS = itertools.count()


def script_of(key: str) -> Script:
    """The script registered under ``key`` (an EnvironmentConfig's ``script`` kwarg)."""
    return _SCRIPTS[key]


@contextlib.contextmanager
def registered(script: Script) -> Iterator[str]:
    """The key under which ScriptedEnvironment finds ``script`` (its ``script`` kwarg), while inside."""
    key = f"script-{next(_SCRIPT_KEYS)}"
    _SCRIPTS[key] = script
    try:
        yield key
    finally:
        del _SCRIPTS[key]


def write_reward_files(paths: TrialPaths, files: Phase, *, replace: bool = True) -> None:
    """Write the given reward files (``reward_txt`` / ``reward_json`` bytes) into a trial's verifier dir.

    ``replace``: leave exactly those files (the other one removed); without it,
    as a test script does, the other file is left as it was.
    """
    paths.verifier_dir.mkdir(parents=True, exist_ok=True)
    for key, path in (("reward_txt", paths.reward_text_path), ("reward_json", paths.reward_json_path)):
        if files.get(key) is not None:
            path.write_bytes(files[key])
        elif replace:
            path.unlink(missing_ok=True)


_ENV_PATHS = EnvironmentPaths()
_FIND_EMPTY = re.compile(r"find (\S+) -mindepth 1 ")
_REMOVE = re.compile(r"^rm -f(?: --)? (.+)$")


def remove_mounted(command: str, host_path: Callable[[str], Path | None]) -> None:
    """Carry out ``rm -f -- FILES`` on the host files ``host_path(env_path)`` names (None: not mounted).

    harbor 0.25.0 on clears stale reward files so before the tests run; in a
    bind-mounted container that removes them on the host too.
    """
    removing = _REMOVE.match(command)
    for env_path in shlex.split(removing.group(1)) if removing else []:
        host = host_path(env_path)
        if host is not None:
            host.unlink(missing_ok=True)


class ScriptedEnvironment(BaseEnvironment):
    """A mounted sandbox that runs nothing: the test script's exec writes the scripted reward files.

    ``mounted=True``: harbor reads ``trial_paths.verifier_dir`` on the host
    directly (no download), as with a bind-mounted container.
    """

    def __init__(self, *args: Any, script: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.script = _SCRIPTS[script]
        self.attempt = self.script.entry_for(self.environment_dir.parent, self.trial_paths.trial_dir.name)
        self._agent_runs = 0

    @staticmethod
    def type() -> str:
        return "scripted"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(mounted=True, disable_internet=True, network_allowlist=True)

    def _validate_definition(self) -> None:
        pass  # no Dockerfile: nothing is built

    async def start(self, force_build: bool) -> None:
        await act_if_scripted(self.attempt, "environment", self.script)

    async def stop(self, delete: bool) -> None:
        pass

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        pass

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        pass

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        pass

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        pass

    def _host_dir(self, env_path: str) -> Path | None:
        """The host folder a mounted environment path is, if it is one."""
        mounts = {
            str(_ENV_PATHS.verifier_dir): self.trial_paths.verifier_dir,
            str(_ENV_PATHS.agent_dir): self.trial_paths.agent_dir,
            str(_ENV_PATHS.artifacts_dir): self.trial_paths.artifacts_dir,
        }
        return mounts.get(env_path.rstrip("/"))

    def _host_path(self, env_path: str) -> Path | None:
        """The host file a path inside a mounted environment folder is, if it is one."""
        parent, _, name = env_path.rstrip("/").rpartition("/")
        host = self._host_dir(parent)
        return host / name if host is not None and name else None

    def _step(self) -> Phase:
        """The phase of the step under way: each step runs the agent once, then its verifier."""
        steps = self.attempt["steps"]
        index = self._agent_runs - 1
        return steps[index] if 0 <= index < len(steps) else {}

    def agent_phase(self) -> Phase:
        """What the agent's next run does: the trial's phase, or the next step's ``agent_raises``."""
        self._agent_runs += 1
        if self.attempt.get("steps") is None:
            return self.attempt
        return {"raises": self._step().get("agent_raises"), "raises_in": "agent"}

    def _verifier_phase(self) -> Phase:
        return self.attempt if self.attempt.get("steps") is None else self._step()

    async def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
                   timeout_sec: int | None = None, user: str | int | None = None) -> ExecResult:
        if command == "pwd":
            return ExecResult(stdout="/app\n", stderr="", return_code=0)
        # empty_dirs(): emptying a mounted folder in the container empties it on the host.
        for quoted in _FIND_EMPTY.findall(command):
            host = self._host_dir(shlex.split(quoted)[0])
            if host is not None and host.is_dir():
                for child in host.iterdir():
                    shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        remove_mounted(command, self._host_path)
        if str(_ENV_PATHS.tests_dir / "test.") in command and not command.startswith("chmod "):
            phase = self._verifier_phase()
            await act_if_scripted(phase, "verifier", self.script)
            write_reward_files(self.trial_paths, phase, replace=False)
        return ExecResult(stdout="", stderr="", return_code=0)


class _InstanceName:
    """A ``name()`` callable on the class and on an instance."""

    def __get__(self, instance: ScriptedAgent | None, owner: type) -> Callable[[], str]:
        if instance is None:
            return lambda: owner.__name__
        return lambda: instance._agent_name


class ScriptedAgent(BaseAgent):
    """An agent that does nothing under any name: it raises where its trial's script says so.

    harbor records ``agent.name()`` as the trial's agent name (the evals key's
    first part); the built-in names would install real agents.
    """

    SUPPORTS_WINDOWS = True

    def __init__(self, *args: Any, agent_name: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._agent_name = agent_name

    # harbor declares name() a staticmethod. It records self.name() as the trial's agent; from 0.23.0 on
    # it also calls cls.name() before any instance exists (BaseAgent.parse_options logs it). The class
    # answers its own class name, an instance the name its job gave it: one code path for every release.
    name = _InstanceName()

    def version(self) -> str:
        return "1.0.0"

    # harbor passes the trial's environment, a ScriptedEnvironment (typed BaseEnvironment by harbor).
    async def setup(self, environment: Any) -> None:
        await act_if_scripted(environment.attempt, "agent_setup", environment.script)

    async def run(self, instruction: str, environment: Any, context: Any) -> None:
        # Once per trial, or once per step of a multi-step trial.
        phase = environment.agent_phase()
        # What the agent leaves in the (mounted) verifier folder, before it ends as scripted.
        left = phase.get("before_verifier")
        if left:
            write_reward_files(environment.trial_paths, left, replace=False)
        await act_if_scripted(phase, "agent", environment.script)


# -- tasks ------------------------------------------------------------------

def toml_string(text: str) -> str:
    """``text`` as a TOML basic string (every control character and DEL escaped)."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\' or code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def toml_number(value: int | float) -> str:
    """An int or float as a TOML number (``inf``, ``-inf``, ``nan`` as TOML spells them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return repr(value)  # an int in decimal; a float's repr is a TOML float ("1e-07", "1e+16", "-0.0")


def toml_value(value: Any) -> str:
    """A number, or a table of numbers (an inline table, its keys quoted), as TOML."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_string(k)} = {toml_number(v)}" for k, v in value.items()) + "}"
    return toml_number(value)


def write_task(root: Path, name: str, *, top_level: str = "", steps: Sequence[str] | None = None,
               step_keys: Sequence[dict[str, Any]] | None = None) -> Path:
    """A task folder ``root/name``: task.toml (``top_level`` keys), tests/test.sh, instruction(s).

    With ``steps``, a multi-step task: one ``[[steps]]`` table and one
    ``steps/<name>/instruction.md`` per step, in order; ``step_keys`` gives
    each step's table more keys (numbers or tables of numbers, e.g.
    ``min_reward``).
    """
    task = root / name
    (task / "tests").mkdir(parents=True)
    (task / "tests" / "test.sh").write_text("#!/bin/sh\n")
    toml = ['version = "1.0"', *([top_level.rstrip("\n")] if top_level else [])]
    if steps is None:
        (task / "instruction.md").write_text("do nothing\n")
    else:
        for i, step in enumerate(steps):
            toml += ["", "[[steps]]", f"name = {toml_string(step)}"]
            toml += [f"{key} = {toml_value(value)}" for key, value in (step_keys[i] if step_keys else {}).items()]
            (task / "steps" / step).mkdir(parents=True)
            (task / "steps" / step / "instruction.md").write_text(f"step {step}\n")
    (task / "task.toml").write_text("\n".join(toml) + "\n")
    return task


# -- jobs -------------------------------------------------------------------

def _harbor_logger() -> logging.Logger:
    from harbor.utils.logger import logger

    return logger


async def _create_and_run(config: TrialConfig) -> TrialResult:
    from harbor.trial.trial import Trial

    trial = await Trial.create(config)
    return await trial.run()


_Config = TypeVar("_Config")
_Result = TypeVar("_Result")


class TrialRunner:
    """Runs harbor trials one at a time, each in a fresh folder under ``base_dir``.

    ``base_dir`` must not lie under a folder holding a pyproject.toml (a
    ``uv run`` there would sync that project).
    """

    def __init__(self, base_dir: Path | None = None) -> None:
        self.base_dir = Path(base_dir) if base_dir is not None else None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _import_harbor(self) -> None:
        # The slow one-off import (harbor.trial -> agents -> litellm), done before the first trial.
        import harbor.trial.multi_step  # noqa: F401
        import harbor.trial.single_step  # noqa: F401
        import harbor.trial.trial  # noqa: F401

    @contextlib.contextmanager
    def folder(self) -> Iterator[Path]:
        """A fresh folder for one trial, removed afterwards."""
        if self.base_dir is not None:
            self.base_dir.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="harbor-trial-", dir=self.base_dir))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @overload
    def run(self, config_for: Callable[[Path, EnvironmentConfig], TrialConfig],
            script_for: Callable[[Path], Script]) -> TrialResult: ...

    @overload
    def run(self, config_for: Callable[[Path, EnvironmentConfig], _Config], script_for: Callable[[Path], Script],
            execute: Callable[[_Config], Awaitable[_Result]]) -> _Result: ...

    def run(self, config_for: Callable[[Path, EnvironmentConfig], Any], script_for: Callable[[Path], Script],
            execute: Callable[[Any], Awaitable[Any]] | None = None) -> Any:
        """Run harbor once in a fresh folder; returns what ``execute(config)`` returns.

        ``script_for(folder) -> Script`` says what the sandbox plays back;
        ``config_for(folder, environment_config)`` makes the config (a
        ``TrialConfig``, or a ``JobConfig`` for an ``execute`` that runs a
        job), with ``environment_config`` the ``EnvironmentConfig`` that plugs
        the script in. ``execute`` is a coroutine function, by default
        ``Trial.create(config).run()``. Whatever harbor raises propagates.
        """
        execute = execute or _create_and_run
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the protocol's; a first import prints nothing either
            if self._loop is None:
                self._import_harbor()
                self._loop = asyncio.new_event_loop()
        from harbor.models.trial.config import EnvironmentConfig

        logger = _harbor_logger()
        handlers_before = list(logger.handlers)
        loggers_before = set(logging.Logger.manager.loggerDict)
        try:
            with (self.folder() as folder, registered(script_for(folder)) as key,
                  contextlib.redirect_stdout(sys.stderr)):
                config = config_for(folder, EnvironmentConfig(import_path=ENVIRONMENT_IMPORT_PATH,
                                                              kwargs={"script": key}))
                return self._loop.run_until_complete(execute(config))
        finally:
            # A trial that fails early may leave handlers it added on harbor's logger.
            for handler in list(logger.handlers):
                if handler not in handlers_before:
                    logger.removeHandler(handler)
                    handler.close()
            # Each trial makes its own loggers (named after the trial); logging keeps every
            # logger ever made, so forget this trial's, or a long session grows by ~8 per trial.
            trial_loggers = f"{logger.name}.harbor.trial.trial."
            for name in set(logging.Logger.manager.loggerDict) - loggers_before:
                if name.startswith(trial_loggers):
                    del logging.Logger.manager.loggerDict[name]

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None
