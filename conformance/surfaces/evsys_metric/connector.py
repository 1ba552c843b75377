"""evsys-style metric plugins as candidates: ``evsys:NAME`` or ``evsys:module:attr``.

evsys-sdk's metric contract is an object (or class) with a ``name`` and
``compute(task_rewards) -> float``, registered by name and shipped through
the entry-point group ``evsys_sdk.metrics``. Any such plugin is certified on
the evsys.metric surface against the built-in semantics of its name
(``mean_reward``, ``avg``, ``pass_rate``, ``pass@k``, ``pass^k``): its
handshake claims that one metric (see :mod:`conformance.core.scope`).

``NAME`` is looked up in the entry-point group, then in evsys-sdk's own
registry when evsys-sdk is installed.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

from conformance.connection.base import ConnectError, Connection, Settings, import_target
from conformance.connection.in_process import InProcess
from conformance.connection.spec import Spec
from conformance.kit.candidate import Candidate, SkipSurface
from conformance.surfaces.evsys_metric.evsys_sdk import get_metric

EVSYS_GROUP = "evsys_sdk.metrics"
PREFIX = "evsys:"


class PluginError(ConnectError):
    """The spec names no usable metric plugin."""


def _from_registry(name: str) -> Any:
    try:
        registry = importlib.import_module("evsys_sdk.registry")
    except ImportError:
        return None
    try:
        return registry.get_metric(name)
    except KeyError:
        return None


def find(target: str) -> tuple[Any, str]:
    """The plugin ``target`` names, and the version of what provides it."""
    if ":" in target:
        return import_target(PREFIX + target, target), "unknown"
    for entry in metadata.entry_points(group=EVSYS_GROUP):
        if entry.name == target:
            version = entry.dist.version if entry.dist is not None else "unknown"
            return entry.load(), version
    found = _from_registry(target)
    if found is not None:
        return found, metadata.version("evsys-sdk")
    known = sorted(e.name for e in metadata.entry_points(group=EVSYS_GROUP))
    raise PluginError(f"no metric plugin {target!r} in the entry-point group {EVSYS_GROUP!r} "
                      f"(found: {', '.join(known) or 'none'}) nor in an installed evsys-sdk; "
                      f"or name it as evsys:module:attr")


def candidate(target: str) -> Candidate:
    """A candidate answering evsys.metric with the plugin, scoped to the plugin's name."""
    plugin, version = find(target)
    if isinstance(plugin, type):  # evsys-sdk registers classes; metrics take no config
        plugin = plugin()
    name = getattr(plugin, "name", None)
    if not isinstance(name, str) or not callable(getattr(plugin, "compute", None)):
        raise PluginError(f"{PREFIX}{target}: {plugin!r} is not a metric (it needs a str `name` and `compute`)")
    try:
        get_metric(name)  # the oracle's transcription decides which names have built-in semantics
    except KeyError:
        raise PluginError(f"{PREFIX}{target}: metric {name!r} has no built-in semantics to be held to "
                          f"(mean_reward, avg, pass_rate, pass@k, pass^k)") from None
    wrapped = Candidate(f"evsys-metric:{name}", str(version), language="python")
    wrapped.scope = {"evsys.metric": {"metric": [name]}}

    @wrapped.surface("evsys.metric")
    def compute(request: dict[str, Any]) -> Any:
        if request["metric"] != name:
            raise SkipSurface(f"this plugin is the metric {name!r}, not {request['metric']!r}")
        return plugin.compute(request["task_rewards"])

    return wrapped


class EvsysConnector:
    kind = "evsys"
    usage = "evsys:NAME"
    description = "an evsys-style metric plugin, on its own metric"

    def target(self, text: str) -> str | None:
        return text[len(PREFIX):] if text.startswith(PREFIX) else None

    def connect(self, spec: Spec, settings: Settings) -> Connection:
        return InProcess(spec, candidate(spec.target), validate=settings.validate)
