"""The oracle's side type-checked: mypy, strict, over the code harbor's virtualenv runs, against harbor itself.

    python -m conformance.oracle.typecheck [--harbor VERSION] [MYPY OPTION...]

The oracle's side (``oracles/*.py``, the candidate kit, and every surface
folder's ``harbor.py`` and the modules it loads) imports harbor, which the
harness's own environment does not hold: ``mypy conformance`` leaves those
files out (pyproject.toml). Here mypy, run from this interpreter's
environment, checks them with ``--python-executable`` set to the oracle
virtualenv's Python (created first if need be), so harbor and pydantic
resolve from harbor's own site-packages. harbor ships no ``py.typed``:
its annotations are followed all the same (``follow_untyped_imports``).

The adapter loads these files by path under module names of its own
(``harbor_job``, ``conformance_kit``, ``surface_<surface>_<module>``):
they are checked under the same names, through a folder of links named so
(a file's errors are reported under its path in the repository).
Exit status: mypy's (0: no error).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from conformance import shipped
from conformance.core import surfaces
from conformance.kit import wire
from conformance.oracle import environments

DEFAULT_VERSION = "0.13.1"
# The oracle folder's modules the adapter runs or that run in the oracle's virtualenv on their own.
ORACLE_MODULES = ("harbor_adapter", "harbor_job", "unicode_sets")
KIT_PACKAGE = "conformance_kit"


def surface_module(surface: str, module: str) -> str:
    """The name the adapter loads a surface folder's module under (``Context.load``)."""
    return f"surface_{surface.replace('.', '_')}_{module}"


def oracle_side(extra: Mapping[str, Path] | None = None) -> dict[str, Path]:
    """Every module of the oracle's side, by the name it runs under, and its file (the kit: its folder);
    ``extra`` adds modules (name: file)."""
    oracles = shipped.folder(shipped.Shipped.ORACLES)
    found = {name: oracles / f"{name}.py" for name in ORACLE_MODULES}
    found[KIT_PACKAGE] = Path(wire.__file__).resolve().parent
    for surface in sorted(surfaces.SURFACES.values(), key=lambda s: s.name):
        for file in surface.oracle_files():
            found[surface_module(surface.name, file.stem)] = file
    found.update(extra or {})
    return found


def config(env: environments.OracleEnv, folder: Path) -> str:
    """mypy's settings: strict, as on the harness, against the oracle environment's Python and harbor."""
    series = ".".join(env.python_version.split(".")[:2]) or environments.PYTHON_SERIES
    return "\n".join([
        "[mypy]",
        "strict = True",
        "warn_unreachable = True",
        "plugins = pydantic.mypy",
        f"python_version = {series}",
        f"python_executable = {env.python}",
        f"mypy_path = {folder}",
        f"cache_dir = {folder / '.mypy_cache'}",
        "",
        "[mypy-harbor.*]",
        "follow_untyped_imports = True",
        "",
    ])


def _display(path: Path) -> str:
    """``path`` relative to the current directory when under it, as mypy names the harness's files."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path.resolve())


def _stage(folder: Path, modules: Mapping[str, Path]) -> dict[str, str]:
    """Links named as the modules run (``folder/harbor_job.py``...); returns each staged file's path, as mypy
    prints it, and the file's own path."""
    renamed: dict[str, str] = {}
    for name, path in modules.items():
        link = folder / (name if path.is_dir() else f"{name}.py")
        os.symlink(path.resolve(), link)
        files = sorted(path.glob("*.py")) if path.is_dir() else [path]
        for file in files:
            staged = link / file.name if path.is_dir() else link
            for shown in (str(staged), os.path.relpath(staged, folder)):
                renamed[shown] = _display(file)
    return renamed


def check(version: str = DEFAULT_VERSION, mypy_args: Sequence[str] = (), *,
          extra: Mapping[str, Path] | None = None) -> subprocess.CompletedProcess[str]:
    """mypy over the oracle's side of ``harbor==version`` (its environment created first if need be);
    the output names each file by its path in the repository."""
    env = environments.ensure(version)
    modules = oracle_side(extra)
    with tempfile.TemporaryDirectory(prefix="oracle-typecheck-") as temporary:
        folder = Path(temporary)
        renamed = _stage(folder, modules)
        (folder / "mypy.ini").write_text(config(env, folder), encoding="utf-8")
        targets = [arg for name, path in modules.items() for arg in (("-p" if path.is_dir() else "-m"), name)]
        done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", *mypy_args, *targets],
                              cwd=folder, capture_output=True, text=True, check=False)
    pattern = re.compile("|".join(re.escape(shown) for shown in sorted(renamed, key=len, reverse=True)))
    return subprocess.CompletedProcess(
        done.args, done.returncode,
        "\n".join(pattern.sub(lambda m: renamed[m.group(0)], line, count=1) if renamed else line
                  for line in done.stdout.splitlines()) + ("\n" if done.stdout else ""),
        done.stderr,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.oracle.typecheck",
                                     description="mypy, strict, over the oracle's side, against harbor itself; "
                                                 "other options are mypy's")
    parser.add_argument("--harbor", default=DEFAULT_VERSION, help="the harbor release whose environment is used")
    known, mypy_args = parser.parse_known_args(argv)
    done = check(known.harbor, mypy_args)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
