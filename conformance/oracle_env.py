"""Cached virtualenvs that hold one harbor release each.

An environment lives outside the repository, under the user cache directory,
keyed by harbor version and the hash of the lock that built it, so a changed
lock never reuses a stale environment. Creation is atomic (build in a
temporary folder, rename into place) and serialised by a file lock, so
parallel pytest-xdist workers share one environment.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import platformdirs

PYTHON_SERIES = "3.12"


class OracleSetupError(RuntimeError):
    """The oracle environment cannot be created; the message says what to do."""


@dataclass(frozen=True)
class OracleEnv:
    harbor_version: str
    root: Path
    lock_hash: str

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"


def cache_root() -> Path:
    override = os.environ.get("HARBOR_CONFORMANCE_CACHE")
    base = Path(override) if override else Path(platformdirs.user_cache_dir("harbor-conformance"))
    return base / "oracle-envs"


def lock_path(harbor_version: str) -> Path | None:
    """The committed lock for a harbor version, if the suite ships one."""
    candidate = resources.files("oracles") / f"harbor-{harbor_version}.lock"
    path = Path(str(candidate))
    return path if path.is_file() else None


def uv_binary() -> str:
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found:
            return found
    raise OracleSetupError("uv is not available: `pip install uv` (it is a dependency of this package)")


def find_python(series: str = PYTHON_SERIES) -> str:
    """A CPython interpreter of the given series, from PATH or pyenv."""
    override = os.environ.get("HARBOR_CONFORMANCE_PYTHON")
    candidates = [override] if override else []
    candidates.append(shutil.which(f"python{series}"))
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates.extend(
        str(p) for p in sorted((pyenv_root / "versions").glob(f"{series}.*/bin/python{series}"), reverse=True)
    )
    for exe in candidates:
        if exe and _reports_series(exe, series):
            return exe
    raise OracleSetupError(
        f"the oracle needs CPython {series} and none was found on PATH or under {pyenv_root}.\n"
        f"Install one, for example `pyenv install {series}` or your system's `python{series}` "
        f"package, or point HARBOR_CONFORMANCE_PYTHON at an interpreter."
    )


def _reports_series(exe: str, series: str) -> bool:
    try:
        out = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip() == series


@contextmanager
def _locked(path: Path):
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
    requirement = workdir / "requirements.in"
    requirement.write_text(f"harbor=={harbor_version}\n")
    resolved = workdir / f"harbor-{harbor_version}.lock"
    _run(
        [uv_binary(), "pip", "compile", str(requirement), "--python-version", PYTHON_SERIES,
         "--generate-hashes", "--no-header", "--quiet", "-o", str(resolved)],
        f"resolving harbor=={harbor_version}",
    )
    return resolved


def ensure(harbor_version: str, *, log=lambda message: None) -> OracleEnv:
    """Return the environment for this harbor release, creating it on first use."""
    root = cache_root()
    with _locked(root / f".harbor-{harbor_version}.lock"):
        shipped = lock_path(harbor_version)
        if shipped is not None:
            digest = hashlib.sha256(shipped.read_bytes()).hexdigest()[:16]
            env = OracleEnv(harbor_version, root / f"harbor-{harbor_version}-{digest}", digest)
            if (env.root / "conformance-env.json").is_file():
                return env
        else:
            existing = sorted(root.glob(f"harbor-{harbor_version}-*/conformance-env.json"))
            if existing:
                meta = json.loads(existing[-1].read_text())
                return OracleEnv(harbor_version, existing[-1].parent, meta["lock_hash"])
        return _create(harbor_version, root, log)


def _create(harbor_version: str, root: Path, log) -> OracleEnv:
    # Built in place (venv scripts hold absolute paths); the marker file is
    # written last, so a half-built environment is never taken for a whole one.
    workdir = root / f".resolve-harbor-{harbor_version}-{os.getpid()}"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    try:
        python = find_python()
        lock = _requirements(harbor_version, workdir)
        digest = hashlib.sha256(lock.read_bytes()).hexdigest()[:16]
        env = OracleEnv(harbor_version, root / f"harbor-{harbor_version}-{digest}", digest)
        log(f"creating the harbor {harbor_version} oracle environment in {env.root} (first use only)")
        shutil.rmtree(env.root, ignore_errors=True)
        uv = uv_binary()
        _run([uv, "venv", "--quiet", "--python", python, str(env.root)], "creating the virtualenv")
        _run(
            [uv, "pip", "sync", "--quiet", "--python", str(env.python), "--require-hashes", str(lock)],
            f"installing harbor=={harbor_version}",
        )
        shutil.copy(lock, env.root / "harbor.lock")
        (env.root / "conformance-env.json").write_text(
            json.dumps({"harbor": harbor_version, "lock_hash": digest, "python": python}, indent=2)
        )
        return env
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
