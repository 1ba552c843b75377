"""The candidate kit's working folder: the files an input names, as the current directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.candidate import working_folder


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
