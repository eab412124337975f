"""Open a cell's file only if it is a regular file: a FIFO, socket or device put where a cell file
should be is refused without being opened (opening a FIFO for reading blocks until a writer comes,
so a merge would wait forever; a device may never end).

The kind is checked before the open (stat), the open cannot block (O_NONBLOCK), and the kind is
checked again on the descriptor, so what is read is what was checked.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Final

_KINDS: Final = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


class NotARegularFileError(OSError):
    """The path is there but is not a regular file; str() says what it is."""

    def __str__(self) -> str:
        return str(self.strerror)


def _refuse(path: Path, mode: int) -> NotARegularFileError:
    what = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return NotARegularFileError(errno.EINVAL, f"it is {what}, not a file (refused without reading it)")


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading in binary; OSError (FileNotFoundError, PermissionError,
    NotARegularFileError...) when it cannot or must not be read."""
    path = Path(path)
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise _refuse(path, mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped between the check and the open
            raise _refuse(path, mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path) -> bytes:
    with open_regular(path) as handle:
        return handle.read()
