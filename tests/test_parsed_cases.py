"""Case files kept parsed on disk: a later process takes the parse instead of parsing, and only while it still
holds (the same text, the same files read, the same code), from a folder no one else may write in."""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli.app import app
from conformance.corpus import cases, parsed
from conformance.oracle import answers
from conformance.run import stored_inputs
from tests.test_cases_loader import GOOD_REWARD, UV_CASE, write


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """The suite's cache in a folder of the test's own, and the answers and stored inputs with it: `cache clear`
    must not empty the test run's shared ones (tests/conftest.py) under the tests running beside it."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("HARBOR_CONFORMANCE_CACHE", str(folder))
    monkeypatch.setenv(answers.FOLDER_ENV, str(folder / "answers"))
    monkeypatch.setenv(stored_inputs.FOLDER_ENV, str(folder / "inputs"))
    return folder


def later_process(monkeypatch: pytest.MonkeyPatch, *, parses: bool) -> None:
    """What a new process starts with: nothing parsed in memory; with ``parses=False``, a parse fails the test."""
    monkeypatch.setattr(cases, "_LOADED", {})
    monkeypatch.setattr(cases, "_parse", _PARSE if parses else _refuse)


_PARSE = cases._parse


def _refuse(*args: object) -> None:
    pytest.fail("parsed a case file that was kept parsed")


def inputs(root: Path) -> list[object]:
    loaded, errors = cases.check_corpus(root)
    assert errors == []
    return [item.case.input for item in loaded]


def test_a_later_process_takes_the_kept_parse(tmp_path, cache, monkeypatch):
    corpus = tmp_path / "corpus"
    write(corpus, "reward.parse", "good.yaml", GOOD_REWARD)
    first, _ = cases.check_corpus(corpus)
    assert parsed.info().files == 1
    later_process(monkeypatch, parses=False)
    again, errors = cases.check_corpus(corpus)
    assert errors == []
    assert [(item.id, item.file, item.line, item.case.input) for item in again] == \
        [(item.id, item.file, item.line, item.case.input) for item in first] == \
        [("reward.parse::txt-one", corpus / "reward.parse" / "good.yaml", 3, {"reward_txt": b"1"}),
         ("reward.parse::none", corpus / "reward.parse" / "good.yaml", 11, {})]


def test_an_edited_file_is_parsed_again(tmp_path, cache, monkeypatch):
    corpus = tmp_path / "corpus"
    path = write(corpus, "reward.parse", "good.yaml", GOOD_REWARD)
    assert inputs(corpus)[0] == {"reward_txt": b"1"}
    later_process(monkeypatch, parses=True)
    path.write_text(GOOD_REWARD.replace('!bytes "1"', '!bytes "0.5"'), encoding="utf-8")
    assert inputs(corpus)[0] == {"reward_txt": b"0.5"}
    assert parsed.info().files == 2  # each text its own entry


def test_a_file_tag_read_by_a_kept_parse_is_checked_again(tmp_path, cache, monkeypatch):
    scripts = tmp_path / "metric.compute" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "m.py").write_bytes(b"first")
    write(tmp_path, "metric.compute", "uv.yaml", UV_CASE.replace("PATH", "scripts/m.py"))
    assert inputs(tmp_path)[0]["scripts"] == {"m.py": b"first"}
    (scripts / "m.py").write_bytes(b"second")
    later_process(monkeypatch, parses=True)
    assert inputs(tmp_path)[0]["scripts"] == {"m.py": b"second"}
    later_process(monkeypatch, parses=False)  # the new bytes' parse is kept in its turn
    assert inputs(tmp_path)[0]["scripts"] == {"m.py": b"second"}


def test_other_code_does_not_take_the_kept_parse(tmp_path, cache, monkeypatch):
    corpus = tmp_path / "corpus"
    write(corpus, "reward.parse", "good.yaml", GOOD_REWARD)
    inputs(corpus)
    later_process(monkeypatch, parses=True)
    monkeypatch.setattr(parsed, "_code", lambda: "the suite's code once changed")
    calls = []
    parse = cases._parse
    monkeypatch.setattr(cases, "_parse", lambda *args: calls.append(args) or parse(*args))
    assert inputs(corpus)[0] == {"reward_txt": b"1"}
    assert len(calls) == 1


def test_a_damaged_entry_is_parsed_again_and_replaced(tmp_path, cache, monkeypatch):
    corpus = tmp_path / "corpus"
    write(corpus, "reward.parse", "good.yaml", GOOD_REWARD)
    inputs(corpus)
    (entry,) = parsed.folder().glob("*.pickle")
    for damage in (b"", b"\x80\x05not a pickle", pickle.dumps(("a", "tuple", "of", "four"))):
        entry.write_bytes(damage)
        later_process(monkeypatch, parses=True)
        assert inputs(corpus)[0] == {"reward_txt": b"1"}
        later_process(monkeypatch, parses=False)
        assert inputs(corpus)[0] == {"reward_txt": b"1"}


RAN: list[str] = []


def _ran(what: str) -> None:
    RAN.append(what)


class _Runs:
    """A pickle that, when loaded, runs :func:`_ran`."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (_ran, ("loaded",))


