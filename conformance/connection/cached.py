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

Before the cache, the answers that ship with the suite
(:mod:`conformance.oracle.recordings`) are looked up: they need no
virtualenv, so the oracle's identity, which names the virtualenv's
interpreter, is only learnt (and the virtualenv only created) for an input
the recordings lack.

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
from conformance.oracle import answers, environments, recordings


def connect(spec: Spec, *, log: Callable[[str], object] = silent, recorded: bool = True) -> Connection:
    """The oracle ``spec`` names, behind the answer cache; without it for a spec other than ``harbor==VERSION``
    (nothing pins what another implementation answers). ConnectError as :func:`connectors.connect` raises it.
    ``recorded``: the suite's recorded answers looked up first (not while they are being recorded)."""
    def start() -> Connection:
        log(f"starting the oracle, {spec.text}")
        return connectors.connect(spec, log=log)

    if spec.harbor_version is None:
        return start()
    version = spec.harbor_version
    shipped = recordings.load(version) if recorded else None
    if shipped is not None:
        log(f"the oracle, {spec.text}: its answers from the suite's recordings and the cache; its virtualenv "
            "made and harbor started on the first input neither has")
        return CachedOracle(spec, lambda: answers.identity(version, log), answers.AnswerStore(warn=log), start,
                            shipped=shipped)
    try:
        oracle = answers.identity(version, log)
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


def answered_from_recordings(connection: Connection | None) -> int:
    """How many replies ``connection`` took from the suite's recordings so far."""
    if isinstance(connection, CachedOracle):
        return connection.shipped_hits
    return sum(answered_from_recordings(member) for member in connection.members) if connection is not None else 0


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
    """A harbor connection that answers from the suite's recordings and the cache where it can, and stores what
    harbor answers.

    ``identity``: the oracle's identity, asked for when the cache is first needed (with ``shipped``, that is on
    the first input the recordings lack: it creates the virtualenv); without ``shipped``, at once.
    """

    def __init__(self, spec: Spec, identity: answers.Identity | Callable[[], answers.Identity],
                 store: answers.AnswerStore, start: Callable[[], Connection], *,
                 shipped: recordings.Recording | None = None) -> None:
        self.spec = spec
        self.store = store
        self.shipped = shipped
        self.hits = 0  # replies taken from the cache
        self.shipped_hits = 0  # replies taken from the recordings
        self._identity = identity if callable(identity) else (lambda: identity)
        self._oracle: answers.Identity | None = None
        self._start = start
        self._live: Connection | None = None
        self._start_failure: Reply | None = None
        if shipped is not None:
            self._handshake = _implementation(shipped.header.implementation)
        else:
            self._handshake = _implementation(store.implementation(self._known().digest))
            if self._handshake is None:
                self._connect()

    def _known(self) -> answers.Identity:
        if self._oracle is None:
            self._oracle = self._identity()
        return self._oracle

    @property
    def oracle(self) -> answers.Identity | None:
        """The oracle's identity, once learnt."""
        return self._oracle

    def _cache_digest(self) -> str | None:
        """The identity's digest the cache keys by; None (the cache unused) when it cannot be learnt: the miss
        that asked gets the reason from harbor's start."""
        if self._start_failure is not None and self._oracle is None:
            return None
        try:
            return self._known().digest
        except environments.OracleSetupError as e:
            self._start_failure = Reply(ReplyKind.CRASH, detail=f"the oracle did not start: {e}")
            return None

    def _connect(self) -> Connection:
        self._live = live = self._start()
        if live.implementation is not None:
            self.store.put_oracle(self._known(), live.implementation.model_dump_json())
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
            except (ConnectError, environments.OracleSetupError) as e:
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
    def working(self) -> bool:
        return self.started  # the store's reads cost next to nothing

    @property
    def implementation(self) -> Implementation | None:
        return self._live.implementation if self._live is not None else self._handshake

    @property
    def broken(self) -> str:
        return self._live.broken if self._live is not None else ""

    @property
    def batch_fallbacks(self) -> list[str]:
        return self._live.batch_fallbacks if self._live is not None else []

    def _key(self, digest: str | None, surface: str, input_wire: Any) -> bytes | None:
        """The input's key under an oracle's identity digest; None where its answer is not kept."""
        try:
            if digest is None or not surfaces.get(surface).cacheable:
                return None
            return answers.key(digest, surface, input_wire)
        except (RegistryError, TypeError, ValueError, RecursionError):  # no such surface; no wire value
            return None

    def _stored(self, items: list[tuple[str, Any]]) -> tuple[list[Reply | None], list[bytes | None]]:
        """The replies the recordings, then the cache, hold for (surface, input) items, and each item's key in
        the cache (None for every item when only the recordings were looked in)."""
        replies: list[Reply | None] = [None] * len(items)
        if self.shipped is not None:
            recorded = self.shipped.header.identity.digest
            for i, (surface, value) in enumerate(items):
                key = self._key(recorded, surface, value)
                found = self.shipped.answers.get(key) if key is not None else None
                replies[i] = _reply(found) if found is not None else None
            self.shipped_hits += sum(reply is not None for reply in replies)
            if all(reply is not None for reply in replies):
                return replies, [None] * len(items)
        digest = self._cache_digest()
        keys = [self._key(digest, surface, value) if replies[i] is None else None
                for i, (surface, value) in enumerate(items)]
        found_in_cache = self.store.get([k for k in keys if k is not None])
        for i, key in enumerate(keys):
            if key is not None and key in found_in_cache and (reply := _reply(found_in_cache[key])) is not None:
                replies[i] = reply
                self.hits += 1
        return replies, keys

    def _keep(self, answered: list[tuple[bytes | None, str, Reply | None]]) -> None:
        if self._oracle is None:
            return
        self.store.put(self._oracle.digest, [(k, surface, entry) for k, surface, reply in answered
                                             if k is not None and reply is not None
                                             and (entry := _entry(reply)) is not None])

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        (stored,), (key,) = self._stored([(surface, input_wire)])
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
        replies, keys = self._stored([(surface, value) for _, surface, value in items])
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
