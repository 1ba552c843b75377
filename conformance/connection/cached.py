"""A harbor oracle behind the answer cache: harbor is asked only what it has not answered before.

Every run's oracle is connected through :func:`connect` (``certify``, the
upgrade gate's baseline, the pytest plugin, campaign workers), so each gets
the cache by construction; ``--no-oracle-cache`` connects without it. The
answers live in :mod:`conformance.oracle.answers`, keyed by the oracle's
identity, the surface and the input's canonical wire form.

Only an ``output`` or a ``raised`` reply is kept, and only on a surface that
declares its answers cacheable (``Surface.cacheable``): an errored, skipped,
crashed or timed-out reply, or a protocol error, is passed on as it is and
asked again next time. A stored answer that cannot be read back is a miss,
and the fresh answer replaces it.

harbor is started on the first miss, not before: its handshake is stored
with its answers, so a run whose every answer is stored never starts it.
Without a stored handshake it is started at once, so a harbor that cannot
start is the run's usage error, as without the cache; one that cannot start
later answers each miss with the reason (an ``oracle crash``), as a harbor
that cannot restart after a crash does.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from conformance.connection import connectors
from conformance.connection.base import BaseConnection, Capabilities, ConnectError, Connection, StartFailure, silent
from conformance.connection.protocol import Implementation
from conformance.connection.replies import Reply
from conformance.connection.spec import Spec
from conformance.core import surfaces
from conformance.core.outcomes import ReplyKind
from conformance.core.registry import RegistryError
from conformance.kit import wire
from conformance.oracle import answers, environments


def connect(spec: Spec, *, log: Callable[[str], object] = silent) -> Connection:
    """The oracle ``spec`` names, behind the answer cache; without it for a spec other than ``harbor==VERSION``
    (nothing pins what another implementation answers). ConnectError as :func:`connectors.connect` raises it."""
    def start() -> Connection:
        log(f"starting the oracle, {spec.text}")
        return connectors.connect(spec, log=log)

    if spec.harbor_version is None:
        return start()
    try:
        oracle = answers.identity(spec.harbor_version, log)
    except environments.OracleSetupError as e:
        raise ConnectError(str(e)) from None
    connection = CachedOracle(spec, oracle, answers.AnswerStore(warn=log), start)
    if not connection.started:
        log(f"the oracle, {spec.text}: its answers from the cache, started on the first one the cache lacks")
    return connection


def answered_from_cache(connection: Connection | None) -> int:
    """How many replies ``connection`` took from the cache so far (0 for a connection without it)."""
    if isinstance(connection, CachedOracle):
        return connection.hits
    return sum(answered_from_cache(member) for member in connection.members) if connection is not None else 0


def _entry(reply: Reply) -> str | None:
    """What is stored of a reply: an output's wire form or a raised exception, as the protocol says them."""
    if reply.kind is ReplyKind.OUTPUT:
        encoded = reply.encoded if reply.encoded is not None else wire.encode(reply.value)
        return json.dumps({"output": encoded}, separators=(",", ":"))
    if reply.kind is ReplyKind.RAISED:
        return json.dumps({"raised": {"type": reply.value, "message": reply.detail}}, separators=(",", ":"))
    return None  # nothing else is an answer


def _reply(entry: str) -> Reply | None:
    """A stored answer as the reply it was; None (a miss) for anything that is not one."""
    try:
        stored = json.loads(entry)
        if not isinstance(stored, dict) or len(stored) != 1:
            return None
        if "output" in stored:
            return Reply(ReplyKind.OUTPUT, wire.decode(stored["output"]), encoded=stored["output"])
        raised = stored.get("raised")
        if isinstance(raised, dict) and isinstance(raised.get("type"), str) and isinstance(raised.get("message"), str):
            return Reply(ReplyKind.RAISED, raised["type"], raised["message"])
    except (ValueError, RecursionError):  # not JSON, not a wire value (WireError is a ValueError), nested too deep
        pass
    return None


def _implementation(stored: str | None) -> Implementation | None:
    if stored is None:
        return None
    try:
        return Implementation.model_validate_json(stored)
    except ValidationError:
        return None


