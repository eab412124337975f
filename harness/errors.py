"""One error hierarchy: each cause has its own exit code and a message that says how to fix it.

EXIT_CODES is the one table of exit codes: the CLI returns them, the docs quote them (the README's
CLI reference is generated from it and from the parser: tools/cli_reference.py).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INFRASTRUCTURE: Final = 3
EXIT_INPUT: Final = 4
EXIT_TIMEOUT: Final = 5
EXIT_OUTPUT: Final = 6
EXIT_INTERRUPTED: Final = 130
EXIT_CODES: Final[tuple[tuple[int, str], ...]] = (
    (EXIT_OK, "ok"),
    (
        EXIT_FAILED,
        "tests failed, the gate found what it looks for, or publish refused to replace results with none "
        "(--allow-empty)",
    ),
    (EXIT_USAGE, "usage: bad arguments or a bad registry"),
    (
        EXIT_INFRASTRUCTURE,
        "infrastructure: no device, no Docker engine, no torch, the wrong torch build (the cell is NO DATA)",
    ),
    (EXIT_INPUT, "unreadable input: a cell dir, JUnit file, feature map or matrix.json that cannot be read"),
    (EXIT_TIMEOUT, "the cell ran past its time limit (partial results kept)"),
    (
        EXIT_OUTPUT,
        "cannot write the outputs: a full disk, a read-only or forbidden folder, another publisher holding the "
        "lock (the previous outputs are left as they were)",
    ),
    (EXIT_INTERRUPTED, "interrupted by Ctrl-C or SIGTERM (partial results kept)"),
)


class HarnessError(Exception):
    """Base class. `main()` prints `str(err)` as one line and exits with `exit_code`."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base} ({self.hint})" if self.hint else base


class UsageError(HarnessError):
    """Bad arguments or configuration given by the user."""

    exit_code = EXIT_USAGE


class RegistryError(HarnessError):
    """backends.toml is malformed or names an unknown backend."""

    exit_code = EXIT_USAGE


class InputError(HarnessError):
    """A cell dir or matrix file cannot be read."""

    exit_code = EXIT_INPUT


class WriteError(HarnessError):
    """An output cannot be written (ENOSPC, EROFS, EACCES, EDQUOT...); the previous one is kept."""

    exit_code = EXIT_OUTPUT

    def __init__(self, message: str, *, path: str = "", reason: str = "", hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.path = path
        self.reason = reason


class OutputLockedError(WriteError):
    """Another process holds the lock on the outputs (a second publisher) past the wait allowed."""


class InfrastructureError(HarnessError):
    """The runner cannot run the cell: no device, no Docker engine, broken image."""

    exit_code = EXIT_INFRASTRUCTURE


class DockerUnavailableError(InfrastructureError):
    """No Docker engine is reachable."""


class CellTimeoutError(HarnessError):
    """A cell ran past its overall time limit."""

    exit_code = EXIT_TIMEOUT


class TestsFailedError(HarnessError):
    """The run completed and some tests failed; results were written."""

    exit_code = EXIT_FAILED


class GateFailedError(HarnessError):
    """A quality gate condition was met."""

    exit_code = EXIT_FAILED


class EmptyPublicationError(HarnessError):
    """`harness publish` of a matrix without results over a site that has some: refused, the site kept."""

    exit_code = EXIT_FAILED


class InterruptedRunError(HarnessError):
    """Ctrl-C or SIGTERM stopped the run; partial results were kept."""

    exit_code = EXIT_INTERRUPTED


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """ " (did you mean X?)" for a near miss of one of `candidates`, else ""."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""
