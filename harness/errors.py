"""One error hierarchy: each cause has its own exit code and a message that says how to fix it."""

from __future__ import annotations


class HarnessError(Exception):
    """Base class. `main()` prints `str(err)` as one line and exits with `exit_code`."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base} ({self.hint})" if self.hint else base


class UsageError(HarnessError):
    """Bad arguments or configuration given by the user."""

    exit_code = 2


class RegistryError(HarnessError):
    """backends.toml is malformed or names an unknown backend."""

    exit_code = 2


class InputError(HarnessError):
    """A cell dir or matrix file cannot be read."""

    exit_code = 4


class InfrastructureError(HarnessError):
    """The runner cannot run the cell: no device, no Docker engine, broken image."""

    exit_code = 3


class DockerUnavailableError(InfrastructureError):
    """No Docker engine is reachable."""


class CellTimeoutError(HarnessError):
    """A cell ran past its overall time limit."""

    exit_code = 5


class TestsFailedError(HarnessError):
    """The run completed and some tests failed; results were written."""

    exit_code = 1


class GateFailedError(HarnessError):
    """A quality gate condition was met."""

    exit_code = 1


class InterruptedRunError(HarnessError):
    """Ctrl-C or SIGTERM stopped the run; partial results were kept."""

    exit_code = 130
