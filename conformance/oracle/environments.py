"""Cached virtualenvs that hold one harbor release each.

An environment lives outside the repository, under the user cache directory,
keyed by harbor version and the hash of the lock that built it, so a changed
lock never reuses a stale environment. Creation is serialised by a file
lock, so parallel pytest-xdist workers share one environment, and a marker
file written last tells a whole environment from a half-built one.

``ensure(version, coverage=True)`` gives a second environment, in its own
directory (``harbor-<version>-<digest>-coverage``, the digest covering both
locks), that also holds coverage.py from ``oracles/coverage.lock``; the plain
oracle environment is never touched by it.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from conformance import shipped
from conformance.errors import ConfigurationError

PYTHON_SERIES = "3.12"
PYTHON_ENV = "HARBOR_CONFORMANCE_PYTHON"  # the oracle's interpreter, when set


class OracleSetupError(ConfigurationError):
    """The oracle environment cannot be created; the message says what to do."""


@dataclass(frozen=True)
class OracleEnv:
    harbor_version: str
    root: Path
    lock_hash: str
    coverage: bool = False

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def python_version(self) -> str:
        """The interpreter's full version, as the virtualenv recorded it ("" if it did not)."""
        try:
            config = (self.root / "pyvenv.cfg").read_text(encoding="utf-8")
        except OSError:
            return ""
        found = re.search(r"(?m)^version(?:_info)?\s*=\s*(\S+)", config)
        return found.group(1) if found else ""

    def package_dir(self, name: str) -> Path:
        """Where an installed top-level package lives, as the environment's interpreter finds it."""
        return _package_dir(str(self.python), name)


