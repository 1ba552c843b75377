"""The subprocess transport: a program speaking JSON Lines on stdin/stdout.

It is killed on a hang or a protocol error and restarted (handshake
replayed) for the next request; a line too long, a line nobody asked for,
and a batch that fails as a whole each have their own handling, below.
"""

from __future__ import annotations

import collections
import queue
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from conformance.connection import replies
from conformance.connection.base import (
    MAX_LINE_BYTES,
    Closing,
    ConnectError,
    Settings,
    StartFailure,
    check_started,
)
from conformance.connection.protocol import PROTOCOL_VERSION, Implementation
from conformance.connection.replies import Reply
from conformance.connection.spec import Spec
from conformance.core.outcomes import ProtocolError, ReplyKind
from conformance.kit import wire

_OVERSIZED = object()  # put on the line queue after a line too long


@dataclass
class _Process:
    popen: subprocess.Popen[bytes]
    stdin: IO[bytes]
    lines: queue.Queue[bytes | object | None]  # raw lines; None at end of file; _OVERSIZED after a line too long
    stderr: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=200))
    stderr_reader: threading.Thread | None = None


class Subprocess(Closing):
    """A program speaking JSON Lines; killed on a hang or a protocol error, restarted (handshake replayed) after.

    ``timeout``: per request, overriding the settings' (the harbor connector's floor).
    """

    def __init__(self, spec: Spec, argv: list[str], settings: Settings, *, env: dict[str, str] | None = None,
                 timeout: float | None = None, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.spec = spec
        self.argv = argv
        self.env = env
        self.timeout = timeout if timeout is not None else settings.request_timeout
        self.start_timeout = settings.start_timeout
        self.stop_timeout = settings.stop_timeout
        self.max_line_bytes = max_line_bytes
        self.validate = settings.validate
        self.broken = ""
        self.workdir = Path(tempfile.mkdtemp(prefix="conformance-candidate-"))
        self.process: _Process | None = None
        self.answered: set[int] = set()  # seqs replied to by the running process
        self.batch_fallbacks: list[str] = []  # why each failed batch was asked again one request at a time
        try:
            self.implementation: Implementation = self._start()
        except ConnectError:
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise

    @property
    def _live(self) -> _Process:
        """The running process: only asked for between a start and the next kill."""
        assert self.process is not None, "no process is running"
        return self.process

    def _spawn(self) -> _Process:
        try:
            popen = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=self.workdir, env=self.env,
            )
        except OSError as e:
            raise ConnectError(f"{self.spec}: cannot start {self.argv[0]!r}: {e}") from None
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None  # all piped
        stdout, stderr = popen.stdout, popen.stderr
        proc = _Process(popen, popen.stdin, queue.Queue())
        limit = self.max_line_bytes

        def read_stdout() -> None:
            while raw := stdout.readline(limit + 1):
                if len(raw) > limit:
                    proc.lines.put(_OVERSIZED)  # the process is killed; the rest of the line is not read
                    return
                proc.lines.put(raw)
            proc.lines.put(None)

        def read_stderr() -> None:
            for raw in iter(stderr.readline, b""):
                proc.stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

        threading.Thread(target=read_stdout, daemon=True).start()
        proc.stderr_reader = threading.Thread(target=read_stderr, daemon=True)
        proc.stderr_reader.start()
        self.answered = set()
        return proc

    def _send(self, message: dict[str, Any]) -> bool:
        try:
            self._live.stdin.write((wire.dumps(message) + "\n").encode())
            self._live.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def _receive(self, timeout: float) -> tuple[str, Any]:
        """('line', message) | ('eof', None) | ('timeout', None) | ('error', protocol-error Reply)."""
        try:
            raw = self._live.lines.get(timeout=timeout)
        except queue.Empty:
            return "timeout", None
        return self._parsed(raw)

    def _parsed(self, raw: Any) -> tuple[str, Any]:
        if raw is None:
            return "eof", None
        if raw is _OVERSIZED:
            return "error", replies.protocol_error(
                ProtocolError.OVERSIZED_LINE, f"a stdout line longer than {self.max_line_bytes} bytes")
        message, problem = replies.parse_line(raw)
        return ("error", problem) if problem else ("line", message)

    def _unsolicited(self) -> Reply | None:
        """A line already waiting before a request is sent: nobody asked for it."""
        try:
            raw = self._live.lines.get_nowait()
        except queue.Empty:
            return None
        status, parsed = self._parsed(raw)
        if status == "eof":
            self._live.lines.put(None)  # the process is gone; the request finds out
            return None
        if isinstance(parsed, Reply):  # the line itself broke the protocol
            return parsed
        return replies.protocol_error(ProtocolError.UNSOLICITED_REPLY,
                                      f"a line written while no request was outstanding: {wire.dumps(parsed)[:200]}")

    def stderr_tail(self, lines: int = 20) -> str:
        if not self.process:
            return ""
        if self.process.popen.poll() is not None and self.process.stderr_reader:
            self.process.stderr_reader.join(timeout=2)  # an exited process's last words may still be in the pipe
        return "\n".join(list(self.process.stderr)[-lines:])

    def _start(self) -> Implementation:
        self.process = self._spawn()
        if not self._send({"cmd": "start", "protocol": PROTOCOL_VERSION}):
            self._kill()
            raise StartFailure(f"{self.spec}: exited before the handshake\n{self.stderr_tail()}",
                               Reply(ReplyKind.CRASH, detail=f"exited before the handshake\n{self.stderr_tail()}"))
        status, message = self._receive(self.start_timeout)
        if status != "line":
            self._kill()
            reply = {
                "timeout": Reply(ReplyKind.TIMEOUT, detail=f"no handshake within {self.start_timeout:g}s"),
                "eof": Reply(ReplyKind.CRASH, detail=f"exited with status {self.process.popen.returncode} before the "
                                             f"handshake\n{self.stderr_tail()}"),
            }.get(status) or message
            raise StartFailure(f"{self.spec}: no handshake: {reply.detail}", reply)
        try:
            return check_started(message, self.spec, self.validate)
        except ConnectError as e:
            self._kill()
            raise StartFailure(str(e), replies.protocol_error(ProtocolError.BAD_HANDSHAKE, str(e))) from None

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
            return Reply(ReplyKind.CRASH, detail=f"could not restart: {e}")
        return None

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        if (failed := self._ensure_running()) is not None:
            return failed
        if (stray := self._unsolicited()) is not None:
            return self._lost(stray)
        if not self._send({"cmd": "run", "seq": seq, "surface": surface, "input": input_wire}):
            tail = self.stderr_tail()
            return self._lost(Reply(ReplyKind.CRASH, detail=f"exited (stdin closed)\n{tail}"))
        status, message = self._receive(self.timeout)
        if status == "timeout":
            return self._lost(Reply(ReplyKind.TIMEOUT, detail=f"no reply within {self.timeout:g}s"))
        if status == "eof":
            self._kill()
            code = self._live.popen.returncode
            return Reply(ReplyKind.CRASH, detail=f"exited with status {code}\n{self.stderr_tail()}")
        if status == "error":
            return self._lost(message)
        reply = replies.checked(message, seq, surface, self.implementation, answered=self.answered,
                                validate=self.validate)
        if reply.kind is ReplyKind.PROTOCOL_ERROR:
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
        if not self.implementation.batch or len(items) < 2 or self._ensure_running() is not None:
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
        self._lost(Reply(ReplyKind.PROTOCOL_ERROR))
        return none

    def close(self) -> Reply | None:
        """Send ``stop`` and wait for the process to exit; one that does not is killed: a ``timeout``."""
        problem = None
        if self.process and self.process.popen.poll() is None:
            self._send({"cmd": "stop"})
            try:
                self.process.stdin.close()
            except OSError:
                pass
            try:
                self.process.popen.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                self._kill()
                problem = Reply(ReplyKind.TIMEOUT, detail=f"still running {self.stop_timeout:g}s after `stop`; killed")
        shutil.rmtree(self.workdir, ignore_errors=True)
        return problem
