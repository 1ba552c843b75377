"""Writing an expectation file: a new one, or the user's own file changed in place.

``dump`` writes a new file. ``rewritten`` changes an existing one with
ruamel.yaml's round-trip mode, so that what a person wrote there (comments,
the order of keys and entries, hand-folded reasons) stays.
"""

from __future__ import annotations

import io
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.error import YAMLError as RoundTripError
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
from ruamel.yaml.scalarstring import FoldedScalarString, LiteralScalarString
from ruamel.yaml.tokens import CommentToken
from ruamel.yaml.util import load_yaml_guess_indent

from conformance.core.outcomes import Outcome
from conformance.run.expectations import DATES, ExpectationError, ExpectationFile, KnownDivergence, entry_key

HEADER = ("# Known divergences of this candidate from the oracle, by case id: `conformance certify\n"
          "# --expectations FILE` turns them into xfail. Refresh with `conformance expectations update`.\n")
WIDTH = 110  # where long reasons are folded, in a new file and a rewritten one alike


def _entry_data(entry: KnownDivergence) -> dict[str, object]:
    """An entry as it is written: no ``classes`` key for a fail without any; dates as dates (a date as text
    would be written quoted)."""
    data = entry.model_dump(mode="json", exclude_none=True)
    if data.get("outcome") == "fail" and data.get("classes") == []:
        data.pop("classes")
    return {key: getattr(entry, key) if key in DATES else value for key, value in data.items()}


def dump(document: ExpectationFile) -> str:
    """A new file: the header comment, then the document."""
    return HEADER + _body(document)


def _body(document: ExpectationFile) -> str:
    data = document.model_dump(mode="json", exclude_none=True)
    data["divergences"] = [_entry_data(e) for e in document.divergences]
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=WIDTH)


