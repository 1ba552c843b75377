"""The shape of an input: what of it tells one bug from another, with the data left out.

A generator keeps several findings of one kind (outcome and most severe
mismatch class) when their minimal inputs differ in shape. The shape is the
input's structure with its data replaced by categories:

- a map keeps the keys its surface's input model names (``reward_txt``,
  ``steps``, ``raises``); other keys are data (a reward's name), kept as
  their type. An enumerated field (a ``Literal``, e.g. ``raises_in``) keeps
  its value, and so does a free-form object's ``type`` member (a registry
  metric's ``{"type": "mean"}``): a tag picks the code path that runs;
- a list is the set of its items' shapes: neither its length, nor its order,
  nor how often a shape recurs;
- a leaf is its category: ``null``, ``bool``, ``int``, ``float``, ``nan``,
  ``inf``, ``str``;
- a file's bytes are their token class: ``empty``, ``undecodable`` (not
  UTF-8), ``blank`` (whitespace only), ``number:<category>`` (what ``float()``
  reads, e.g. ``number:nan``), the shape of the JSON value it holds (a JSON
  object's keys are data), or ``text``.

Shapes nest at most :data:`MAX_DEPTH` levels; deeper is ``...``.

One shape *covers* another when it has all the other has, and maybe more:
a map every key of the other with a covering value, and the same kept
values (a tag, an enumerated field: present in both with one value, or in
neither), a list a covering item for each of the other's. An input whose shape covers a finding's shape is
taken as that finding again (the same bug, with something beside it), so a
second finding of a kind is one that no smaller input of a known shape
explains.
"""

from __future__ import annotations

import functools
import json
import math
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from conformance.core import surfaces

Shape = Any  # a str, or a hashable tuple: ("map", frozenset of (label, shape)), ("list", frozenset), ("is", value)
MAX_DEPTH = 8
DEEPER = "..."
TAG = "type"  # the member of a free-form object that names its kind


@functools.cache
def _vocabulary(model: type[BaseModel]) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """The field names of ``model`` and of every model inside it, and each enumerated field's values."""
    fields: set[str] = set()
    enumerated: dict[str, frozenset[str]] = {}
    seen: set[type[BaseModel]] = set()

    def visit(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation not in seen:
                seen.add(annotation)
                for name, info in annotation.model_fields.items():
                    fields.add(name)
                    values = frozenset(_literals(info.annotation))
                    if values:
                        enumerated[name] = enumerated.get(name, frozenset()) | values
                    visit(info.annotation)
        elif get_origin(annotation) is not Literal:
            for argument in get_args(annotation):
                visit(argument)

    visit(model)
    return frozenset(fields), enumerated


def _literals(annotation: Any) -> list[str]:
    origin = get_origin(annotation)
    if origin is Literal:
        return [value for value in get_args(annotation) if isinstance(value, str)]
    if origin is Union or origin is types.UnionType:
        return [value for argument in get_args(annotation) for value in _literals(argument)]
    return []


def _number(value: float) -> str:
    return "nan" if math.isnan(value) else "inf" if math.isinf(value) else "float"


def _leaf(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return "str"
    return type(value).__name__


class _Reader:
    def __init__(self, fields: frozenset[str] = frozenset(), enumerated: dict[str, frozenset[str]] | None = None,
                 tags: bool = True) -> None:
        self.fields, self.enumerated, self.tags = fields, enumerated or {}, tags

    def shape(self, value: Any, depth: int = 0) -> Shape:
        if depth >= MAX_DEPTH:
            return DEEPER
        if isinstance(value, dict):
            return ("map", frozenset(self._entry(key, item, depth) for key, item in value.items()))
        if isinstance(value, list | tuple):
            return ("list", frozenset(self.shape(item, depth + 1) for item in value))
        if isinstance(value, bytes):
            return token_class(value, depth)
        return _leaf(value)

    def _entry(self, key: Any, item: Any, depth: int) -> tuple[Any, Shape]:
        named = isinstance(key, str) and key in self.fields
        if isinstance(item, str) and (item in self.enumerated.get(key, ()) or (self.tags and key == TAG and not named)):
            return key, ("is", item)
        return (key if named else _leaf(key)), self.shape(item, depth + 1)


_DATA = _Reader(tags=False)  # a JSON file's content: every key is data


def token_class(data: bytes, depth: int = 0) -> Shape:
    """The token class of a file's bytes (see the module's docstring)."""
    if not data:
        return "empty"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "undecodable"
    if not text.strip():
        return "blank"
    try:
        return f"number:{_number(float(text))}"
    except ValueError:
        pass
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return "text"
    return _DATA.shape(parsed, depth)


def shape_of(surface_name: str, value: Any) -> Shape:
    """The shape of an input of the surface ``surface_name``."""
    fields, enumerated = _vocabulary(surfaces.get(surface_name).input_model)
    return _Reader(fields, enumerated).shape(value)


def _tags(shape: Shape) -> frozenset[tuple[Any, Shape]]:
    return frozenset(entry for entry in shape[1] if isinstance(entry[1], tuple) and entry[1][0] == "is")


def covers(big: Shape, small: Shape) -> bool:
    """Whether ``big`` has everything ``small`` has (and maybe more)."""
    if big == small:
        return True
    if not (isinstance(big, tuple) and isinstance(small, tuple) and big[0] == small[0]):
        return False
    if big[0] == "map":
        if _tags(big) != _tags(small):
            return False  # a tag or an enumerated value picks a path: another one (or none) is not "something beside"
        return all(any(label == wanted and covers(item, inner) for label, item in big[1]) for wanted, inner in small[1])
    if big[0] == "list":
        return all(any(covers(item, inner) for item in big[1]) for inner in small[1])
    return False
