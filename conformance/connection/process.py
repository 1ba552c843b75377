"""The subprocess transport: a program speaking JSON Lines on stdin/stdout.

It is killed on a hang or a protocol error and restarted (handshake
replayed) for the next request; a line too long, a line nobody asked for,
and a batch that fails as a whole each have their own handling, below.

A candidate is untrusted: whatever it writes, the harness holds a bounded
amount of it. Its pipes are read in chunks, by the harness's own thread (no
reader threads), only while it waits on the process (for the handshake, a
reply, the exit after ``stop``): stdout up to one line of at most
``max_line_bytes`` (after ``stop``, read and dropped), stderr into a bounded
tail (:class:`StderrTail`). Between requests nothing is read: what a
candidate writes then waits in the pipe (it blocks once the pipe is full),
and is found before the next request (``unsolicited-reply``). The process
runs in a process group of its own (:mod:`.groups`), stopped as a whole, so
nothing it starts outlives it, and no pipe outlives a restart.
"""

from __future__ import annotations

import collections
import os
import re
import select
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from conformance.connection import groups, replies
from conformance.connection.base import (
    MAX_LINE_BYTES,
    MAX_LINE_VALUES,
    BaseConnection,
    Capabilities,
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

CHUNK = 64 * 1024  # bytes read from a pipe at a time
POLL_SLICE = 0.05  # seconds between looks at whether the process is still there, while waiting on it
STRAY_PREVIEW = 64 * 1024  # bytes of a line nobody asked for that are read to say what it is
DRAIN_BUDGET = 1024 * 1024  # bytes read from a pipe, without waiting, once the process has exited
EXIT_AFTER_EOF = 1.0  # seconds a process that closed stdout is given to exit, so its status can be told
STDERR_LINES = 50
STDERR_LINE_CHARS = 2000
STDERR_CHARS = 32 * 1024


# -- what waiting on the process comes to --------------------------------------


@dataclass(frozen=True)
class Line:
    """A line on stdout that is a JSON object: a message, still to be checked as a reply."""

    message: dict[str, Any]


@dataclass(frozen=True)
class Broke:
    """What came on stdout breaks the protocol; ``problem`` is the protocol-error reply naming the rule."""

    problem: Reply


@dataclass(frozen=True)
class Closed:
    """No line will come: stdout ended, or the process exited (``code``; ``held``: a process it started
    still held its stdout open)."""

    code: int | None = None
    held: bool = False


@dataclass(frozen=True)
class Silent:
    """Nothing within the time allowed (or the request could not even be written in it)."""


@dataclass(frozen=True)
class Abandoned:
    """The harness is stopping (closing the connection from another thread): nobody waits for the reply."""


Received = Line | Broke | Closed | Silent | Abandoned


# -- stderr --------------------------------------------------------------------


class StderrTail:
    """The end of what a process wrote on stderr, bounded however much it writes.

    The last ``lines`` lines, each cut to ``line_chars`` characters, and no
    more than ``total_chars`` in all; a cut line and a cut tail say how long
    they were. Fed in chunks; a line without its newline is kept as far as it
    goes, and only its first characters are held.
    """

    def __init__(self, lines: int = STDERR_LINES, line_chars: int = STDERR_LINE_CHARS,
                 total_chars: int = STDERR_CHARS) -> None:
        self.max_lines = lines
        self.line_chars = line_chars
        self.total_chars = total_chars
        self.kept: collections.deque[str] = collections.deque()
        self.kept_chars = 0
        self.partial = bytearray()  # the first bytes of the line being written
        self.partial_size = 0  # how long that line is so far
        self.size = 0  # bytes written in all
        self.lines_ended = 0

    def feed(self, data: bytes) -> None:
        self.size += len(data)
        pieces = data.split(b"\n")
        *ended, rest = pieces
        if ended:
            self._extend(ended[0])  # the end of the line being written
            self._keep(self._render())
            whole = ended[1:]
            unseen = max(0, len(whole) - self.max_lines)  # lines enough come after them: they would not be kept
            self.lines_ended += unseen
            for piece in whole[unseen:]:
                self._extend(piece)
                self._keep(self._render())
        self._extend(rest)

    def _extend(self, piece: bytes) -> None:
        room = 4 * self.line_chars - len(self.partial)  # enough bytes for line_chars characters of UTF-8
        if room > 0:
            self.partial += piece[:room]
        self.partial_size += len(piece)

    def _render(self) -> str:
        text = self.partial.decode("utf-8", "replace").removesuffix("\r")
        if self.partial_size > len(self.partial) or len(text) > self.line_chars:
            text = f"{text[:self.line_chars]}… (a line of {self.partial_size} bytes)"
        return text

    def _keep(self, text: str) -> None:
        self.partial.clear()
        self.partial_size = 0
        self.lines_ended += 1
        self.kept.append(text)
        self.kept_chars += len(text)
        while len(self.kept) > self.max_lines or (self.kept_chars > self.total_chars and len(self.kept) > 1):
            self.kept_chars -= len(self.kept.popleft())

    def text(self) -> str:
        lines = list(self.kept)
        if self.partial_size:
            lines.append(self._render())
        dropped = self.lines_ended - len(self.kept)
        if dropped:
            lines.insert(0, f"[stderr: {self.size} bytes; {dropped} earlier line(s) not kept]")
        return "\n".join(lines)


# -- the pipes -------------------------------------------------------------------


# A JSON string, or what is left of the line after an unclosed quote: possessive, so it always matches where it
# starts and the scan stays linear however the quotes and backslashes are laid out.
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+\\?(?:"|\Z)', re.DOTALL)


def json_values(line: bytes, limit: int) -> int:
    """How many JSON values ``line`` holds, counted as its commas, ``[`` and ``{``: roughly what parsing it
    costs. Those inside strings are left out when it matters, once the plain count is over ``limit``."""
    count = line.count(b",") + line.count(b"[") + line.count(b"{")
    if count <= limit:
        return count
    bare = _STRING.sub(b'""', line)  # the commas and brackets inside strings are no values
    return bare.count(b",") + bare.count(b"[") + bare.count(b"{")


class _Process:
    """One run of the program: its pipes (read while the harness waits on it), and what it wrote so far."""

    def __init__(self, popen: subprocess.Popen[bytes], token: str, max_line_bytes: int, max_line_values: int,
                 codec: wire.Codec = wire.DEFAULT) -> None:
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None  # all piped
        self.popen = popen
        self.pgid = popen.pid  # start_new_session: the leader of its own group
        self.token = token  # in the environment of everything it starts (groups.TOKEN_ENV)
        self.max_line_bytes = max_line_bytes
        self.max_line_values = max_line_values
        self.codec = codec
        self._files: list[IO[bytes]] = [popen.stdin, popen.stdout, popen.stderr]
        self.stdin, self.stdout, self.stderr_fd = popen.stdin.fileno(), popen.stdout.fileno(), popen.stderr.fileno()
        for fd in (self.stdin, self.stdout, self.stderr_fd):
            os.set_blocking(fd, False)
        self.open = {self.stdout, self.stderr_fd}  # the pipes not yet at their end
        self.pending = bytearray()  # stdout read but not yet taken as a line
        self.scanned = 0  # how much of ``pending`` holds no newline
        self.discarding = False  # after stop: stdout is read and dropped
        self.stderr = StderrTail()
        self.pipes_closed = False
        self.stopped = False  # the whole group, and the pipes closed
        self.abandoned = False  # set from another thread: stop waiting on the request under way
        self._poller = select.poll()
        self._watched: tuple[int, ...] = ()

    # reading

    def _read(self, fd: int) -> bool:
        """Read one chunk from ``fd``; False when there was nothing to read."""
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self.open.discard(fd)
            return False
        if fd == self.stderr_fd:
            self.stderr.feed(data)
        elif not self.discarding:
            self.pending += data
        return True

    def pump(self, timeout: float, writing: bool = False) -> bool:
        """Wait up to ``timeout`` s for a pipe to be ready, and read (or let the caller write) once; whether
        anything was read.

        stdout is left unread while it holds more than a line may be: the caller finds the line too long.
        """
        watched = tuple(sorted(fd for fd in self.open if fd == self.stderr_fd
                               or len(self.pending) <= self.max_line_bytes)) + ((self.stdin,) if writing else ())
        if not watched:
            time.sleep(timeout)
            return False
        if watched != self._watched:  # a poll object is kept while what it watches stays the same
            self._poller = select.poll()
            for fd in watched:
                self._poller.register(fd, select.POLLOUT if fd == self.stdin else select.POLLIN)
            self._watched = watched
        read = False
        for fd, _ in self._poller.poll(max(0, int(timeout * 1000))):
            if fd in self.open:
                read = self._read(fd) or read
        return read

    def drain(self, budget: int = DRAIN_BUDGET, stdout: bool = True) -> None:
        """Read what is already in the pipes, without waiting: at most about ``budget`` bytes of each."""
        for fd in (self.stdout, self.stderr_fd) if stdout else (self.stderr_fd,):
            for _ in range(budget // CHUNK + 1):
                if fd not in self.open or (fd == self.stdout and len(self.pending) > self.max_line_bytes):
                    break
                if not self._read(fd):
                    break

    def take_line(self) -> Received | None:
        """The next whole stdout line, as a message or the protocol error it is; None while there is none."""
        end = self.pending.find(b"\n", self.scanned)
        if end == -1:
            self.scanned = len(self.pending)
            if len(self.pending) > self.max_line_bytes:
                return self._oversized(f"a stdout line longer than {self.max_line_bytes} bytes")
            return None
        if end + 1 > self.max_line_bytes:
            return self._oversized(f"a stdout line of {end + 1} bytes, longer than {self.max_line_bytes}")
        with memoryview(self.pending) as view:
            raw = bytes(view[:end + 1])
        del self.pending[:end + 1]
        self.scanned = 0
        if (values := json_values(raw, self.max_line_values)) > self.max_line_values:
            return self._oversized(f"a stdout line of {len(raw)} bytes holding about {values} JSON values, more "
                                   f"than {self.max_line_values}")
        message, problem = replies.parse_line(raw, self.codec)
        del raw
        return Broke(problem) if problem is not None else Line(message)

    def _oversized(self, detail: str) -> Broke:
        self.pending = bytearray()  # the process is killed: the rest of the line is never read
        self.scanned = 0
        return Broke(replies.protocol_error(ProtocolError.OVERSIZED_LINE, detail))

    def stray(self) -> Reply | None:
        """A line already waiting before a request is sent: nobody asked for it (None: there is none)."""
        while self.stdout in self.open and len(self.pending) < STRAY_PREVIEW and self._read(self.stdout):
            pass
        if not self.pending:
            return None  # (and at the end of stdout: the process is gone; the request finds out)
        end = self.pending.find(b"\n", 0, STRAY_PREVIEW)
        if end != -1 and json_values(bytes(self.pending[:end + 1]), self.max_line_values) <= self.max_line_values:
            message, problem = replies.parse_line(bytes(self.pending[:end + 1]), self.codec)
            if problem is not None:  # the line itself broke the protocol
                return problem
            shown = self.codec.dumps(message)
            shown = shown[:200] + (f" ... ({len(shown)} characters)" if len(shown) > 200 else "")
        else:
            text = self.pending[:200].decode("utf-8", "replace")
            shown = f"{text!r} ... (at least {len(self.pending)} bytes)"
        return replies.protocol_error(ProtocolError.UNSOLICITED_REPLY,
                                      f"a line written while no request was outstanding: {shown}")

    # writing

    def send(self, data: bytes, deadline: float) -> Received | None:
        """Write ``data`` to stdin, reading the other pipes meanwhile; None once written, else why not."""
        if self.pipes_closed:
            return Closed(self.popen.poll())
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.stdin, view):]
                continue
            except BlockingIOError:
                pass
            except OSError:  # BrokenPipeError: it closed stdin, or exited
                return Closed(self.popen.poll())
            left = deadline - time.monotonic()
            if left <= 0:
                return Silent()
            if self.abandoned:
                return Abandoned()
            self.pump(min(left, POLL_SLICE), writing=True)
        return None

    def close_stdin(self) -> None:
        try:
            self._files[0].close()
        except OSError:
            pass

    # ending

    def receive(self, deadline: float) -> Received:
        """Wait until ``deadline`` for a stdout line; sooner told when the process exits or stdout ends."""
        look = time.monotonic() + POLL_SLICE  # when to look at whether the process is still there
        while True:
            if (got := self.take_line()) is not None:
                return got
            if self.stdout not in self.open:
                return Closed(self.popen.poll())
            now = time.monotonic()
            if now >= look:
                look = now + POLL_SLICE
                if (code := self.popen.poll()) is not None:
                    # It exited: what it wrote is in the pipes already; stdout still open means a process it
                    # started holds it (that process is stopped with the group).
                    self.drain(self.max_line_bytes + CHUNK)
                    if (got := self.take_line()) is not None:
                        return got
                    return Closed(code, held=self.stdout in self.open)
            if now >= deadline:
                return Silent()
            if self.abandoned:
                return Abandoned()
            self.pump(min(deadline - now, look - now))

    def wait_exit(self, deadline: float) -> bool:
        """After ``stop``: wait for the process to exit, dropping its stdout; whether it did in time."""
        self.discarding = True
        self.pending = bytearray()
        while self.popen.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self.open:
                self.pump(min(left, POLL_SLICE))
            else:
                time.sleep(min(left, POLL_SLICE))
        return True

    def end(self) -> None:
        """Stop the whole process group, keep its last stderr, close every pipe.

        Safe to call again, also after an interrupt cut it short: the group is
        stopped again, the pipes (closed the first time) are never touched.
        """
        if self.stopped:
            return
        try:
            groups.terminate_group(self.pgid, reap=self.popen.poll)
            groups.terminate_carrying(self.token)  # what left the group (setsid) and still runs
            if not self.pipes_closed:
                self.discarding = True
                self.drain()  # its last words, now that everything holding the pipes is gone
        finally:
            self.pipes_closed = True
            self.open.clear()
            for handle in self._files:
                try:
                    handle.close()
                except OSError:
                    pass
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:  # SIGKILL was sent: it cannot be long
            pass
        self.stopped = True


class Subprocess(BaseConnection):
    """A program speaking JSON Lines; killed on a hang or a protocol error, restarted (handshake replayed) after.

    ``timeout``: per request, overriding the settings' (the harbor connector's floor).
    """

    def __init__(self, spec: Spec, argv: list[str], settings: Settings, *, env: dict[str, str] | None = None,
                 timeout: float | None = None, max_line_bytes: int = MAX_LINE_BYTES,
                 max_line_values: int = MAX_LINE_VALUES) -> None:
        self.spec = spec
        self.argv = argv
        self.env = env
        self.timeout = timeout if timeout is not None else settings.request_timeout
        self.start_timeout = settings.start_timeout
        self.stop_timeout = settings.stop_timeout
        self.max_line_bytes = max_line_bytes
        self.max_line_values = max_line_values
        self.validate = settings.validate
        self.codec = settings.codec
        self.broken = ""
        self.workdir: Path = groups.new_workdir()
        self.process: _Process | None = None
        self.last: _Process | None = None  # the latest process, running or not: its stderr tail
        self.answered: set[int] = set()  # seqs replied to by the running process
        self.batch_fallbacks: list[str] = []  # why each failed batch was asked again one request at a time
        self._asking: int | None = None  # the thread under way with a request (a runner may ask from a lane)
        self._abandoned = False  # closing: no request is sent any more
        self._restarts = 0
        try:
            self.implementation: Implementation = self._start()
        except BaseException:  # a refused start, or the harness interrupted during it: nothing is left behind
            self._kill()
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(own_lane=True)  # another process: asked from a thread of its own

    @property
    def exit_code(self) -> int | None:
        return self.last.popen.poll() if self.last is not None else None

    @property
    def restarts(self) -> int:
        return self._restarts

    @property
    def _live(self) -> _Process:
        """The running process: only asked for between a start and the next kill."""
        assert self.process is not None, "no process is running"
        return self.process

    def _spawn(self) -> _Process:
        try:
            popen = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=self.workdir, env={**(self.env if self.env is not None else os.environ),
                                       groups.TOKEN_ENV: str(self.workdir)}, start_new_session=True,
            )
        except OSError as e:
            raise ConnectError(f"{self.spec}: cannot start {self.argv[0]!r}: {e}") from None
        self.answered = set()
        self.process = self.last = _Process(popen, str(self.workdir), self.max_line_bytes, self.max_line_values,
                                            self.codec)
        groups.record_owner(self.workdir, popen.pid)  # for the next run, should this harness be killed outright
        return self.process

    def stderr_tail(self) -> str:
        return self.last.stderr.text() if self.last is not None else ""

    def _request(self, message: dict[str, Any], timeout: float) -> Received:
        """Send one request and wait for its line, ``timeout`` s for both."""
        deadline = time.monotonic() + timeout
        return self._live.send(self.codec.dump_line(message), deadline) or self._live.receive(deadline)

    def _closed(self, closed: Closed, when: str = "") -> Reply:
        """The process stopped answering (it exited, or closed stdout): a crash, with its stderr tail."""
        code = closed.code
        if code is None:  # stdout ended: the exit it usually comes with may be a moment behind
            try:
                code = self._live.popen.wait(timeout=EXIT_AFTER_EOF)
            except subprocess.TimeoutExpired:
                pass
        self._kill()
        if code is None:
            what = "closed its stdout (killed)"
        elif closed.held:
            what = f"exited with status {code}; a process it started held its stdout open (stopped with it)"
        else:
            what = f"exited with status {code}"
        return Reply(ReplyKind.CRASH, detail=f"{what}{when}\n{self.stderr_tail()}".rstrip("\n"))

    def _start(self) -> Implementation:
        self._spawn()
        received = self._request({"cmd": "start", "protocol": PROTOCOL_VERSION}, self.start_timeout)
        if isinstance(received, Line):
            try:
                return check_started(received.message, self.spec, self.validate)
            except ConnectError as e:
                self._kill()
                raise StartFailure(str(e), replies.protocol_error(ProtocolError.BAD_HANDSHAKE, str(e))) from None
        if isinstance(received, Closed):
            reply = self._closed(received, " before the handshake")
        elif isinstance(received, Broke):
            reply = self._lost(received.problem)
        else:
            reply = self._lost(Reply(ReplyKind.TIMEOUT, detail=f"no handshake within {self.start_timeout:g}s"))
        raise StartFailure(f"{self.spec}: no handshake: {reply.detail}", reply)

    def _kill(self) -> None:
        """Stop the process and all it started; the next request starts it again."""
        if self.process is not None:
            self.process.end()  # kept until it is done: if an interrupt cuts this short, close() tries again
            self.process = None

    def _lost(self, reply: Reply) -> Reply:
        """The process is out of step (hung, or said something wrong): kill it; the next request restarts it."""
        self._kill()
        return reply

    def _ensure_running(self) -> Reply | None:
        """Restart a process that was killed or has exited; what went wrong if it cannot be."""
        if self.process is not None and self.process.popen.poll() is None:
            return None
        self._kill()
        try:
            self.implementation = self._start()
        except StartFailure as e:
            return Reply(e.reply.kind, detail=f"could not restart: {e.reply.detail}", error=e.reply.error)
        except ConnectError as e:
            return Reply(ReplyKind.CRASH, detail=f"could not restart: {e}")
        self._restarts += 1
        return None

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        self._asking = threading.get_ident()
        try:
            return self._run(seq, surface, input_wire)
        finally:
            self._asking = None

    def _run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        if self._abandoned:
            return self._not_answered()
        if (failed := self._ensure_running()) is not None:
            return failed
        if (stray := self._live.stray()) is not None:
            return self._lost(stray)
        received = self._request({"cmd": "run", "seq": seq, "surface": surface, "input": input_wire}, self.timeout)
        if isinstance(received, Abandoned):
            return self._not_answered()
        if isinstance(received, Silent):
            return self._lost(Reply(ReplyKind.TIMEOUT, detail=f"no reply within {self.timeout:g}s"))
        if isinstance(received, Closed):
            return self._closed(received)
        if isinstance(received, Broke):
            return self._lost(received.problem)
        reply = replies.checked(received.message, seq, surface, self.implementation, answered=self.answered,
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
        self._asking = threading.get_ident()
        try:
            return self._run_batch(items)
        finally:
            self._asking = None

    def _run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        if self._abandoned:
            return [self._not_answered() for _ in items]
        none: list[Reply | None] = [None] * len(items)
        if not self.implementation.batch or len(items) < 2 or self._ensure_running() is not None:
            return none
        if (stray := self._live.stray()) is not None:
            return [self._lost(stray), *none[1:]]
        batch_seq = items[0][0]
        message = {"cmd": "batch", "seq": batch_seq,
                   "items": [{"seq": seq, "surface": surface, "input": value} for seq, surface, value in items]}
        received = self._request(message, self.timeout)
        if isinstance(received, Abandoned):
            return [self._not_answered() for _ in items]
        if isinstance(received, Silent):
            return self._fallback(none, "timeout")
        if isinstance(received, Closed):
            return self._fallback(none, "eof")
        if isinstance(received, Broke):
            return self._fallback(none, str(received.problem.error))
        answers = replies.batch_answers(received.message, batch_seq, len(items))
        if answers is None:
            return self._fallback(none, "not a batch reply of one reply per item")
        out: list[Reply | None] = []
        for (seq, surface, _), answer in zip(items, answers, strict=True):
            out.append(replies.checked(answer, seq, surface, self.implementation, answered=self.answered,
                                       validate=self.validate))
            self.answered.add(seq)
        return out

    def _fallback(self, none: list[Reply | None], why: str) -> list[Reply | None]:
        self.batch_fallbacks.append(why)
        self._kill()
        return none

    def _not_answered(self) -> Reply:
        return Reply(ReplyKind.TIMEOUT, detail="not answered: the harness was stopping")

    def _stop_under_other_thread(self) -> None:
        """Closed while another thread waits on a request (the harness interrupted while a runner's lane asks):
        that thread gives up waiting within a poll slice, as an interrupted wait would, and sends nothing more;
        then the process is stopped as always (``stop``, its exit, its group)."""
        self._abandoned = True
        if self.process is not None:
            self.process.abandoned = True
        if self._asking is None or self._asking == threading.get_ident():
            return
        deadline = time.monotonic() + self.stop_timeout
        while self._asking is not None and time.monotonic() < deadline:
            time.sleep(POLL_SLICE / 5)

    def close(self) -> Reply | None:
        """Send ``stop`` and wait for the process to exit; one that does not is killed: a ``timeout``.

        Whatever happens meanwhile (an interrupt included), the process group
        is stopped and the working directory removed.
        """
        problem = None
        self._stop_under_other_thread()
        try:
            process = self.process
            if process is not None and not process.pipes_closed and process.popen.poll() is None:
                deadline = time.monotonic() + self.stop_timeout
                process.abandoned = False  # this thread's own wait for the exit
                process.discarding = True  # a reply to nothing, or anything else, from here on is dropped
                process.send(self.codec.dump_line({"cmd": "stop"}), deadline)
                process.close_stdin()
                if not process.wait_exit(deadline):
                    problem = Reply(ReplyKind.TIMEOUT,
                                    detail=f"still running {self.stop_timeout:g}s after `stop`; killed")
        finally:
            self._kill()
            shutil.rmtree(self.workdir, ignore_errors=True)
        return problem
