"""The scoring surfaces: each one a folder, declared once by a decorated input model.

A surface names one scoring behaviour. The suite's own live in
``conformance/surfaces/<name>/`` (see docs/extending.md), one folder each:

    __init__.py   the declaration: ``@surface(name, ...)`` on the input model
    strategy.py   the Hypothesis strategy drawing its inputs
    reference.py  the reference candidate's answer (``answer(request)``)
    mutants.py    one-bug mutants of the reference (``MUTANTS``)
    coverage.py   which of harbor's functions it covers (``TARGETS``), or why none
    features.py   the kinds of input its strategy is meant to reach (``FEATURES``), each with its minimum share
    harbor.py     what the harbor oracle runs for it (standard library and harbor only,
                  loaded by path inside the oracle's virtualenv: ``serve(context)``)

Every part but the declaration is found by its file name, so the generic
layers iterate :data:`SURFACES` and never name a surface. Another package
declares a surface the same way, as a folder (a package) or a single module,
and lists it in the entry-point group ``harbor_conformance.surfaces``.
Declarations name what they use as ``module:attr`` strings (``.module:attr``
is relative to the surface's own package), loaded on first use.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter

from conformance.core import scope
from conformance.core.compare import NanPolicy
from conformance.core.features import Feature
from conformance.core.loading import import_object
from conformance.core.registry import Registry

# The parts of a surface folder the harness runs in its own process; every other module of the folder belongs to
# the oracle's side (harbor.py and what it loads), whose code is part of the oracle's identity.
HARNESS_PARTS = frozenset({"__init__", "strategy", "reference", "mutants", "coverage", "connector", "features"})


@dataclass(frozen=True)
class Bench:
    """How ``nox -s bench`` measures a surface.

    ``generated``: measured on many generated inputs run as cases are (its
    inputs are cheap), instead of its cases; ``targets``: a figure's name
    (``exec inputs/s``, ``exec / raw``, ``wire / plain JSON``, ``draws ÷
    yardstick``: its strategy's draws per second over a yardstick strategy's,
    ``ci examples/s``: a generator's inputs per second in the ``ci`` profile,
    ``campaign inputs/s``: a campaign worker's, its tasks one after another)
    and the value it should reach on a 2-core machine.
    """

    generated: bool = False
    targets: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Surface:
    name: str
    summary: str
    input_model: type[BaseModel]
    output: str  # the output's shape, in words
    spec: str  # the section of the scoring spec it checks
    strategy: str | None = None  # "module:attr" of the Hypothesis strategy drawing its inputs
    policy: NanPolicy = NanPolicy.ANY
    # Paths of output dicts whose key order harbor leaves to chance (built from a set).
    unordered: frozenset[str] = frozenset()
    # How an exception's message is read, where the message is part of the answer ("module:attr" of a
    # callable message -> code or None): reward.parse's messages reach agent-challenge as reason codes.
    message_reader: str | None = None
    # Exception classes by which the oracle turns an input away before any scoring (an unknown metric name, a
    # config its model refuses): answering them alike checks no score. A surface where every input ran was answered
    # so warns (RunWarning.REJECTED_BEFORE_SCORING). Empty where every exception is part of the scoring.
    rejections: frozenset[str] = frozenset()
    # The implementation that answers for this surface instead of the default oracle (a candidate spec).
    oracle: str | None = None
    # Inputs sent together in one `batch` message (1: one request at a time, for inputs that run a whole
    # job); ``alone`` picks inputs that run something slow (a uv-script) and go on their own.
    batch_size: int = 256
    alone: Callable[[Any], bool] | None = None
    # A profile's budget of generated inputs, times this: for a surface whose inputs are cheap and whose
    # input space is wide (two grammars, Unicode tables, a model's coercions), where a rule's inputs are rare.
    examples_scale: int = 1
    # Whether the oracle's answers may be kept across runs (conformance.connection.cached): only when an answer
    # is a function of the input alone, never of time, chance or the machine. ``cache_note`` says why (or why not).
    cacheable: bool = True
    cache_note: str = "a pure function of its input"
    # Connector kinds this surface brings ("module:attr" of each connector), e.g. evsys.metric's `evsys:NAME`.
    connectors: tuple[str, ...] = ()
    bench: Bench = Bench()
    # The type of an answer's value (a pydantic type: a model, or an annotation such as dict[str, float]); its
    # JSON Schema is published, and every recorded output in the corpus must validate against it.
    output_model: Any = Any
    # The module that declares it: a surface folder's package, or a plugin's module.
    package: str = ""

    # -- the folder's parts ---------------------------------------------------------------------

    @property
    def folder(self) -> Path | None:
        """The surface's folder: its package's directory (None for a surface declared in a plain module)."""
        module = sys.modules.get(self.package)
        file = getattr(module, "__file__", None)  # a module object's optional attribute, not a capability probe
        return Path(file).parent if file and Path(file).name == "__init__.py" else None

    def part(self, name: str) -> str | None:
        """The dotted name of the folder's module ``name`` (``strategy``, ``reference``...), None without it."""
        folder = self.folder
        return f"{self.package}.{name}" if folder is not None and (folder / f"{name}.py").is_file() else None

    def resolve(self, target: str) -> str:
        """``module:attr``, with ``.module:attr`` read relative to the surface's package."""
        return f"{self.package}{target}" if target.startswith(".") else target

    @property
    def reference(self) -> str | None:
        """``module:attr`` of the reference candidate's answer for this surface, when the folder has one."""
        module = self.part("reference")
        return f"{module}:answer" if module else None

    @property
    def mutants(self) -> str | None:
        module = self.part("mutants")
        return f"{module}:MUTANTS" if module else None

    @property
    def coverage(self) -> str | None:
        module = self.part("coverage")
        return f"{module}:TARGETS" if module else None

    @property
    def features(self) -> tuple[Feature, ...]:
        """The kinds of input its strategy is meant to reach (the folder's ``FEATURES``; none without one)."""
        module = self.part("features")
        return tuple(import_object(f"{module}:FEATURES")) if module else ()

    @property
    def harbor_side(self) -> Path | None:
        """The folder's ``harbor.py``: what the harbor oracle runs for this surface (None: harbor serves it not)."""
        folder = self.folder
        return folder / "harbor.py" if folder is not None and (folder / "harbor.py").is_file() else None

    def oracle_files(self) -> list[Path]:
        """The files the oracle's side of this surface runs: harbor.py and the folder's other non-harness modules."""
        folder = self.folder
        if folder is None or self.harbor_side is None:
            return []
        return sorted(path for path in folder.glob("*.py") if path.stem not in HARNESS_PARTS)

    # -- behaviour ------------------------------------------------------------------------------

    def batchable(self, value: Any) -> bool:
        return self.batch_size > 1 and not (self.alone and self.alone(value))

    def inputs(self) -> Any:
        """The Hypothesis strategy of this surface's inputs (imports Hypothesis), within the suite's scope.

        Whatever the named strategy draws, an input :func:`scope.out_of_scope`
        leaves out never comes out of it (the shipped strategies draw none:
        the filter is what guarantees it for every strategy).
        """
        if self.strategy is None:
            raise LookupError(f"surface {self.name!r} declares no generator")
        from hypothesis.strategies import SearchStrategy

        found = import_object(self.resolve(self.strategy))
        drawn: SearchStrategy[Any] = found if isinstance(found, SearchStrategy) else found()
        return drawn.filter(scope.in_scope)

    def read_message(self, message: str) -> str | None:
        """What an exception's message means on this surface (its reason code); None where messages are not read."""
        if self.message_reader is None:
            return None
        reader: Callable[[str], str | None] = import_object(self.resolve(self.message_reader))
        return reader(message)

    def rejected(self, raised: str | None) -> bool:
        """Whether an oracle answer that raised ``raised`` (a class name; None: no exception) turned the input
        away before any scoring."""
        return raised is not None and raised in self.rejections

    def validate_input(self, value: Any) -> None:
        """Raise pydantic.ValidationError when ``value`` is not an input of this surface."""
        self.input_model.model_validate(value)

    def output_adapter(self) -> TypeAdapter[Any]:
        """The output type's validator and JSON Schema (strict: an answer's types are part of it)."""
        if isinstance(self.output_model, type) and issubclass(self.output_model, BaseModel):
            return TypeAdapter(self.output_model)  # a model is strict by its own config (StrictOutput)
        return TypeAdapter(self.output_model, config=ConfigDict(strict=True))


# The suite's own surfaces are the folders of conformance.surfaces, imported (by name) on the first lookup.
SURFACES: Registry[Surface] = Registry("surface", "harbor_conformance.surfaces", builtin="conformance.surfaces")


def surface(name: str, **declaration: Any) -> Callable[[type[BaseModel]], type[BaseModel]]:
    """Decorator: the input model becomes the surface ``name`` (the other fields as in :class:`Surface`)."""

    def declare(model: type[BaseModel]) -> type[BaseModel]:
        found = Surface(name=name, input_model=model, package=model.__module__, **declaration)
        SURFACES.register(name, origin=model.__module__)(found)
        return model

    return declare


def with_generators(names: list[str] | None = None) -> list[str]:
    """The surfaces (of ``names``, or all) that declare a generator, in declaration order."""
    return [s.name for s in SURFACES.values() if s.strategy and (not names or s.name in names)]


def get(name: str) -> Surface:
    return SURFACES.get(name)


def whole_job() -> list[str]:
    """The surfaces whose inputs go one request at a time (each runs a whole trial or job)."""
    return [s.name for s in SURFACES.values() if s.batch_size == 1]
