"""YAML for case files: safe loading, explicit tags for lossless values, and a lint.

No float is ever left to the YAML loader (PyYAML reads ``1e3`` and ``1.0e3`` as
strings and ``1.0e+3`` as a float; YAML 1.1 reads ``012`` as octal and ``on`` as true), so
case files spell values with tags:

    !float 0.5          a float from a decimal literal, inf, -inf, nan, -nan
    !float bits:7ff8000000000001   a float by its 16 hex digit bit pattern
    !bytes "1\\n"        the UTF-8 bytes of a string
    !hex "ef bb bf 31"   bytes by hex digits (spaces ignored)
    !file scripts/x.py  the bytes of a file beside the case file (a relative path inside its folder)

Plain ints are allowed in canonical decimal form only; plain booleans only as
``true``/``false``. :func:`lint` finds every plain scalar that breaks this.

A case file can name no code to run (any other non-standard tag, ``!!python/...``
included, is refused) and no file outside the corpus; anchors and aliases are
refused too. Nesting and the number of values are bounded (:data:`NESTING_LIMIT`,
:data:`VALUE_LIMIT`: checked on the event stream as the document is composed,
before anything is built), and so is a plain int's length
(:data:`INT_DIGITS_LIMIT`); the file's own size and type are checked before it
is read (:mod:`conformance.corpus.files`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, NoReturn, TypeVar, cast

import yaml

from conformance.corpus.files import FILE_LIMIT, FileProblem, read_limited
from conformance.kit.wire import bits_to_float

if TYPE_CHECKING:
    from conformance.core.compare import Result

T = TypeVar("T")

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_SPECIAL = {"inf": "inf", "+inf": "inf", "-inf": "-inf", "nan": "nan", "+nan": "nan", "-nan": "-nan"}
_BITS = re.compile(r"bits:([0-9a-fA-F]{16})")
_CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]*")  # not "-0": meant as -0.0, read as 0

# Collections inside collections, the document's own mapping included. A mapping in an input is three levels
# of the wire form ({"dict": [[key, value]]}), and a report line cannot hold a value nested deeper than about
# 255 levels (pydantic's serializer): 64 keeps every case writable, with room to spare.
NESTING_LIMIT = 64
# Values (scalars, lists and maps) in one case file. Each costs about 450 bytes while the file is composed and
# checked, so a file of tiny values would take 150 times its size; the largest the suite ships has under 2000.
VALUE_LIMIT = 100_000
# Digits of a plain int: the wire form's limit (CPython's int/str conversion limit), so every side can read it.
INT_DIGITS_LIMIT = 4300


def shown(text: str, limit: int = 60) -> str:
    """``text`` as an error message quotes it: its repr, cut at ``limit`` characters with its length."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}… ({len(text)} characters)"


def _float_advice(text: str) -> str:
    special = {".inf": "inf", "+.inf": "inf", "-.inf": "-inf", ".nan": "nan"}.get(text.lower())
    if special:
        return f"write !float {special}"
    if _DECIMAL.fullmatch(text.replace("_", "")) and "_" not in text and len(text) <= 60:
        return f"write !float {text}"
    return "write it with !float in decimal, or quote it if it is a string"


class LimitError(yaml.composer.ComposerError):
    """A document past :data:`NESTING_LIMIT` or :data:`VALUE_LIMIT`: found on the event stream, before anything
    is built."""

    problem: str
    problem_mark: yaml.Mark

    def __init__(self, problem: str, mark: yaml.Mark) -> None:
        super().__init__(None, None, problem, mark)


class AliasError(yaml.composer.ComposerError):
    """An anchor or an alias in a case file; ``node`` is the document with each alias composed as null."""

    # Always set by __init__ (MarkedYAMLError has them optional).
    problem: str
    problem_mark: yaml.Mark

    def __init__(self, node: yaml.Node | None, mark: yaml.Mark) -> None:
        super().__init__(None, None, "anchors and aliases (&name, *name) are not allowed in a case file; "
                                     "write the value out", mark)
        self.node = node


@dataclass(frozen=True)
class FileRead:
    """A file a ``!file`` tag read: where it led, and a digest of the bytes it held then."""

    path: Path
    resolved: Path
    digest: str

    @classmethod
    def of(cls, path: Path, data: bytes) -> FileRead:
        return cls(path, path.resolve(), hashlib.sha256(data).hexdigest())

    @classmethod
    def refused(cls, path: Path) -> FileRead:
        """A read that failed: it never holds, so the case file is parsed again to say why, or to succeed."""
        return cls(path, path, "")

    def holds(self) -> bool:
        """Whether the path still leads to the same place and the same bytes."""
        if not self.digest:
            return False
        try:
            return (self.path.resolve() == self.resolved
                    and hashlib.sha256(read_limited(self.path, FILE_LIMIT, "a !file")).hexdigest() == self.digest)
        except (OSError, FileProblem):
            return False


