"""Connections to implementations: the oracle and every candidate speak one protocol.

Two transports carry the same messages: in-process (a Python object with
``handle(request) -> reply``) and a subprocess speaking JSON Lines. A spec
string names what to connect to:

    reference                 a built-in candidate
    harbor==0.13.1            a harbor release in its cached virtualenv (the oracle is one)
    module:attr               a Python object, in process
    exec:COMMAND              any program speaking the protocol on stdin/stdout
    evsys:NAME                an evsys-style metric plugin (see conformance.metric_plugin)
    NAME                      a registered candidate: ``register_candidate(NAME)``, or an entry
                              point in the ``harbor_conformance.candidates`` group
"""

from __future__ import annotations

import collections
import importlib
import os
import queue
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from conformance import metric_plugin, wire
from conformance.protocol import PROTOCOL_VERSION, STARTED_ADAPTER
from conformance.registry import Registry

# Candidates by name: an object with handle(request), or a spec string (module:attr, exec:COMMAND, ...).
CANDIDATES: Registry[Any] = Registry("candidate", "harbor_conformance.candidates")
register_candidate = CANDIDATES.register
register_candidate("reference", origin="conformance")("conformance.reference:candidate")
DEFAULT_TIMEOUT = 30.0
START_TIMEOUT = 120.0


class ConnectError(Exception):
    """The spec names nothing that can be connected to."""


@dataclass
class Reply:
    """One answer to one run request, as the runner sees it.

    kind: output | raised | skipped | errored | crash | timeout | protocol-error
    """

    kind: str
    value: Any = None  # decoded output, or the raised exception's class name
    detail: str = ""


class Connection(Protocol):
    spec: str
    implementation: dict[str, Any]

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply: ...

    def close(self) -> None: ...


def interpret(reply: Any, seq: int) -> Reply:
    """Turn a reply message into a Reply; anything malformed is a protocol error."""
    if not isinstance(reply, dict):
        return Reply("protocol-error", detail=f"reply is not a JSON object: {reply!r:.200}")
    if reply.get("seq") != seq:
        return Reply("protocol-error", detail=f"reply seq {reply.get('seq')!r} for request seq {seq}")
    keys = set(reply) - {"seq"}
    if keys == {"output"}:
        try:
            return Reply("output", wire.decode(reply["output"]))
        except wire.WireError as e:
            return Reply("protocol-error", detail=f"undecodable output: {e}")
    if keys == {"raised"} and isinstance(reply["raised"], dict) and isinstance(reply["raised"].get("type"), str):
        return Reply("raised", reply["raised"]["type"], str(reply["raised"].get("message", "")))
    if keys == {"skipped"} and isinstance(reply["skipped"], dict) and isinstance(reply["skipped"].get("reason"), str):
        return Reply("skipped", detail=reply["skipped"]["reason"])
    if keys == {"errored"} and isinstance(reply["errored"], dict) and isinstance(reply["errored"].get("message"), str):
        err = reply["errored"]
        return Reply("errored", detail=str(err.get("message", "")) + ("\n" + err["traceback"] if err.get("traceback") else ""))
    return Reply("protocol-error", detail=f"reply has neither output, raised, skipped nor errored: {sorted(keys)}")


def _check_started(started: Any, spec: str) -> dict[str, Any]:
    try:
        STARTED_ADAPTER.validate_python(started)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'reply'}: {err['msg']}" for err in e.errors())
        raise ConnectError(f"{spec}: the start reply is not a valid handshake ({problems}): {started!r:.300}") from None
    if started["protocol"] != PROTOCOL_VERSION:
        raise ConnectError(f"{spec}: speaks protocol {started['protocol']!r}, this harness {PROTOCOL_VERSION}")
    return started["implementation"]


class InProcess:
    """A Python object answering protocol dicts directly (no serialisation)."""

    def __init__(self, spec: str, target: Any) -> None:
        self.spec = spec
        self.target = target
        self.implementation = _check_started(target.handle({"cmd": "start", "protocol": PROTOCOL_VERSION}), spec)

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        try:
            reply = self.target.handle({"cmd": "run", "seq": seq, "surface": surface, "input": input_wire})
        except Exception as e:  # an in-process crash is still only this case's outcome
            return Reply("crash", detail=f"{type(e).__name__}: {e}")
        return interpret(reply, seq)

    def close(self) -> None:
        try:
            self.target.handle({"cmd": "stop"})
        except Exception:
            pass


