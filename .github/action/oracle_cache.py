"""Where the oracle's virtualenvs are cached, and the cache key they are saved under (for cache_key.sh).

Prints ``cache-dir=`` and ``cache-key=`` lines, in the format of ``$GITHUB_OUTPUT``.

The key names everything a cached environment depends on: the OS and machine, the oracle and the lock it
is installed from, the suite's version, and the very interpreter its virtualenv points at (a restored
environment whose Python has moved or changed version is broken, and would still be taken for whole).
Reads CONFORMANCE_ORACLE (default harbor==0.13.1), RUNNER_OS and RUNNER_ARCH, and whatever the suite
itself reads to find its cache and Python (HARBOR_CONFORMANCE_CACHE, HARBOR_CONFORMANCE_PYTHON).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import re
import subprocess

from conformance.oracle import environments

KEY_PREFIX = "harbor-conformance-oracle-v1"


def _interpreter() -> tuple[str, str]:
    """The oracle interpreter's version and real path, or ("none", "") when there is none."""
    try:
        python = environments.find_python()
        probe = "import os, platform, sys; print(platform.python_version()); print(os.path.realpath(sys.executable))"
        found = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
        version, path = found.stdout.splitlines()[:2]
    except (environments.OracleSetupError, subprocess.SubprocessError, OSError, ValueError):
        return "none", ""
    return version, path


def main() -> None:
    suite = importlib.metadata.version("harbor-conformance")
    oracle = os.environ.get("CONFORMANCE_ORACLE") or "harbor==0.13.1"
    release = re.fullmatch(r"harbor==(.+)", oracle)
    lock = environments.lock_path(release.group(1)) if release else None
    python_version, python_path = _interpreter()
    digest = hashlib.sha256()
    digest.update(lock.read_bytes() if lock is not None else b"no shipped lock")
    digest.update(b"\0" + python_path.encode())
    system = os.environ.get("RUNNER_OS") or os.uname().sysname
    machine = os.environ.get("RUNNER_ARCH") or os.uname().machine
    parts = [KEY_PREFIX, system, machine, re.sub(r"[^A-Za-z0-9.]+", "-", oracle), suite,
             f"py{python_version}", digest.hexdigest()[:16]]
    print(f"cache-dir={environments.cache_root()}")
    print(f"cache-key={'-'.join(parts)}")


if __name__ == "__main__":
    main()
