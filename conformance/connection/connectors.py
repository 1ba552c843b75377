"""The table of connectors: each kind of spec, how it is recognised and how it is connected to.

    exec:COMMAND       any program speaking the protocol on stdin/stdout
    harbor==VERSION    a harbor release in its cached virtualenv (the oracle is one)
    module:attr        a Python object, in process
    NAME               a registered candidate: ``register_candidate(NAME)``, or an entry
                       point in the ``harbor_conformance.candidates`` group

A spec string is parsed once, at the edge, by :func:`parse` into a
:class:`~conformance.connection.spec.Spec`; :func:`connect` hands it to the
connector of its kind. Another package adds a kind by registering a
connector in the table (or through the entry-point group
``harbor_conformance.connectors``), and a surface by declaring the kinds it
brings (``connectors=``: ``evsys:NAME`` is the evsys.metric surface's); the
first connector, in registration order, that recognises a spec serves it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from conformance.connection.base import (
    DEFAULT_TIMEOUT,
    ConnectError,
    Connection,
    Settings,
    import_target,
    silent,
)
from conformance.connection.harbor import HarborConnector
from conformance.connection.in_process import InProcess
from conformance.connection.process import Subprocess
from conformance.connection.spec import Spec
from conformance.core import surfaces
from conformance.core.loading import import_object
from conformance.core.registry import Registry
from conformance.oracle import environments


class Connector(Protocol):
    """One kind of spec: ``target`` recognises its text (the part the kind is given), ``connect`` starts it."""

    kind: str
    usage: str  # how the kind is written, for messages and help
    description: str

    def target(self, text: str) -> str | None: ...

    def connect(self, spec: Spec, settings: Settings) -> Connection: ...


# Candidates by name: an object with handle(request), or a spec string (module:attr, exec:COMMAND, ...).
CANDIDATES: Registry[Any] = Registry("candidate", "harbor_conformance.candidates")
register_candidate = CANDIDATES.register
register_candidate("reference", origin="conformance")("conformance.reference:candidate")


def _absolute_if_path(arg: str) -> str:
    """The candidate runs in a fresh temporary directory: paths given relative to here are made absolute."""
    if arg.startswith("-") or not os.path.exists(arg):
        return arg
    return os.path.abspath(arg)


def _in_process_target(spec: Spec, obj: Any) -> Any:
    if callable(getattr(obj, "handle", None)):
        return obj
    raise ConnectError(f"{spec}: {obj!r} is not a candidate (it needs a handle(request) method)")


class ExecConnector:
    kind = "exec"
    usage = "exec:COMMAND"
    description = "any program speaking the protocol on stdin/stdout"

    def target(self, text: str) -> str | None:
        return text[len("exec:"):] if text.startswith("exec:") else None

    def connect(self, spec: Spec, settings: Settings) -> Connection:
        argv = [_absolute_if_path(arg) for arg in shlex.split(spec.target)]
        if not argv:
            raise ConnectError("exec: needs a command, e.g. exec:'python -m conformance.reference'")
        return Subprocess(spec, argv, settings, env=environments.script_environment())


class PythonConnector:
    kind = "python"
    usage = "module:attr"
    description = "a Python object with handle(request), in process"

    def target(self, text: str) -> str | None:
        return text if ":" in text else None

    def connect(self, spec: Spec, settings: Settings) -> Connection:
        return InProcess(spec, _in_process_target(spec, import_target(spec, spec.target)), validate=settings.validate)


class RegisteredConnector:
    kind = "registered"
    usage = "NAME"
    description = "a registered candidate (register_candidate, or the entry-point group harbor_conformance.candidates)"

    def target(self, text: str) -> str | None:
        return text if ":" not in text and text in CANDIDATES else None

    def connect(self, spec: Spec, settings: Settings) -> Connection:
        registered = CANDIDATES.get(spec.target)
        if not isinstance(registered, str):
            return InProcess(spec, _in_process_target(spec, registered), validate=settings.validate)
        inner = parse(registered)
        # Served by the kind its registration names, reported under the name it was asked for.
        return _connector(inner.kind).connect(Spec(spec.text, inner.kind, inner.target), settings)


def _register_builtin() -> None:
    """The suite's kinds, with the surfaces' own before ``module:attr``, which would read ``evsys:x`` as a module.

    Run on the table's first lookup, not at import: the surfaces' registry (and any broken entry point in it) is
    read by the command that connects, whose error is printed as any other.
    """
    CONNECTORS.register(ExecConnector.kind, origin="conformance")(ExecConnector())
    CONNECTORS.register(HarborConnector.kind, origin="conformance")(HarborConnector())
    for surface in surfaces.SURFACES.values():
        for target in surface.connectors:
            connector: Connector = import_object(surface.resolve(target))()
            CONNECTORS.register(connector.kind, origin=surface.package)(connector)
    CONNECTORS.register(PythonConnector.kind, origin="conformance")(PythonConnector())
    CONNECTORS.register(RegisteredConnector.kind, origin="conformance")(RegisteredConnector())


CONNECTORS: Registry[Connector] = Registry("connector", "harbor_conformance.connectors", builtin=_register_builtin)
# The built-in reference candidate's spec, as parse("reference") gives it, without reading the tables (a default
# of the commands, made when they are imported).
REFERENCE = Spec("reference", RegisteredConnector.kind, "reference")


def _connector(kind: str) -> Connector:
    return CONNECTORS.get(kind)


def parse(text: str) -> Spec:
    """The spec ``text`` names; ConnectError naming the kinds there are when no connector recognises it."""
    for connector in CONNECTORS.values():
        target = connector.target(text)
        if target is not None:
            return Spec(text, connector.kind, target)
    kinds = [c.usage for c in CONNECTORS.values() if c.kind != RegisteredConnector.kind]
    raise ConnectError(f"unknown candidate {text!r}: use one of {', '.join(CANDIDATES.names())}, "
                       + ", ".join(kinds))


def connect(spec: Spec | str, *, timeout: float = DEFAULT_TIMEOUT, timeout_multiplier: float = 1.0,
            validate: bool = False, coverage_data: Path | None = None,
            log: Callable[[str], object] = silent) -> Connection:
    """Connect to what ``spec`` names (a string is parsed first); the settings are those of :class:`Settings`."""
    spec = parse(spec) if isinstance(spec, str) else spec
    return connect_with(spec, Settings(timeout, timeout_multiplier, validate, coverage_data, log))


def connect_with(spec: Spec, settings: Settings) -> Connection:
    """Connect to what ``spec`` names, as ``settings`` say: for a caller that holds both as values already."""
    if settings.coverage_data is not None and spec.harbor_version is None:
        raise ConnectError(f"{spec}: coverage is measured only for harbor==VERSION, the oracle's own code")
    if settings.timeout_multiplier <= 0 or settings.timeout <= 0:
        raise ConnectError(f"{spec}: timeouts must be positive (timeout {settings.timeout}, "
                           f"multiplier {settings.timeout_multiplier})")
    return _connector(spec.kind).connect(spec, settings)