@pytest.mark.parametrize("writable", ["folder", "file"])
def test_an_entry_others_may_write_is_never_loaded(tmp_path, cache, monkeypatch, writable):
    """A pickle runs code when loaded: one in a folder, or a file, that another user could have written is not."""
    corpus = tmp_path / "corpus"
    path = write(corpus, "reward.parse", "good.yaml", GOOD_REWARD)
    inputs(corpus)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    (entry,) = parsed.folder().glob("*.pickle")
    entry.write_bytes(pickle.dumps(_Runs()))
    RAN.clear()
    assert parsed.recall(path, digest) is None
    assert RAN == ["loaded"]  # this user's own entry is loaded, and runs
    RAN.clear()
    os.chmod(entry.parent if writable == "folder" else entry, 0o777 if writable == "folder" else 0o666)
    assert parsed.recall(path, digest) is None
    later_process(monkeypatch, parses=True)
    assert inputs(corpus)[0] == {"reward_txt": b"1"}
    assert RAN == []


def test_a_cache_that_cannot_be_written_still_loads(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("HARBOR_CONFORMANCE_CACHE", str(blocker / "below"))
    corpus = tmp_path / "corpus"
    write(corpus, "reward.parse", "good.yaml", GOOD_REWARD)
    assert inputs(corpus)[0] == {"reward_txt": b"1"}
    later_process(monkeypatch, parses=True)
    assert inputs(corpus)[0] == {"reward_txt": b"1"}
    assert parsed.info().files == 0


def test_cache_info_and_clear_show_and_remove_the_kept_parses(tmp_path, cache):
    corpus = tmp_path / "corpus"
    write(corpus, "reward.parse", "good.yaml", GOOD_REWARD)
    write(corpus, "reward.parse", "other.yaml", GOOD_REWARD.replace("txt-one", "txt-two").replace("::none", "::no"))
    inputs(corpus)
    shown = CliRunner().invoke(app, ["cache", "info"], env={"COLUMNS": "300"})
    assert shown.exit_code == 0, shown.output
    assert f"parsed case files: {parsed.folder()}" in shown.output
    assert "2 file(s)" in shown.output
    cleared = CliRunner().invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0, cleared.output
    assert "removed 2 parsed case file(s)" in cleared.output
    assert parsed.info().files == 0


def test_the_oldest_kept_parses_go_past_the_limit(tmp_path, cache, monkeypatch):
    """Each change to the suite's code keys a new set of parses: the oldest written go first, once a process."""
    corpus = tmp_path / "corpus"
    for number in range(5):
        write(corpus, "reward.parse", f"f{number}.yaml", GOOD_REWARD.replace("txt-one", f"one-{number}")
              .replace("::none", f"::none-{number}"))
    inputs(corpus)
    kept = sorted(parsed.folder().glob("*.pickle"), key=lambda file: file.stat().st_mtime)
    assert len(kept) == 5
    for age, file in enumerate(kept):  # written a minute apart, the first oldest
        os.utime(file, (1_000_000 + 60 * age, 1_000_000 + 60 * age))
    monkeypatch.setattr(parsed, "MAX_ENTRIES", 3)
    monkeypatch.setattr(parsed, "_pruned", False)
    later_process(monkeypatch, parses=True)
    monkeypatch.setattr(parsed, "_code", lambda: "the suite's code once changed")  # every kept parse stale
    other = tmp_path / "other"
    write(other, "reward.parse", "good.yaml", GOOD_REWARD)
    inputs(other)
    left = set(parsed.folder().glob("*.pickle"))
    assert len(left) == 3 and set(kept[3:]) <= left and not left & set(kept[:3])
