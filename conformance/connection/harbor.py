"""``harbor==VERSION``: a harbor release's own code behind the protocol, in its cached virtualenv.

The oracle is one such connection (``harbor==0.13.1``); the upgrade gate
connects to other releases the same way.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from conformance import shipped
from conformance.connection.base import HARBOR_MIN_TIMEOUT, ConnectError, Connection, Settings, silent
from conformance.connection.process import Subprocess
from conformance.connection.spec import HARBOR_KIND, Spec, harbor_release
from conformance.core import surfaces
from conformance.kit import wire
from conformance.oracle import environments


def kit_dir() -> Path:
    """The candidate kit's folder: the adapter loads it by path inside harbor's environment."""
    return Path(wire.__file__).resolve().parent


def adapter_path() -> Path:
    return shipped.oracle_file("harbor_adapter.py")


def surface_arguments() -> list[str]:
    """``NAME=FOLDER`` for each registered surface the harbor oracle serves (its folder has a harbor.py)."""
    return [f"{s.name}={s.folder}" for s in surfaces.SURFACES.values() if s.harbor_side is not None]


def harbor_argv(harbor_version: str, *, coverage_data: Path | None = None,
                log: Callable[[str], object] = silent) -> list[str]:
    """The command that runs harbor's own code for one release behind the protocol.

    With ``coverage_data``, the adapter runs under coverage.py (line and branch)
    in the instrumented environment, measuring harbor's package only; the data
    is written to that file when the adapter exits normally (after ``stop``).
    """
    env = environments.ensure(harbor_version, coverage=coverage_data is not None, log=log)
    # -I: nothing from the harness's environment leaks into harbor's (it drops
    # PYTHON* variables, user site and the script's directory, not the venv's
    # site-packages, so `-m coverage` still imports; coverage's runner leaves
    # sys.path[0] alone under -I as well);
    # -X utf8: reward files decode as UTF-8 whatever the machine's locale.
    python = [str(env.python), "-I", "-X", "utf8"]
    if coverage_data is None:
        return [*python, str(adapter_path()), str(kit_dir()), *surface_arguments()]
    harbor_dir = env.package_dir("harbor").resolve()
    # --append: if the adapter is restarted after a crash, the new process adds
    # to what the old one saved instead of erasing it. Only one process runs at
    # a time, so coverage's `parallel` mode (one file per process) is not needed.
    # A process killed after a timeout saves nothing (SIGKILL skips atexit).
    return [*python, "-m", "coverage", "run", "--branch", "--append",
            f"--data-file={Path(coverage_data).resolve()}", f"--include={harbor_dir}/*",
            str(adapter_path()), str(kit_dir()), *surface_arguments()]


class HarborConnector:
    kind = HARBOR_KIND
    usage = "harbor==VERSION"
    description = "a harbor release in its cached virtualenv (the oracle is one)"

    def target(self, text: str) -> str | None:
        return harbor_release(text)

    def connect(self, spec: Spec, settings: Settings) -> Connection:
        """The release's adapter, started in its environment. An environment that is broken in itself (harbor does
        not import in it) is made again once; one still broken then is an error naming it and how to remove it."""
        try:
            return self._start(spec, settings)
        except ConnectError:
            env = self._environment(spec, settings)
            problem = environments.broken(env)
            if problem is None:
                raise  # the environment imports harbor: what failed is not the environment
        settings.log(f"the harbor {spec.target} environment in {env.root} is broken ({problem}): making it again")
        try:
            environments.rebuild(env, log=settings.log)
            return self._start(spec, settings)
        except (ConnectError, environments.OracleSetupError) as e:
            still = environments.broken(self._environment(spec, settings))
            if still is None:
                raise ConnectError(str(e)) from None
            remove = shlex.join(["rm", "-rf", str(env.root)])
            raise ConnectError(f"{spec}: the oracle environment in {env.root} is broken ({still}), and still after it "
                               f"was made again; remove it (`{remove}`) and run again, which makes it anew") from None

    def _environment(self, spec: Spec, settings: Settings) -> environments.OracleEnv:
        try:
            return environments.ensure(spec.target, coverage=settings.coverage_data is not None, log=settings.log)
        except environments.OracleSetupError as e:
            raise ConnectError(str(e)) from None

    def _start(self, spec: Spec, settings: Settings) -> Connection:
        try:
            argv = harbor_argv(spec.target, coverage_data=settings.coverage_data, log=settings.log)
        except environments.OracleSetupError as e:
            raise ConnectError(str(e)) from None
        return Subprocess(spec, argv, settings, env=environments.script_environment(),
                          timeout=max(settings.timeout, HARBOR_MIN_TIMEOUT) * settings.timeout_multiplier)