@dataclass
class _Process:
    popen: subprocess.Popen
    lines: queue.Queue
    stderr: collections.deque = field(default_factory=lambda: collections.deque(maxlen=200))


class Subprocess:
    """A program speaking JSON Lines; restarted (handshake replayed) after a crash or timeout."""

    def __init__(self, spec: str, argv: list[str], *, env: dict[str, str] | None = None,
                 timeout: float = DEFAULT_TIMEOUT, start_timeout: float = START_TIMEOUT) -> None:
        self.spec = spec
        self.argv = argv
        self.env = env
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.workdir = Path(tempfile.mkdtemp(prefix="conformance-candidate-"))
        self.process: _Process | None = None
        self.implementation = self._start()

    def _spawn(self) -> _Process:
        try:
            popen = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=self.workdir, env=self.env, bufsize=0,
            )
        except OSError as e:
            raise ConnectError(f"{self.spec}: cannot start {self.argv[0]!r}: {e}") from None
        proc = _Process(popen, queue.Queue())

        def read_stdout() -> None:
            for raw in iter(popen.stdout.readline, b""):
                proc.lines.put(raw)
            proc.lines.put(None)

        def read_stderr() -> None:
            for raw in iter(popen.stderr.readline, b""):
                proc.stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

        threading.Thread(target=read_stdout, daemon=True).start()
        threading.Thread(target=read_stderr, daemon=True).start()
        return proc

    def _send(self, message: dict[str, Any]) -> bool:
        try:
            self.process.popen.stdin.write((wire.dumps(message) + "\n").encode())
            self.process.popen.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def _receive(self, timeout: float) -> tuple[str, Any]:
        """('line', parsed) | ('eof', None) | ('timeout', None) | ('garbage', text)."""
        try:
            raw = self.process.lines.get(timeout=timeout)
        except queue.Empty:
            return "timeout", None
        if raw is None:
            return "eof", None
        try:
            return "line", wire.loads(raw)
        except wire.WireError:
            return "garbage", raw[:200].decode("utf-8", "replace")

    def stderr_tail(self, lines: int = 20) -> str:
        return "\n".join(list(self.process.stderr)[-lines:]) if self.process else ""

    def _start(self) -> dict[str, Any]:
        self.process = self._spawn()
        if not self._send({"cmd": "start", "protocol": PROTOCOL_VERSION}):
            raise ConnectError(f"{self.spec}: exited before the handshake\n{self.stderr_tail()}")
        status, message = self._receive(self.start_timeout)
        if status != "line":
            self._kill()
            raise ConnectError(f"{self.spec}: no handshake ({status})\n{self.stderr_tail()}")
        try:
            return _check_started(message, self.spec)
        except ConnectError:
            self._kill()
            raise

    def _kill(self) -> None:
        if self.process and self.process.popen.poll() is None:
            self.process.popen.kill()
            try:
                self.process.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def _restart(self) -> None:
        self._kill()
        self.implementation = self._start()

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        if self.process is None or self.process.popen.poll() is not None:
            try:
                self._restart()
            except ConnectError as e:
                return Reply("crash", detail=f"could not restart: {e}")
        if not self._send({"cmd": "run", "seq": seq, "surface": surface, "input": input_wire}):
            tail = self.stderr_tail()
            self._kill()
            return Reply("crash", detail=f"exited (stdin closed)\n{tail}")
        status, message = self._receive(self.timeout)
        if status == "timeout":
            self._kill()
            self.process = None
            return Reply("timeout", detail=f"no reply within {self.timeout:g}s")
        if status == "eof":
            try:
                self.process.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._kill()
            code = self.process.popen.returncode
            return Reply("crash", detail=f"exited with status {code}\n{self.stderr_tail()}")
        if status == "garbage":
            # Whatever follows is out of step; start afresh for the next request.
            self._kill()
            self.process = None
            return Reply("protocol-error", detail=f"not a JSON line on stdout: {message!r}")
        reply = interpret(message, seq)
        if reply.kind == "protocol-error":
            self._kill()
            self.process = None
        return reply

    def close(self) -> None:
        if self.process and self.process.popen.poll() is None:
            self._send({"cmd": "stop"})
            try:
                self.process.popen.stdin.close()
                self.process.popen.wait(timeout=10)
            except (subprocess.TimeoutExpired, OSError):
                self._kill()
        shutil.rmtree(self.workdir, ignore_errors=True)