if yaml.__with_libyaml__:
    class _Loader(yaml.composer.Composer, yaml.CSafeLoader):
        """libyaml's events (ten times faster than the pure-Python scanner) under PyYAML's own composer,
        so every node still passes :meth:`CaseLoader.compose_node`."""

        def __init__(self, stream: str) -> None:
            yaml.CSafeLoader.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
else:  # a PyYAML built without libyaml: the same, slower
    _Loader = yaml.SafeLoader  # type: ignore[misc,assignment]


class CaseLoader(_Loader):
    """A safe loader plus the value tags; it can construct nothing executable."""

    base_dir: Path | None = None  # the case file's folder, for !file
    reads: list[FileRead]  # what each !file read, so a cached parse can tell whether it still holds
    _alias_mark: yaml.Mark | None = None  # the first anchor or alias
    _depth = 0  # collections open around the node being composed
    _values = 0  # nodes composed so far

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.reads = []

    # Aliases share one node, so nested ones (an "alias bomb") make a value, and validating it,
    # exponential in the file's size. Each alias is composed as null, never as what it names, and
    # the document is refused once composed (the error keeps it, to name the case).
    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()
        if event is not None and (isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None):
            # libyaml's marks carry the line and column as PyYAML's do, which is all a node's are read for
            start, end = cast("yaml.Mark", event.start_mark), cast("yaml.Mark", event.end_mark)
            self._alias_mark = self._alias_mark or start
            if isinstance(event, yaml.AliasEvent):
                self.get_event()
                return yaml.ScalarNode("tag:yaml.org,2002:null", "", start, end)
        self._values += 1
        if self._values > VALUE_LIMIT and event is not None:
            raise LimitError(f"more than {VALUE_LIMIT} values (scalars, lists and maps): a case file may hold at "
                             "most that many; split it", cast("yaml.Mark", event.start_mark))
        if not isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            return super().compose_node(parent, index)
        # The composer recurses once a level: the depth is checked before it goes down, so a deep file is refused
        # at its first level too many, never by a RecursionError.
        if self._depth >= NESTING_LIMIT:
            raise LimitError(f"nested deeper than {NESTING_LIMIT} levels (lists and maps inside one another): a "
                             "case file may nest at most that deep", cast("yaml.Mark", event.start_mark))
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self) -> yaml.Node | None:
        node = super().compose_document()
        if self._alias_mark is not None:
            raise AliasError(node, self._alias_mark)
        return node


def parse_float_literal(text: str) -> float:
    text = text.strip()
    if (m := _BITS.fullmatch(text)) is not None:
        return bits_to_float(int(m.group(1), 16))
    if text.lower() in _SPECIAL:
        return float(_SPECIAL[text.lower()])
    if _DECIMAL.fullmatch(text):
        return float(text)
    raise ValueError(
        f"!float takes a decimal literal, inf, -inf, nan, -nan or bits:<16 hex digits>, got {shown(text)}"
    )


def _construct(parse: Callable[[str], T]) -> Callable[[yaml.SafeLoader, yaml.Node], T]:
    def constructor(loader: yaml.SafeLoader, node: yaml.Node) -> T:
        if not isinstance(node, yaml.ScalarNode):
            raise yaml.constructor.ConstructorError(
                None, None, f"{node.tag} takes a scalar", node.start_mark
            )
        try:
            return parse(loader.construct_scalar(node))
        except ValueError as e:
            raise yaml.constructor.ConstructorError(None, None, str(e), node.start_mark) from None

    return constructor


def _hex(text: str) -> bytes:
    return bytes.fromhex("".join(text.split()))


def _int(loader: CaseLoader, node: yaml.Node) -> int:
    text = loader.construct_scalar(node) if isinstance(node, yaml.ScalarNode) else ""
    digits = len(text.lstrip("+-").replace("_", ""))
    if digits > INT_DIGITS_LIMIT:  # int() would refuse it with a ValueError, or take long, past the limit
        raise yaml.constructor.ConstructorError(
            None, None, f"a plain int of {digits} digits: at most {INT_DIGITS_LIMIT} (the wire form's limit); quote "
                        "it if it is a string", node.start_mark)
    value: int = yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)  # type: ignore[arg-type]
    return value


CaseLoader.add_constructor("tag:yaml.org,2002:int", _int)
CaseLoader.add_constructor("!float", _construct(parse_float_literal))
CaseLoader.add_constructor("!bytes", _construct(lambda text: text.encode("utf-8")))
CaseLoader.add_constructor("!hex", _construct(_hex))


