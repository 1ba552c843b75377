"""The oracle's environment: found, cached, and a clear word when it cannot be made."""

from __future__ import annotations

import hashlib

import pytest

from conformance.oracle import environments as oracle_env


def test_no_python_312_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.delenv("HARBOR_CONFORMANCE_PYTHON", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    with pytest.raises(oracle_env.OracleSetupError) as info:
        oracle_env.find_python("3.12")
    message = str(info.value)
    assert "CPython 3.12" in message and "pyenv install 3.12" in message and "HARBOR_CONFORMANCE_PYTHON" in message


def test_an_interpreter_of_another_series_is_refused(monkeypatch, tmp_path):
    import sys

    monkeypatch.setenv("HARBOR_CONFORMANCE_PYTHON", sys.executable)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    series = "{}.{}".format(*sys.version_info[:2])
    assert oracle_env.find_python(series) == sys.executable
    with pytest.raises(oracle_env.OracleSetupError):
        oracle_env.find_python("2.7")


def test_the_shipped_lock_pins_every_package_with_hashes():
    lock = oracle_env.lock_path("0.13.1")
    assert lock is not None
    text = lock.read_text()
    requirements = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    assert any(line.startswith("harbor==0.13.1") for line in requirements)
    assert any(line.startswith("pydantic==") for line in requirements)
    assert all("==" in line for line in requirements)
    assert text.count("--hash=sha256:") >= len(requirements)


@pytest.mark.usefixtures("harbor_env")
def test_the_environment_is_cached_by_lock_hash():
    first = oracle_env.ensure("0.13.1")
    marker = first.root / "conformance-env.json"
    stamp = marker.stat().st_mtime_ns
    second = oracle_env.ensure("0.13.1")
    assert second.root == first.root
    assert marker.stat().st_mtime_ns == stamp  # reused, not rebuilt
    digest = hashlib.sha256(oracle_env.lock_path("0.13.1").read_bytes()).hexdigest()[:16]
    assert first.root.name == f"harbor-0.13.1-{digest}"
    assert first.python.is_file()