class _Dumper(yaml.SafeDumper):
    """Lists of plain strings (mismatch classes) on one line; no anchors (an entry's two equal dates are one
    object, and ``first_seen: &id001 ...`` is no way to write a date)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


_Dumper.add_representer(list, lambda dumper, value: dumper.represent_sequence(
    "tag:yaml.org,2002:seq", value, flow_style=all(isinstance(v, str) for v in value) and bool(value)))


def rewritten(text: str, previous: ExpectationFile, document: ExpectationFile) -> str:
    """``text``, the file ``previous`` was read from, changed to list ``document``'s divergences.

    Written back in ruamel.yaml's round-trip mode, so that the comments and
    the order of keys and entries stay: an entry still listed gets its new
    ``outcome``, ``classes`` and dates in place, a dropped one goes with its own
    comments (those beside and inside it, and the comment lines right above
    it that no blank line separates from it), and new entries go at the end.
    """
    round_trip = _round_trip(text)
    try:
        root = round_trip.load(text)
    except RoundTripError as e:  # what PyYAML read and ruamel.yaml cannot: rare, but still the user's file
        raise ExpectationError(f"cannot rewrite in place: {e}") from None
    if not isinstance(root, CommentedMap):  # empty, or comments only: they go first
        return text.rstrip("\n") + "\n" + _body(document) if text.strip() else dump(document)
    for key, value in (("candidate", document.candidate), ("oracle", document.oracle)):
        if value is not None and root.get(key) != value:
            if key in root:
                root[key] = value
            else:
                root.insert(list(root).index("candidate") + 1 if "candidate" in root else 0, key, value)
    if not isinstance(root.get("divergences"), CommentedSeq):
        root["divergences"] = CommentedSeq()
    _rewrite_entries(root, previous, document)
    out = io.StringIO()
    round_trip.dump(root, out)
    return _as_written(text, out.getvalue())


def _round_trip(text: str) -> YAML:
    """A round-trip reader and writer that indents as ``text`` does."""
    _, indent, dash = load_yaml_guess_indent(text)
    round_trip = YAML()
    round_trip.preserve_quotes = True
    round_trip.width = WIDTH
    round_trip.representer.ignore_aliases = lambda data: True  # as _Dumper: no anchors on shared dates
    if indent is not None:
        round_trip.indent(mapping=indent - (dash or 0), sequence=indent, offset=dash or 0)
    return round_trip


def _rewrite_entries(root: CommentedMap, previous: ExpectationFile, document: ExpectationFile) -> None:
    # ruamel.yaml keeps the comment lines between two entries with the entry above (in the slot of the comment
    # beside its last line, under that comment) or, at times, with the list (above the item below). They are
    # taken out as the gaps between entries; the entries are changed, dropped and added; and each gap is put
    # back under the entry above it. So a comment stays above the entry it was above, and what followed the
    # last entry (the file's closing comment, say) stays last.
    entries: CommentedSeq = root["divergences"]
    slot = _slot(root, "divergences")
    gaps = [_lines(slot[3])] + [_split_off(*_tail(entry)) for entry in entries]
    for index, item in entries.ca.items.items():
        if item[1] is not None and item[1] is not slot[3]:
            gaps[index] += _lines(item[1])
        item[1] = None
    wanted = {e.key: e for e in document.divergences}
    before = {e.key: e for e in previous.divergences}
    kept: list[CommentedMap] = []
    kept_gaps = gaps[:1]
    for entry, after in zip(entries, gaps[1:], strict=True):
        key = _written_key(entry)
        if key in wanted:
            _update(entry, before[key], wanted[key])
            kept.append(entry)
            kept_gaps.append(after)
        else:
            kept_gaps[-1] = _without_own_comment(kept_gaps[-1]) + after
    for new in (e for e in document.divergences if e.key not in before):
        kept.append(_new_entry(new))
        kept_gaps.insert(-1, "")
    del entries[:]
    entries.extend(kept)
    slot[3] = [CommentToken(kept_gaps[0], CommentMark(0))] if kept_gaps[0] and kept else None
    for entry, after in zip(kept, kept_gaps[1:], strict=True):
        _attach(after, *_tail(entry))
    if kept:
        entries.fa.set_block_style()  # ``divergences: []`` becomes a list of entries
    elif kept_gaps[0].strip():  # ``divergences: []`` can have no comment under it: above it, then
        lines = "".join(line.lstrip() if line.strip() else line for line in kept_gaps[0].splitlines(keepends=True))
        slot[1] = [*(slot[1] or []), CommentToken(lines, CommentMark(0))]


def _written_key(entry: CommentedMap) -> str:
    """The key of an entry as the file has it (the file was checked: its outcome and classes are sound)."""
    return entry_key(str(entry["id"]), str(entry.get("outcome", Outcome.FAIL.value)),
                     [str(c) for c in entry.get("classes") or []])


def _lines(tokens: list[CommentToken] | None) -> str:
    """Comment lines kept as a list of tokens, each at its column."""
    return "".join(" " * token.start_mark.column + token.value for token in tokens or [])


def _slot(node: CommentedMap, key: str) -> list[Any]:
    """The comments ruamel.yaml keeps for a key: above it [1], beside its value [2], above a list value's
    first item [3]."""
    slot: list[Any] = node.ca.items.setdefault(key, [None, None, None, None])
    return slot


def _tail(entry: CommentedMap) -> tuple[list[Any], int, bool]:
    """Where the comment after an entry's last line is kept (its slot list and the index in it), and whether
    it starts with the comment beside that line (a block scalar ends with its line break: it has none)."""
    key = list(entry)[-1]
    value = entry[key]
    if isinstance(value, CommentedSeq) and value and not value.fa.flow_style():
        items: list[Any] = value.ca.items.setdefault(len(value) - 1, [None, None, None, None])
        return items, 0, True
    return _slot(entry, key), 2, not isinstance(value, LiteralScalarString | FoldedScalarString)


def _split_off(slot: list[Any], index: int, beside: bool = True) -> str:
    """The lines of the comment in ``slot[index]`` under the one beside the line, which stays."""
    token = slot[index]
    if token is None:
        return ""
    own, after = token.value.split("\n", 1) if beside and "\n" in token.value else ("", token.value)
    slot[index] = CommentToken(own + "\n", token.start_mark) if own.strip() else None
    return str(after)


def _attach(lines: str, slot: list[Any], index: int, beside: bool = True) -> None:
    """Comment lines under those in ``slot[index]``."""
    if lines:
        token = slot[index]
        slot[index] = CommentToken((token.value if token else "\n" if beside else "") + lines,
                                   token.start_mark if token else CommentMark(0))


def _without_own_comment(lines: str) -> str:
    """Comment lines less those at their end, which stand right above an entry: that entry's own."""
    kept = lines.splitlines(keepends=True)
    while kept and kept[-1].lstrip().startswith("#"):
        kept.pop()
    return "".join(kept)


