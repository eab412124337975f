"""How a run ended: pytest's exit code and the signal that killed it, as the manifest states them."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any, Final

from harness.cell import PYTEST_REFUSED, CellStatus, ExitInfo

_MEANING: Final = {
    0: "all tests passed",
    1: "some tests failed",
    2: "interrupted",
    3: "internal error",
    4: "usage error",
    5: "no tests collected",
    124: "timeout",
    137: "killed (SIGKILL, e.g. out of memory)",
    139: "segmentation fault",
}


class Terminated(Exception):
    """SIGTERM arrived (CI cancel, docker stop)."""


@contextlib.contextmanager
def sigterm_as_exception() -> Iterator[None]:
    """SIGTERM ends the run the way Ctrl-C does."""

    def handler(signum: int, frame: object) -> None:
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _signal_name(code: int | None) -> str | None:
    if code is None or code >= 0:
        return None
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def exit_info(code: int | None, process: Any = None) -> ExitInfo:
    """The exit code, the signal behind it, what it means, and what the launcher knows (a
    container's name and exit code, an OOM kill)."""
    sig = _signal_name(code)
    if code is not None and code > 128 and sig is None:
        with contextlib.suppress(ValueError):
            sig = signal.Signals(code - 128).name
    meaning = _MEANING.get(code, sig or "unknown") if code is not None else "not finished"
    details = getattr(process, "exit_details", None)
    return ExitInfo(code=code, signal=sig, meaning=meaning, details=details() if callable(details) else {})


def status_for(code: int | None) -> CellStatus:
    if code in (0, 1):
        return CellStatus.COMPLETED
    if code in PYTEST_REFUSED:  # a usage error or no test selected: nothing ran, never a result
        return CellStatus.NOT_STARTED
    if code is not None and (code < 0 or code > 128 or code == 124):
        return CellStatus.CRASHED
    return CellStatus.INFRA_ERROR
