"""Connections to implementations: the oracle and every candidate speak one protocol.

The public entry points: :func:`parse` (a spec string to a :class:`Spec`),
:func:`connect`, :func:`register_candidate`, and the :data:`CONNECTORS` table.
"""

from conformance.connection.base import ConnectError, Connection, Settings, StartFailure
from conformance.connection.connectors import CANDIDATES, CONNECTORS, connect, parse, register_candidate
from conformance.connection.replies import Reply
from conformance.connection.spec import Spec

__all__ = ["CANDIDATES", "CONNECTORS", "ConnectError", "Connection", "Reply", "Settings", "Spec", "StartFailure",
           "connect", "parse", "register_candidate"]