def _update(entry: CommentedMap, old: KnownDivergence, new: KnownDivergence) -> None:
    if old.outcome != new.outcome and ("outcome" in entry or new.outcome != Outcome.FAIL):
        _set(entry, "outcome", new.outcome.value, after="id")
    if old.classes != new.classes and ("classes" in entry or new.classes):
        was = entry.get("classes")
        classes = CommentedSeq(new.classes)
        if isinstance(was, CommentedSeq) and was and not was.fa.flow_style() and new.classes:
            classes.fa.set_block_style()
        else:
            classes.fa.set_flow_style()
        _set(entry, "classes", classes, after="outcome" if "outcome" in entry else "id")
    for index, key in enumerate(DATES):
        if getattr(old, key) != getattr(new, key):
            # A new date goes right after the date before it (last_seen after first_seen), or last.
            before = [k for k in DATES[:index] if k in entry]
            _set(entry, key, getattr(new, key), after=before[-1] if before else list(entry)[-1])


def _set(entry: CommentedMap, key: str, value: object, after: str) -> None:
    """A value in place (the comment beside it kept), or a new key right after ``after``, above the comment
    lines that were under that one."""
    if key in entry:
        entry[key] = value
    elif after not in entry:
        entry.insert(0, key, value)
    else:
        lines = _split_off(_slot(entry, after), 2)
        entry.insert(list(entry).index(after) + 1, key, value)
        _attach(lines, _slot(entry, key), 2)


def _new_entry(entry: KnownDivergence) -> CommentedMap:
    data = CommentedMap(_entry_data(entry))
    if "classes" in data:
        data["classes"] = classes = CommentedSeq(data["classes"])
        classes.fa.set_flow_style()
    return data


def _as_written(before: str, after: str) -> str:
    """``after`` with each scalar whose value did not change spelled as in ``before``.

    ruamel.yaml folds a long scalar at its own width and joins one folded by
    hand; putting the untouched ones back keeps every line of an unchanged
    entry as it was. Anything but the same values with it and ``after`` stays.
    """
    old, new = _scalars(before), _scalars(after)
    edits = []
    for where, node in new.items():
        was = old.get(where)
        if was is None or (was.value, was.style) != (node.value, node.style):
            continue
        # With the spaces after it: a comment beside the scalar was put at its old column, past the folded end.
        spelled = before[was.start_mark.index:_spaces_after(before, was.end_mark.index)]
        end = _spaces_after(after, node.end_mark.index)
        if after[node.start_mark.index:end] != spelled:
            edits.append((node.start_mark.index, end, spelled))
    restored = after
    for start, end, spelled in sorted(edits, reverse=True):
        restored = restored[:start] + spelled + restored[end:]
    if restored == after:
        return after
    try:
        same = yaml.safe_load(restored) == yaml.safe_load(after)
    except yaml.YAMLError:
        same = False
    return restored if same else after


def _spaces_after(text: str, index: int) -> int:
    return len(text) - len(text[index:].lstrip(" "))


def _scalars(text: str) -> dict[tuple[str, ...], Any]:
    """The flow scalars a file gives the top-level keys and its entries' keys, by key (and entry id)."""
    root = YAML().compose(text)
    found: dict[tuple[str, ...], Any] = {}
    if not isinstance(root, MappingNode):
        return found
    for key, value in root.value:
        if isinstance(value, ScalarNode) and value.style not in ("|", ">"):
            found[(key.value,)] = value
        if key.value != "divergences" or not isinstance(value, SequenceNode):
            continue
        for item in value.value:
            if not isinstance(item, MappingNode):
                continue
            scalars = {k.value: v for k, v in item.value
                       if isinstance(v, ScalarNode) and v.style not in ("|", ">")}
            if "id" in scalars:
                classes = next((v for k, v in item.value if k.value == "classes" and isinstance(v, SequenceNode)), None)
                key = entry_key(scalars["id"].value, scalars["outcome"].value if "outcome" in scalars else "fail",
                                [c.value for c in classes.value] if classes is not None else [])
                found.update({("divergences", key, k): v for k, v in scalars.items()})
    return found