def _file(loader: CaseLoader, node: yaml.Node) -> bytes:
    text = loader.construct_scalar(node) if isinstance(node, yaml.ScalarNode) else None
    problem = None
    if not text:
        problem = "!file takes a relative path"
    elif loader.base_dir is None:
        problem = "!file is only allowed in a case file"
    else:
        relative = PurePosixPath(text)
        target = loader.base_dir / relative
        # The corpus is the folder holding the surface folders: a link may lead to another
        # surface's files (cases/job.result/scripts does), never out of the corpus.
        corpus = loader.base_dir.parent.resolve()
        if relative.is_absolute() or ".." in relative.parts:
            problem = f"!file {text!r} must be a relative path inside the case file's folder"
        elif not target.resolve().is_relative_to(corpus):
            problem = f"!file {text!r} leads out of the corpus (through a symbolic link)"
        else:
            try:
                data = read_limited(target, FILE_LIMIT, "a !file")
            except FileProblem as e:
                problem = f"!file {text!r}: {e}"
            else:
                loader.reads.append(FileRead.of(target, data))
                return data
    loader.reads.append(FileRead.refused((loader.base_dir or Path()) / (text or "")))  # parsed afresh until it reads
    raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)


def _undefined(loader: CaseLoader, node: yaml.Node) -> NoReturn:
    # Every tag without a constructor, !!python/object/apply:... among them.
    tag = node.tag.replace("tag:yaml.org,2002:", "!!", 1)
    raise yaml.constructor.ConstructorError(
        None,
        None,
        f"tag {tag} is not allowed in a case file; the value tags are !float, !bytes, !hex and !file",
        node.start_mark,
    )


CaseLoader.add_constructor("!file", _file)
CaseLoader.add_constructor(None, _undefined)


@dataclass(frozen=True)
class LintProblem:
    line: int  # 1-based
    message: str


def lint(node: yaml.Node) -> list[LintProblem]:
    """Plain scalars that the YAML loader would turn into a float or an ambiguous value."""
    problems: list[LintProblem] = []
    stack = [node]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                stack.extend((key, value))
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
        elif isinstance(current, yaml.ScalarNode) and not current.style:  # plain: None in PyYAML, "" in libyaml
            line = current.start_mark.line + 1
            if current.tag == "tag:yaml.org,2002:float":
                problems.append(LintProblem(
                    line, f"plain {shown(current.value)} would be a float chosen by the YAML loader; "
                          f"{_float_advice(current.value)}"))
            elif current.tag == "tag:yaml.org,2002:int" and not _CANONICAL_INT.fullmatch(current.value):
                problems.append(LintProblem(
                    line, f"plain {shown(current.value)} is not a canonical decimal int; "
                          f"write it in decimal or quote it"))
            elif current.tag == "tag:yaml.org,2002:bool" and current.value not in ("true", "false"):
                problems.append(LintProblem(
                    line, f"plain {shown(current.value)} is a YAML 1.1 boolean; write true/false or quote it"))
            elif current.tag == "tag:yaml.org,2002:str" and _DECIMAL.fullmatch(current.value):
                problems.append(LintProblem(
                    line, f"plain {shown(current.value)} reads as a string but looks like a number; "
                          + (f"write !float {current.value}" if len(current.value) <= 60 else "write it with !float")
                          + " or quote it"))
    problems.sort(key=lambda p: p.line)
    return problems


def _float_literal(value: float) -> str:
    import math

    from conformance.kit.wire import float_to_bits

    if math.isnan(value):
        return "nan" if float_to_bits(value) == float_to_bits(float("nan")) else f"bits:{float_to_bits(value):016x}"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


_SHORT_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar: printable ASCII as is, everything else escaped."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _key(text: str) -> str:
    # YAML caps implicit keys at 1024 characters; longer ones need the explicit "? " form.
    return text if len(text) < 1000 else f"? {text}"


def render(value: object) -> str:
    """A value in case-file YAML (flow style, tags for floats and bytes)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"!float {_float_literal(value)}"
    if isinstance(value, bytes):
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            return f'!hex "{value.hex(" ")}"'
        return f"!bytes {_quoted(text)}"
    if isinstance(value, str):
        return _quoted(value)
    if isinstance(value, list):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(render(k))}: {render(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no case-file form for {type(value).__name__}")


def render_expect(result: Result) -> str:
    """A recorded result (a :class:`conformance.core.compare.Result`) as a case's ``expect:`` value."""
    if result.raised is None:
        return f"{{output: {render(result.value)}}}"
    code = f", reason_code: {result.reason_code}" if result.reason_code else ""
    return f"{{raised: {result.raised}{code}}}"
