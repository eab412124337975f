"""harness/regular_file.py: a cell file is read only when it is a regular file; a FIFO, a device
or a directory in its place is refused by name, without opening it (a FIFO would block)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.regular_file import NotARegularFileError, open_regular, read_regular


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_bytes(b"{}")
    assert read_regular(tmp_path / "manifest.json") == b"{}"
    with open_regular(tmp_path / "manifest.json") as handle:
        assert handle.read() == b"{}"


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda p: os.mkfifo(p), "a FIFO (named pipe)"),
        (lambda p: p.mkdir(), "a directory"),
        (lambda p: p.symlink_to("/dev/null"), "a character device"),
    ],
    ids=["fifo", "directory", "device"],
)
def test_anything_else_is_refused_without_blocking(tmp_path: Path, make, what: str) -> None:
    path = tmp_path / "manifest.json"
    make(path)
    with pytest.raises(NotARegularFileError) as caught:
        read_regular(path)  # a FIFO opened for reading would wait here for a writer forever
    assert str(caught.value) == f"it is {what}, not a file (refused without reading it)"
    assert caught.value.strerror == str(caught.value)


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "nothing")
