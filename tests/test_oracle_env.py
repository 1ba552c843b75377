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


def _broken_environment(tmp_path, harbor_version: str = "0.13.1") -> oracle_env.OracleEnv:
    """An environment whose interpreter fails as one with a file gone from its site-packages would."""
    root = tmp_path / f"harbor-{harbor_version}-broken"
    (root / "bin").mkdir(parents=True)
    python = root / "bin" / "python"
    python.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'harbor'\" >&2\nexit 1\n")
    python.chmod(0o755)
    return oracle_env.OracleEnv(harbor_version, root, "broken")


def test_a_broken_environment_is_found_broken_and_a_whole_one_is_not(tmp_path, harbor_env):
    assert oracle_env.broken(_broken_environment(tmp_path)) == "ModuleNotFoundError: No module named 'harbor'"
    assert "does not run" in oracle_env.broken(oracle_env.OracleEnv("0.13.1", tmp_path / "nothing", "x"))
    assert oracle_env.broken(harbor_env) is None


def test_an_environment_broken_in_itself_is_made_again_once_then_named_with_how_to_remove_it(tmp_path, monkeypatch):
    from conformance.connection.base import ConnectError
    from conformance.connection.connectors import connect

    env = _broken_environment(tmp_path)
    made_again: list[oracle_env.OracleEnv] = []
    monkeypatch.setattr(oracle_env, "ensure", lambda version, **_: env)
    monkeypatch.setattr(oracle_env, "rebuild", lambda broken, **_: made_again.append(broken) or broken)
    with pytest.raises(ConnectError) as refused:
        connect("harbor==0.13.1")
    said = str(refused.value)
    assert made_again == [env]  # once, not in a loop
    assert f"the oracle environment in {env.root} is broken (ModuleNotFoundError" in said
    assert f"`rm -rf {env.root}`" in said and "still after it was made again" in said


def test_an_environment_broken_in_itself_serves_once_made_again(tmp_path, monkeypatch, harbor_env):
    from conformance.connection.connectors import connect

    env = _broken_environment(tmp_path)
    current = {"env": env}
    monkeypatch.setattr(oracle_env, "ensure", lambda version, **_: current["env"])

    def rebuild(broken, **_):
        current["env"] = harbor_env  # made again: a whole environment from the same lock
        return harbor_env

    monkeypatch.setattr(oracle_env, "rebuild", rebuild)
    from conformance.kit import wire

    with connect("harbor==0.13.1") as oracle:
        assert oracle.implementation is not None and oracle.implementation.name == "harbor"
        reply = oracle.run(1, "pass_at_k", wire.encode({"trials": []}))
        assert reply.kind == "output" and wire.decode(reply.encoded) == {}, reply
    assert current["env"] is harbor_env