def harbor_argv(harbor_version: str, *, coverage_data: Path | None = None, log=lambda message: None) -> list[str]:
    """The command that runs harbor's own code for one release behind the protocol.

    With ``coverage_data``, the adapter runs under coverage.py (line and branch)
    in the instrumented environment, measuring harbor's package only; the data
    is written to that file when the adapter exits normally (after ``stop``).
    """
    from conformance import oracle_env

    env = oracle_env.ensure(harbor_version, coverage=coverage_data is not None, log=log)
    adapter = Path(str(resources.files("oracles") / "harbor_adapter.py"))
    kit = Path(wire.__file__).resolve().parent
    # -I: nothing from the harness's environment leaks into harbor's (it drops
    # PYTHON* variables, user site and the script's directory, not the venv's
    # site-packages, so `-m coverage` still imports; coverage's runner leaves
    # sys.path[0] alone under -I as well);
    # -X utf8: reward files decode as UTF-8 whatever the machine's locale.
    python = [str(env.python), "-I", "-X", "utf8"]
    if coverage_data is None:
        return [*python, str(adapter), str(kit)]
    harbor_dir = env.package_dir("harbor").resolve()
    # --append: if the adapter is restarted after a crash, the new process adds
    # to what the old one saved instead of erasing it. Only one process runs at
    # a time, so coverage's `parallel` mode (one file per process) is not needed.
    # A process killed after a timeout saves nothing (SIGKILL skips atexit).
    return [*python, "-m", "coverage", "run", "--branch", "--append",
            f"--data-file={Path(coverage_data).resolve()}", f"--include={harbor_dir}/*",
            str(adapter), str(kit)]


def _absolute_if_path(arg: str) -> str:
    """The candidate runs in a fresh temporary directory: paths given relative to here are made absolute."""
    if arg.startswith("-") or not os.path.exists(arg):
        return arg
    return os.path.abspath(arg)


def _in_process_target(spec: str, obj: Any) -> Any:
    if callable(getattr(obj, "handle", None)):
        return obj
    raise ConnectError(f"{spec}: {obj!r} is not a candidate (it needs a handle(request) method)")


def _import_attr(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: modules beside you are found
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ConnectError(f"{spec}: cannot import {module_name!r}: {e}") from None
    try:
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise ConnectError(f"{spec}: {module_name!r} has no attribute {attr!r}") from None
    return obj


def connect(spec: str, *, timeout: float = DEFAULT_TIMEOUT, coverage_data: Path | None = None,
            log=lambda message: None) -> Connection:
    """``coverage_data``: only for ``harbor==X``, run harbor under coverage.py into that file."""
    if coverage_data is not None and not spec.startswith("harbor=="):
        raise ConnectError(f"{spec}: coverage is measured only for harbor==VERSION, the oracle's own code")
    if spec.startswith("exec:"):
        argv = [_absolute_if_path(arg) for arg in shlex.split(spec[len("exec:"):])]
        if not argv:
            raise ConnectError("exec: needs a command, e.g. exec:'python -m conformance.reference'")
        from conformance import oracle_env

        return Subprocess(spec, argv, env=oracle_env.script_environment(), timeout=timeout)
    if spec.startswith("harbor=="):
        version = spec[len("harbor=="):]
        argv = harbor_argv(version, coverage_data=coverage_data, log=log)
        from conformance import oracle_env

        return Subprocess(spec, argv, env=oracle_env.script_environment(), timeout=max(timeout, 120.0))
    if spec.startswith(metric_plugin.PREFIX):
        try:
            return InProcess(spec, metric_plugin.candidate(spec[len(metric_plugin.PREFIX):]))
        except metric_plugin.PluginError as e:
            raise ConnectError(str(e)) from None
    if ":" not in spec and spec in CANDIDATES:
        target = CANDIDATES.get(spec)
        if not isinstance(target, str):
            return InProcess(spec, _in_process_target(spec, target))
        connection = connect(target, timeout=timeout, log=log)
        connection.spec = spec  # reported under the name it was asked for
        return connection
    if ":" in spec:
        return InProcess(spec, _in_process_target(spec, _import_attr(spec)))
    raise ConnectError(
        f"unknown candidate {spec!r}: use one of {', '.join(CANDIDATES.names())}, harbor==VERSION, "
        f"module:attr, exec:COMMAND or evsys:METRIC"
    )
