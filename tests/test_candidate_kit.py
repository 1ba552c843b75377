"""The candidate kit's working folder: the files an input names, as the current directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.kit.candidate import working_folder


def test_files_are_written_under_their_relative_names_and_cwd_is_restored():
    before = os.getcwd()
    with working_folder({"m.py": b"a", "sub/dir/n.py": b"\x00b"}) as folder:
        assert Path.cwd() == folder
        assert Path("m.py").read_bytes() == b"a" and Path("sub/dir/n.py").read_bytes() == b"\x00b"
    assert os.getcwd() == before and not folder.exists()


def test_cwd_is_restored_when_the_body_raises():
    before = os.getcwd()
    with pytest.raises(RuntimeError), working_folder(None):
        raise RuntimeError("boom")
    assert os.getcwd() == before


@pytest.mark.parametrize("name", ["/abs.py", "../up.py", "a/../../up.py", ""])
def test_names_that_leave_the_folder_are_refused(name):
    before = os.getcwd()
    with pytest.raises(ValueError, match="relative"), working_folder({name: b"x"}):
        pass
    assert os.getcwd() == before


def test_distinct_keys_keeps_every_repeat_of_a_json_key():
    import json

    from conformance.kit.candidate import distinct_keys

    assert json.loads('{"nan": [0], "nan": [1], "nan": [2]}', object_pairs_hook=distinct_keys) == {
        "nan": [0], "nan (2)": [1], "nan (3)": [2]}
    # A repeat never overwrites a key that is already there under that name.
    assert json.loads('{"a": 1, "a (2)": 5, "a": 2}', object_pairs_hook=distinct_keys) == {
        "a": 1, "a (2)": 5, "a (3)": 2}
