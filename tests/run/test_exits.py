"""How a run ended (harness/run/exits.py): pytest's exit code or the signal behind it, its meaning,
what the launcher adds, and the cell status each implies; SIGTERM ends a run as Ctrl-C does."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import pytest

from harness.cell import CellStatus, ExitInfo
from harness.run.exits import Terminated, exit_info, sigterm_as_exception, status_for


@pytest.mark.parametrize(
    ("code", "sig", "meaning"),
    [
        (0, None, "all tests passed"),
        (1, None, "some tests failed"),
        (5, None, "no tests collected"),
        (4, None, "usage error"),
        (124, None, "timeout"),
        (137, "SIGKILL", "killed (SIGKILL, e.g. out of memory)"),
        (139, "SIGSEGV", "segmentation fault"),
        (134, "SIGABRT", "SIGABRT"),
        (-9, "SIGKILL", "SIGKILL"),
        (-11, "SIGSEGV", "SIGSEGV"),
        (-200, "signal 200", "signal 200"),
        (77, None, "unknown"),
        (250, None, "unknown"),
        (None, None, "not finished"),
    ],
)
def test_exit_info(code: int | None, sig: str | None, meaning: str) -> None:
    assert exit_info(code) == ExitInfo(code=code, signal=sig, meaning=meaning, details={})


def test_what_the_launcher_knows_is_kept() -> None:
    class Container:
        def exit_details(self) -> dict[str, Any]:
            return {"container": "compat-cu130-1", "oom_killed": True}

    info = exit_info(137, Container())
    assert info.details == {"container": "compat-cu130-1", "oom_killed": True}
    assert info.to_json() == {
        "code": 137,
        "signal": "SIGKILL",
        "meaning": "killed (SIGKILL, e.g. out of memory)",
        "container": "compat-cu130-1",
        "oom_killed": True,
    }
    assert exit_info(0, object()).details == {}


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (0, CellStatus.COMPLETED),
        (1, CellStatus.COMPLETED),
        (5, CellStatus.NOT_STARTED),  # no test selected: nothing ran
        (2, CellStatus.INFRA_ERROR),
        (3, CellStatus.INFRA_ERROR),
        (4, CellStatus.NOT_STARTED),  # pytest refused its arguments
        (124, CellStatus.CRASHED),
        (137, CellStatus.CRASHED),
        (-9, CellStatus.CRASHED),
        (None, CellStatus.INFRA_ERROR),
    ],
)
def test_status_for(code: int | None, status: CellStatus) -> None:
    assert status_for(code) is status


def test_sigterm_ends_the_block_like_ctrl_c_and_the_handler_is_restored() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated), sigterm_as_exception():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises as soon as the signal arrives, ending the sleep
        raise AssertionError("the handler should have raised")
    assert signal.getsignal(signal.SIGTERM) == before


def test_outside_the_main_thread_nothing_is_installed() -> None:
    seen: list[object] = []

    def body() -> None:
        with sigterm_as_exception():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert seen == [before]
