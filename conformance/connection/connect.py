"""Connections to implementations: the oracle and every candidate speak one protocol.

Two transports carry the same messages: in-process (a Python object with
``handle(request) -> reply``) and a subprocess speaking JSON Lines. A spec
string names what to connect to:

    reference                 a built-in candidate
    harbor==0.13.1            a harbor release in its cached virtualenv (the oracle is one)
    module:attr               a Python object, in process
    exec:COMMAND              any program speaking the protocol on stdin/stdout
    evsys:NAME                an evsys-style metric plugin (see conformance.connection.evsys_plugin)
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

from conformance.connection import evsys_plugin as metric_plugin
from conformance.connection import replies
from conformance.connection.protocol import PROTOCOL_VERSION, STARTED_ADAPTER
from conformance.connection.replies import Reply, interpret
from conformance.core.registry import Registry
from conformance.kit import wire

__all__ = ["CANDIDATES", "ConnectError", "Connection", "Reply", "StartFailure", "connect", "interpret",
           "register_candidate"]

# Candidates by name: an object with handle(request), or a spec string (module:attr, exec:COMMAND, ...).
CANDIDATES: Registry[Any] = Registry("candidate", "harbor_conformance.candidates")
register_candidate = CANDIDATES.register
register_candidate("reference", origin="conformance")("conformance.reference:candidate")
DEFAULT_TIMEOUT = 30.0  # per request
START_TIMEOUT = 120.0  # for the handshake: a first start may compile or load a lot
STOP_TIMEOUT = 10.0  # from `stop` to the process's exit
MAX_LINE_BYTES = 64 * 1024 * 1024  # one reply line; a job.result output is kilobytes



class ConnectError(Exception):
    """The spec names nothing that can be connected to."""


class StartFailure(ConnectError):
    """The program ran but gave no valid handshake; ``reply`` says how (timeout, crash, protocol-error)."""

    def __init__(self, message: str, reply: Reply) -> None:
        super().__init__(message)
        self.reply = reply


class Connection(Protocol):
    spec: str
    implementation: dict[str, Any]

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply: ...

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        """Replies to several (seq, surface, input) requests at once; None where the caller must ask singly."""

    def close(self) -> Reply | None:
        """Stop the implementation; what went wrong doing so (a hang is a ``timeout``), or None."""


def _check_started(started: Any, spec: str, validate: bool = False) -> dict[str, Any]:
    try:
        STARTED_ADAPTER.validate_python(started)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'reply'}: {err['msg']}" for err in e.errors())
        raise ConnectError(f"{spec}: the start reply is not a valid handshake ({problems}): {started!r:.300}") from None
    if validate and (problems := replies.schema_problems(started, "protocol-started.json")):
        raise ConnectError(f"{spec}: the start reply breaks protocol-started.json: {'; '.join(problems)}")
    if started["protocol"] != PROTOCOL_VERSION:
        raise ConnectError(f"{spec}: speaks protocol {started['protocol']!r}, this harness {PROTOCOL_VERSION}")
    return started["implementation"]


class InProcess:
    """A Python object answering protocol dicts directly (no serialisation)."""

    def __init__(self, spec: str, target: Any, *, validate: bool = False) -> None:
        self.spec = spec
        self.target = target
        self.validate = validate
        self.implementation = _check_started(target.handle({"cmd": "start", "protocol": PROTOCOL_VERSION}), spec,
                                             validate)

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        try:
            reply = self.target.handle({"cmd": "run", "seq": seq, "surface": surface, "input": input_wire})
        except Exception as e:  # an in-process crash is still only this case's outcome
            return Reply("crash", detail=f"{type(e).__name__}: {e}")
        return replies.checked(reply, seq, surface, self.implementation, validate=self.validate)

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        return [self.run(*item) for item in items]  # in process, a batch saves nothing

    def close(self) -> Reply | None:
        try:
            self.target.handle({"cmd": "stop"})
        except Exception as e:
            return Reply("crash", detail=f"on stop: {type(e).__name__}: {e}")
        return None


@dataclass
class _Process:
    popen: subprocess.Popen
    lines: queue.Queue  # raw lines; None at end of file; _OVERSIZED after a line too long
    stderr: collections.deque = field(default_factory=lambda: collections.deque(maxlen=200))
    stderr_reader: threading.Thread | None = None


_OVERSIZED = object()


class Subprocess:
    """A program speaking JSON Lines; killed on a hang or a protocol error, restarted (handshake replayed) after."""

    def __init__(self, spec: str, argv: list[str], *, env: dict[str, str] | None = None,
                 timeout: float = DEFAULT_TIMEOUT, start_timeout: float = START_TIMEOUT,
                 stop_timeout: float = STOP_TIMEOUT, max_line_bytes: int = MAX_LINE_BYTES,
                 validate: bool = False) -> None:
        self.spec = spec
        self.argv = argv
        self.env = env
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.max_line_bytes = max_line_bytes
        self.validate = validate
        self.workdir = Path(tempfile.mkdtemp(prefix="conformance-candidate-"))
        self.process: _Process | None = None
        self.answered: set[int] = set()  # seqs replied to by the running process
        self.batch_fallbacks: list[str] = []  # why each failed batch was asked again one request at a time
        try:
            self.implementation = self._start()
        except ConnectError:
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise

    def _spawn(self) -> _Process:
        try:
            popen = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=self.workdir, env=self.env,
            )
        except OSError as e:
            raise ConnectError(f"{self.spec}: cannot start {self.argv[0]!r}: {e}") from None
        proc = _Process(popen, queue.Queue())
        limit = self.max_line_bytes

        def read_stdout() -> None:
            while raw := popen.stdout.readline(limit + 1):
                if len(raw) > limit:
                    proc.lines.put(_OVERSIZED)  # the process is killed; the rest of the line is not read
                    return
                proc.lines.put(raw)
            proc.lines.put(None)

        def read_stderr() -> None:
            for raw in iter(popen.stderr.readline, b""):
                proc.stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

        threading.Thread(target=read_stdout, daemon=True).start()
        proc.stderr_reader = threading.Thread(target=read_stderr, daemon=True)
        proc.stderr_reader.start()
        self.answered = set()
        return proc

    def _send(self, message: dict[str, Any]) -> bool:
        try:
            self.process.popen.stdin.write((wire.dumps(message) + "\n").encode())
            self.process.popen.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def _receive(self, timeout: float) -> tuple[str, Any]:
        """('line', message) | ('eof', None) | ('timeout', None) | ('error', protocol-error Reply)."""
        try:
            raw = self.process.lines.get(timeout=timeout)
        except queue.Empty:
            return "timeout", None
        return self._parsed(raw)

    def _parsed(self, raw: Any) -> tuple[str, Any]:
        if raw is None:
            return "eof", None
        if raw is _OVERSIZED:
            return "error", replies.protocol_error(
                "oversized-line", f"a stdout line longer than {self.max_line_bytes} bytes")
        message, problem = replies.parse_line(raw)
        return ("error", problem) if problem else ("line", message)

    def _unsolicited(self) -> Reply | None:
        """A line already waiting before a request is sent: nobody asked for it."""
        try:
            raw = self.process.lines.get_nowait()
        except queue.Empty:
            return None
        status, parsed = self._parsed(raw)
        if status == "eof":
            self.process.lines.put(None)  # the process is gone; the request finds out
            return None
        if status == "error":
            return parsed
        return replies.protocol_error(
            "unsolicited-reply", f"a line written while no request was outstanding: {wire.dumps(parsed)[:200]}")

    def stderr_tail(self, lines: int = 20) -> str:
        if not self.process:
            return ""
        if self.process.popen.poll() is not None and self.process.stderr_reader:
            self.process.stderr_reader.join(timeout=2)  # an exited process's last words may still be in the pipe
        return "\n".join(list(self.process.stderr)[-lines:])

    def _start(self) -> dict[str, Any]:
        self.process = self._spawn()
        if not self._send({"cmd": "start", "protocol": PROTOCOL_VERSION}):
            self._kill()
            raise StartFailure(f"{self.spec}: exited before the handshake\n{self.stderr_tail()}",
                               Reply("crash", detail=f"exited before the handshake\n{self.stderr_tail()}"))
        status, message = self._receive(self.start_timeout)
        if status != "line":
            self._kill()
            reply = {
                "timeout": Reply("timeout", detail=f"no handshake within {self.start_timeout:g}s"),
                "eof": Reply("crash", detail=f"exited with status {self.process.popen.returncode} before the "
                                             f"handshake\n{self.stderr_tail()}"),
            }.get(status) or message
            raise StartFailure(f"{self.spec}: no handshake: {reply.detail}", reply)
        try:
            return _check_started(message, self.spec, self.validate)
        except ConnectError as e:
            self._kill()
            raise StartFailure(str(e), replies.protocol_error("bad-handshake", str(e))) from None

    def _kill(self) -> None:
        if self.process and self.process.popen.poll() is None:
            self.process.popen.kill()
        if self.process:
            try:
                self.process.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def _lost(self, reply: Reply) -> Reply:
        """The process is out of step (hung, or said something wrong): kill it; the next request restarts it."""
        self._kill()
        self.process = None
        return reply

    def _ensure_running(self) -> Reply | None:
        """Restart a process that was killed or has exited; what went wrong if it cannot be."""
        if self.process is not None and self.process.popen.poll() is None:
            return None
        self._kill()
        try:
            self.implementation = self._start()
        except StartFailure as e:
            self.process = None
            return Reply(e.reply.kind, detail=f"could not restart: {e.reply.detail}", error=e.reply.error)
        except ConnectError as e:
            self.process = None
            return Reply("crash", detail=f"could not restart: {e}")
        return None

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        if (failed := self._ensure_running()) is not None:
            return failed
        if (stray := self._unsolicited()) is not None:
            return self._lost(stray)
        if not self._send({"cmd": "run", "seq": seq, "surface": surface, "input": input_wire}):
            tail = self.stderr_tail()
            return self._lost(Reply("crash", detail=f"exited (stdin closed)\n{tail}"))
        status, message = self._receive(self.timeout)
        if status == "timeout":
            return self._lost(Reply("timeout", detail=f"no reply within {self.timeout:g}s"))
        if status == "eof":
            self._kill()
            code = self.process.popen.returncode
            return Reply("crash", detail=f"exited with status {code}\n{self.stderr_tail()}")
        if status == "error":
            return self._lost(message)
        reply = replies.checked(message, seq, surface, self.implementation, answered=self.answered,
                                validate=self.validate)
        if reply.kind == "protocol-error":
            return self._lost(reply)
        self.answered.add(seq)
        return reply

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        """One ``batch`` message for several requests, to a candidate that declares ``batch``.

        A batch that goes wrong as a whole (no reply in time, an exit, a reply
        line that is not a batch reply) answers nothing: every item is None and
        the caller asks for each on its own, so a misbehaviour is pinned on the
        request that causes it. ``batch_fallbacks`` counts those batches.
        """
        none: list[Reply | None] = [None] * len(items)
        if not self.implementation.get("batch") or len(items) < 2 or self._ensure_running() is not None:
            return none
        if (stray := self._unsolicited()) is not None:
            return [self._lost(stray), *none[1:]]
        batch_seq = items[0][0]
        message = {"cmd": "batch", "seq": batch_seq,
                   "items": [{"seq": seq, "surface": surface, "input": value} for seq, surface, value in items]}
        if not self._send(message):
            return self._fallback(none, "stdin closed")
        status, reply = self._receive(self.timeout)
        if status != "line":
            return self._fallback(none, status if status != "error" else reply.error)
        whole = set(reply) == {"seq", "replies"} and type(reply["seq"]) is int and reply["seq"] == batch_seq
        answers = reply["replies"] if whole else None
        if not isinstance(answers, list) or len(answers) != len(items):
            return self._fallback(none, "not a batch reply of one reply per item")
        out: list[Reply | None] = []
        for (seq, surface, _), answer in zip(items, answers, strict=True):
            out.append(replies.checked(answer, seq, surface, self.implementation, answered=self.answered,
                                       validate=self.validate))
            self.answered.add(seq)
        return out

    def _fallback(self, none: list[Reply | None], why: str) -> list[Reply | None]:
        self.batch_fallbacks.append(why)
        self._lost(Reply("protocol-error"))
        return none

    def close(self) -> Reply | None:
        """Send ``stop`` and wait for the process to exit; one that does not is killed: a ``timeout``."""
        problem = None
        if self.process and self.process.popen.poll() is None:
            self._send({"cmd": "stop"})
            try:
                self.process.popen.stdin.close()
            except OSError:
                pass
            try:
                self.process.popen.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                self._kill()
                problem = Reply("timeout", detail=f"still running {self.stop_timeout:g}s after `stop`; killed")
        shutil.rmtree(self.workdir, ignore_errors=True)
        return problem


def harbor_argv(harbor_version: str, *, coverage_data: Path | None = None, log=lambda message: None) -> list[str]:
    """The command that runs harbor's own code for one release behind the protocol.

    With ``coverage_data``, the adapter runs under coverage.py (line and branch)
    in the instrumented environment, measuring harbor's package only; the data
    is written to that file when the adapter exits normally (after ``stop``).
    """
    from conformance.oracle import environments as oracle_env

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


def connect(spec: str, *, timeout: float = DEFAULT_TIMEOUT, timeout_multiplier: float = 1.0, validate: bool = False,
            coverage_data: Path | None = None, log=lambda message: None) -> Connection:
    """Connect to what ``spec`` names.

    ``timeout``: per request; ``timeout_multiplier`` scales it and the start
    and stop timeouts (a slow runtime, a loaded machine). ``validate``: check
    every message against the published JSON Schemas (--validate-protocol).
    ``coverage_data``: only for ``harbor==X``, run harbor under coverage.py into that file.
    """
    if coverage_data is not None and not spec.startswith("harbor=="):
        raise ConnectError(f"{spec}: coverage is measured only for harbor==VERSION, the oracle's own code")
    if timeout_multiplier <= 0 or timeout <= 0:
        raise ConnectError(f"{spec}: timeouts must be positive (timeout {timeout}, multiplier {timeout_multiplier})")
    scaled = {"start_timeout": START_TIMEOUT * timeout_multiplier, "stop_timeout": STOP_TIMEOUT * timeout_multiplier,
              "validate": validate}
    if spec.startswith("exec:"):
        argv = [_absolute_if_path(arg) for arg in shlex.split(spec[len("exec:"):])]
        if not argv:
            raise ConnectError("exec: needs a command, e.g. exec:'python -m conformance.reference'")
        from conformance.oracle import environments as oracle_env

        return Subprocess(spec, argv, env=oracle_env.script_environment(), timeout=timeout * timeout_multiplier,
                          **scaled)
    if spec.startswith("harbor=="):
        version = spec[len("harbor=="):]
        argv = harbor_argv(version, coverage_data=coverage_data, log=log)
        from conformance.oracle import environments as oracle_env

        # A harbor job runs real trials: never less than 120 s a request.
        return Subprocess(spec, argv, env=oracle_env.script_environment(),
                          timeout=max(timeout, 120.0) * timeout_multiplier, **scaled)
    if spec.startswith(metric_plugin.PREFIX):
        try:
            return InProcess(spec, metric_plugin.candidate(spec[len(metric_plugin.PREFIX):]), validate=validate)
        except metric_plugin.PluginError as e:
            raise ConnectError(str(e)) from None
    if ":" not in spec and spec in CANDIDATES:
        target = CANDIDATES.get(spec)
        if not isinstance(target, str):
            return InProcess(spec, _in_process_target(spec, target), validate=validate)
        connection = connect(target, timeout=timeout, timeout_multiplier=timeout_multiplier, validate=validate,
                             log=log)
        connection.spec = spec  # reported under the name it was asked for
        return connection
    if ":" in spec:
        return InProcess(spec, _in_process_target(spec, _import_attr(spec)), validate=validate)
    raise ConnectError(
        f"unknown candidate {spec!r}: use one of {', '.join(CANDIDATES.names())}, harbor==VERSION, "
        f"module:attr, exec:COMMAND or evsys:METRIC"
    )