@functools.cache
def _package_dir(python: str, name: str) -> Path:
    # find_spec locates the package without importing (running) it.
    proc = subprocess.run(
        [python, "-I", "-c",
         "import importlib.util, sys; print(importlib.util.find_spec(sys.argv[1]).submodule_search_locations[0])",
         name],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise OracleSetupError(f"{name} is not installed in {python}:\n{proc.stderr.strip()[-2000:]}")
    return Path(proc.stdout.strip())


def suite_cache() -> Path:
    """The suite's folder in the user cache directory (``$HARBOR_CONFORMANCE_CACHE`` when set)."""
    override = os.environ.get("HARBOR_CONFORMANCE_CACHE")
    return Path(override) if override else Path(platformdirs.user_cache_dir("harbor-conformance"))


def cache_root() -> Path:
    return suite_cache() / "oracle-envs"


def lock_path(harbor_version: str) -> Path | None:
    """The committed lock for a harbor version, if the suite ships one (``oracles/locks/``)."""
    candidate = shipped.oracle_file("locks", f"harbor-{harbor_version}.lock")
    path = candidate
    return path if path.is_file() else None


def coverage_lock_path() -> Path:
    """The committed lock that adds coverage.py to an oracle environment."""
    return shipped.oracle_file("coverage.lock")


def lock_digest(lock: Path) -> str:
    """The digest an environment built from ``lock`` alone is named by (its answers' lock hash)."""
    return _digest([lock])


def _digest(locks: list[Path]) -> str:
    if len(locks) == 1:
        return hashlib.sha256(locks[0].read_bytes()).hexdigest()[:16]
    # Hash of the per-file hashes: no shifting of bytes between files gives the same digest.
    joined = b"".join(hashlib.sha256(lock.read_bytes()).digest() for lock in locks)
    return hashlib.sha256(joined).hexdigest()[:16]


def uv_binary() -> str:
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found:
            return found
    raise OracleSetupError("uv is not available: `pip install uv` (it is a dependency of this package)")


@functools.cache
def script_environment() -> dict[str, str]:
    """The process environment of the oracle and of exec candidates: uv on PATH, one Python for scripts.

    harbor runs ``uv run SCRIPT`` for uv-script metrics and needs ``uv`` on
    PATH; the suite provides its own. UV_PYTHON makes every side run a script
    with the oracle's CPython, so a script's result cannot differ by which
    Python each side happens to find. UV_NO_PROJECT keeps uv from looking for
    a project around the script: a working folder under a TMPDIR inside the
    user's project would otherwise have uv sync that project's environment
    with the oracle's CPython, replacing a ``.venv`` of another Python (the
    one the suite may be running from) and writing a ``uv.lock`` there.
    PYTHONDONTWRITEBYTECODE is left out: a script's dependencies live in
    uv's cached environment, kept from run to run, and without bytecode
    every run compiles what it imports again (numpy: 0.28 s a run, 0.11 s
    once its bytecode is written).
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if named := os.environ.get(PYTHON_ENV):
        _named_python(named, PYTHON_SERIES)  # set by hand, a wrong one is an error here, not a Python left out
    try:
        env["PATH"] = os.pathsep.join([str(Path(uv_binary()).parent), env.get("PATH", "")])
        env["UV_PYTHON"] = find_python()
    except OracleSetupError:
        pass  # nothing to run scripts with; a uv-script metric will say so when it runs
    env.setdefault("UV_NO_PROGRESS", "1")
    env["UV_NO_PROJECT"] = "1"
    return env


def find_python(series: str = PYTHON_SERIES) -> str:
    """A CPython interpreter of the given series: ``$HARBOR_CONFORMANCE_PYTHON`` when set (and then that one or
    an error), else from PATH or pyenv."""
    override = os.environ.get(PYTHON_ENV)
    if override:
        return _named_python(override, series)
    candidates = [shutil.which(f"python{series}")]
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates.extend(
        str(p) for p in sorted((pyenv_root / "versions").glob(f"{series}.*/bin/python{series}"), reverse=True)
    )
    for exe in candidates:
        if exe and _series_of(exe) == series:
            return exe
    raise OracleSetupError(
        f"the oracle needs CPython {series} and none was found on PATH or under {pyenv_root}.\n"
        f"Install one, for example `pyenv install {series}` or your system's `python{series}` "
        f"package, or point {PYTHON_ENV} at an interpreter."
    )


def _named_python(named: str, series: str) -> str:
    """The interpreter ``$HARBOR_CONFORMANCE_PYTHON`` names (a path, or a command on PATH), if it is a CPython of
    ``series``: set by hand, a wrong one is an error, never passed over for another interpreter."""
    found = shutil.which(named) if os.sep not in named else named
    path = Path(found or named)
    if found is None:
        problem = "which is no command on PATH"
    elif not path.exists():
        problem = "which does not exist"
    elif path.is_dir() or not os.access(path, os.X_OK):
        problem = "which is not an executable file"
    else:
        reported = _series_of(found)
        if reported == series:
            return found
        problem = f"which reports {reported}" if reported else "which does not run as a Python"
    raise OracleSetupError(
        f"{PYTHON_ENV} names {named}, {problem}; the oracle needs a CPython {series}.\n"
        f"Unset it (the suite then looks for python{series} on PATH and under pyenv), or point it at a "
        f"python{series}, for example `export {PYTHON_ENV}=\"$(uv python find {series})\"`."
    )


@functools.cache  # an interpreter's version does not change under a running process; asking costs a start-up
def _series_of(exe: str) -> str | None:
    """The ``X.Y`` an interpreter reports, None if it does not run as a Python."""
    try:
        out = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    reported = out.stdout.strip()
    return reported if out.returncode == 0 and re.fullmatch(r"\d+\.\d+", reported) else None


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise OracleSetupError(f"{what} failed ({' '.join(cmd)}):\n{proc.stderr.strip()[-4000:]}")


def _requirements(harbor_version: str, workdir: Path) -> Path:
    """The lock to install: the shipped one, or one resolved now for other releases."""
    shipped = lock_path(harbor_version)
    if shipped is not None:
        return shipped
    return resolve_lock(harbor_version, workdir / f"harbor-{harbor_version}.lock")


def resolve_lock(harbor_version: str, out: Path, overrides: Sequence[str] = ()) -> Path:
    """Resolve ``harbor==VERSION``'s whole dependency set for CPython 3.12, with hashes, into ``out``.

    ``overrides`` (requirement strings) replace what harbor asks for; a lock
    made with them says so in its first lines. They exist for an index that
    does not serve a dependency's newest release, and never for a package
    that takes part in scoring.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    requirement = out.with_suffix(".in")
    requirement.write_text(f"harbor=={harbor_version}\n")
    cmd = [uv_binary(), "pip", "compile", str(requirement), "--python-version", PYTHON_SERIES,
           "--generate-hashes", "--no-header", "--quiet", "-o", str(out)]
    override_file = out.with_suffix(".overrides")
    if overrides:
        override_file.write_text("".join(f"{line}\n" for line in overrides))
        cmd += ["--override", str(override_file)]
    try:
        _run(cmd, f"resolving harbor=={harbor_version}")
    finally:
        requirement.unlink(missing_ok=True)
        override_file.unlink(missing_ok=True)
    # uv names the input file by its path: keep the lock free of where it was made.
    text = re.sub(r"(?m)^(\s+# via -r ).*$", r"\1requirements.in", out.read_text())
    note = "".join(f"# override: {line} (replaces what harbor=={harbor_version} asks for)\n" for line in overrides)
    out.write_text(note + text)
    return out


def ensure(
    harbor_version: str, *, coverage: bool = False, log: Callable[[str], object] = lambda message: None
) -> OracleEnv:
    """Return the environment for this harbor release, creating it on first use.

    With ``coverage=True``, the environment that also holds coverage.py.
    """
    root = cache_root()
    suffix = "-coverage" if coverage else ""
    with _locked(root / f".harbor-{harbor_version}{suffix}.lock"):
        shipped = lock_path(harbor_version)
        if shipped is not None:
            digest = _digest([shipped, coverage_lock_path()] if coverage else [shipped])
            env = OracleEnv(harbor_version, root / f"harbor-{harbor_version}-{digest}{suffix}", digest, coverage)
            if (env.root / "conformance-env.json").is_file():
                return env
        else:
            # The plain and the coverage environments share the name prefix: tell them apart.
            existing = sorted(
                marker for marker in root.glob(f"harbor-{harbor_version}-*/conformance-env.json")
                if marker.parent.name.endswith("-coverage") == coverage
            )
            if existing:
                meta = json.loads(existing[-1].read_text())
                return OracleEnv(harbor_version, existing[-1].parent, meta["lock_hash"], coverage)
        return _create(harbor_version, root, log, coverage)


# What the oracle's own modules import first: if the environment's interpreter cannot, the environment is broken
# (a file gone from its site-packages, a half-removed package), whatever the adapter would have done.
_HEALTH_PROBE = "import harbor, harbor.models.job.result, harbor.verifier.verifier"


def broken(env: OracleEnv) -> str | None:
    """Why the environment cannot serve (its interpreter missing, or harbor not importing in it); None if it can."""
    try:
        proc = subprocess.run([str(env.python), "-I", "-c", _HEALTH_PROBE], capture_output=True, text=True,
                              timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"its interpreter does not run: {e}"
    if proc.returncode == 0:
        return None
    lines = proc.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit status {proc.returncode}"


def rebuild(env: OracleEnv, log: Callable[[str], object] = lambda message: None) -> OracleEnv:
    """The environment removed and made again from its lock."""
    root = env.root.parent
    suffix = "-coverage" if env.coverage else ""
    with _locked(root / f".harbor-{env.harbor_version}{suffix}.lock"):
        shutil.rmtree(env.root, ignore_errors=True)
        return _create(env.harbor_version, root, log, env.coverage)


def _create(harbor_version: str, root: Path, log: Callable[[str], object], coverage: bool = False) -> OracleEnv:
    # Built in place (venv scripts hold absolute paths); the marker file is
    # written last, so a half-built environment is never taken for a whole one.
    suffix = "-coverage" if coverage else ""
    workdir = root / f".resolve-harbor-{harbor_version}{suffix}-{os.getpid()}"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    try:
        python = find_python()
        lock = _requirements(harbor_version, workdir)
        locks = [lock, coverage_lock_path()] if coverage else [lock]
        digest = _digest(locks)
        env = OracleEnv(harbor_version, root / f"harbor-{harbor_version}-{digest}{suffix}", digest, coverage)
        what = "instrumented (coverage) oracle environment" if coverage else "oracle environment"
        log(f"creating the harbor {harbor_version} {what} in {env.root} (first use only)")
        shutil.rmtree(env.root, ignore_errors=True)
        uv = uv_binary()
        _run([uv, "venv", "--quiet", "--python", python, str(env.root)], "creating the virtualenv")
        _run(
            [uv, "pip", "sync", "--quiet", "--python", str(env.python), "--require-hashes", *map(str, locks)],
            f"installing harbor=={harbor_version}" + (" and coverage" if coverage else ""),
        )
        shutil.copy(lock, env.root / "harbor.lock")
        meta: dict[str, str | bool] = {"harbor": harbor_version, "lock_hash": digest, "python": python}
        if coverage:
            shutil.copy(locks[1], env.root / "coverage.lock")
            meta["coverage"] = True
        (env.root / "conformance-env.json").write_text(json.dumps(meta, indent=2))
        return env
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