class CachedOracle(BaseConnection):
    """A harbor connection that answers from the cache where it can, and stores what harbor answers."""

    def __init__(self, spec: Spec, oracle: answers.Identity, store: answers.AnswerStore,
                 start: Callable[[], Connection]) -> None:
        self.spec = spec
        self.oracle = oracle
        self.store = store
        self.hits = 0  # replies taken from the cache
        self._start = start
        self._live: Connection | None = None
        self._start_failure: Reply | None = None
        self._handshake = _implementation(store.implementation(oracle.digest))
        if self._handshake is None:
            self._connect()

    def _connect(self) -> Connection:
        self._live = live = self._start()
        if live.implementation is not None:
            self.store.put_oracle(self.oracle, live.implementation.model_dump_json())
        return live

    def _harbor(self) -> Connection | Reply:
        """harbor, started on the first miss; or the reply each miss gets when it cannot start."""
        if self._live is not None:
            return self._live
        if self._start_failure is None:
            try:
                return self._connect()
            except StartFailure as e:
                self._start_failure = Reply(e.reply.kind, detail=f"the oracle did not start: {e.reply.detail}",
                                            error=e.reply.error)
            except ConnectError as e:
                self._start_failure = Reply(ReplyKind.CRASH, detail=f"the oracle did not start: {e}")
        return dataclasses.replace(self._start_failure)

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(own_lane=True)  # harbor's process, once a miss starts it; the store's reads meanwhile

    @property
    def exit_code(self) -> int | None:
        return self._live.exit_code if self._live is not None else None

    @property
    def started(self) -> bool:
        return self._live is not None

    @property
    def implementation(self) -> Implementation | None:
        return self._live.implementation if self._live is not None else self._handshake

    @property
    def broken(self) -> str:
        return self._live.broken if self._live is not None else ""

    @property
    def batch_fallbacks(self) -> list[str]:
        return self._live.batch_fallbacks if self._live is not None else []

    def _key(self, surface: str, input_wire: Any) -> bytes | None:
        """The input's key; None where its answer is not kept."""
        try:
            if not surfaces.get(surface).cacheable:
                return None
            return answers.key(self.oracle.digest, surface, input_wire)
        except (RegistryError, TypeError, ValueError, RecursionError):  # no such surface; no wire value
            return None

    def _stored(self, keys: list[bytes | None]) -> list[Reply | None]:
        found = self.store.get([k for k in keys if k is not None])
        replies = [_reply(found[k]) if k is not None and k in found else None for k in keys]
        self.hits += sum(reply is not None for reply in replies)
        return replies

    def _keep(self, answered: list[tuple[bytes | None, str, Reply | None]]) -> None:
        self.store.put(self.oracle.digest, [(k, surface, entry) for k, surface, reply in answered
                                            if k is not None and reply is not None
                                            and (entry := _entry(reply)) is not None])

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        key = self._key(surface, input_wire)
        stored = self._stored([key])[0]
        if stored is not None:
            return stored
        harbor = self._harbor()
        if isinstance(harbor, Reply):
            return harbor
        reply = harbor.run(seq, surface, input_wire)
        self._keep([(key, surface, reply)])
        return reply

    def run_batch(self, items: list[tuple[int, str, Any]]) -> list[Reply | None]:
        """The stored replies, and harbor's to the rest in one batch; None where the caller asks singly (a lone
        miss, or a batch harbor could not answer whole), which :meth:`run` looks up again, then asks."""
        keys = [self._key(surface, value) for _, surface, value in items]
        replies = self._stored(keys)
        misses = [i for i, reply in enumerate(replies) if reply is None]
        if len(misses) < 2:
            return replies
        harbor = self._harbor()
        answered = ([dataclasses.replace(harbor) for _ in misses] if isinstance(harbor, Reply)
                    else harbor.run_batch([items[i] for i in misses]))
        for i, reply in zip(misses, answered, strict=True):
            replies[i] = reply
        self._keep([(keys[i], items[i][1], replies[i]) for i in misses])
        return replies

    def close(self) -> Reply | None:
        try:
            return self._live.close() if self._live is not None else None
        finally:
            self.store.close()
