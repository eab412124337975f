"""What `harness import` is told, checked before anything is written.

Each argument gets one rule and one line when it breaks it: the cell id (a folder and a column),
the backend (a build variant of the registry, listed or recognisable by name), the torch version
(PEP 440 with an optional local tag, read by torch_build.parse_version), the run URL (http or
https), the free texts (one line each), and each input file (a regular file, never followed
through a symbolic link, never a directory, device, FIFO or socket). Arguments are usage errors
(exit 2); an input that cannot be read as a file is an input error (exit 4).

Inputs are opened with O_NOFOLLOW and checked again on the open descriptor (fstat), so a file
swapped for a link between the check and the copy is refused too: what is copied into the cell
is what was checked.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import BinaryIO, Final
from urllib.parse import urlsplit

from harness.cell import argument_cell_id
from harness.errors import InputError, UsageError
from harness.registry import Backend, load_registry
from harness.torch_build import TorchVersion, parse_version

TEXT_CAP: Final = 200  # characters of --device / --runner
URL_CAP: Final = 2_000
NAME_CAP: Final = 100  # characters of a copied file's name (a file system allows 255 bytes)
_CONTROL_RE: Final = re.compile(r"[\x00-\x1f\x7f]")
_UNSAFE_NAME_RE: Final = re.compile(r"[^A-Za-z0-9._-]+")
_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def check_cell_id(text: str) -> str:
    return argument_cell_id(text)  # a bad argument, not a bad file


def check_backend(text: str) -> Backend:
    """A build variant: listed in the registry, or recognisable by name (cu134, rocm10.1). A family
    (cuda, rocm's families) names no runtime, so it is no column of an import."""
    backend = load_registry().get(text) if isinstance(text, str) and not _CONTROL_RE.search(text) else None
    if backend is None:
        listed = ", ".join(load_registry().variants)
        raise UsageError(
            f"--backend: {text!r} is not a build variant",
            hint=f"name one of {listed}, or a variant by its name such as cu134 or rocm10.1; a family such as"
            " 'cuda' says no runtime",
        )
    return backend


def check_torch(text: str) -> TorchVersion | None:
    """The torch build as a PEP 440 version with an optional local tag (2.13.0+cu130); empty: not stated."""
    if not text:
        return None
    version = parse_version(text) if text == text.strip() else None
    if version is None:
        raise UsageError(
            f"--torch: {text!r} is not a torch version", hint="a PEP 440 version such as 2.13.0 or 2.13.0+cu130"
        )
    return version


def check_url(text: str) -> str | None:
    """An http(s) link to the run; empty: not stated."""
    if not text:
        return None
    parts = urlsplit(text) if len(text) <= URL_CAP and not re.search(r"[\s\x00-\x1f\x7f]", text) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"--run-url: {text[:200]!r} is not an http or https URL", hint="e.g. https://ci.example/run/1")
    return text


def check_text(option: str, text: str) -> str:
    """A free text shown in the matrix: one line, at most TEXT_CAP characters."""
    if _CONTROL_RE.search(text) or len(text) > TEXT_CAP:
        raise UsageError(f"{option}: {text[:60]!r} must be one line of at most {TEXT_CAP} characters")
    return text


def check_input(path: Path) -> None:
    """A regular file, as itself (a symbolic link is not followed); one line naming what it is otherwise."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from None
    for test, what in _KINDS:
        if test(mode):
            raise InputError(f"{path} is {what}, not a file", hint="give the JUnit file itself")
    if not stat.S_ISREG(mode):
        raise InputError(f"{path} is not a regular file")


def open_input(path: Path) -> BinaryIO:
    """The checked file, opened without following a link (O_NOFOLLOW) and checked again on the
    descriptor, so what is read is what was checked. O_NONBLOCK: a FIFO put in its place cannot block."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        check_input(path)  # names what it has become (a link: ELOOP)
        raise InputError(f"{path}: cannot be opened") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        check_input(path)
        raise InputError(f"{path} is not a regular file")
    return os.fdopen(fd, "rb")


def copied_name(index: int, path: Path, width: int = 3) -> str:
    """`NNN-<name>.xml`: numbered in the order given (ingest reads them in name order), only safe
    characters, at most NAME_CAP long (a name near the file system's 255-byte limit must not fail)."""
    stem = _UNSAFE_NAME_RE.sub("_", path.stem).strip("._") or "report"
    return f"{index:0{width}d}-{stem[:NAME_CAP]}.xml"
