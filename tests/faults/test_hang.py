"""Point 2: hanging tests. The per-test timeout marks the test `timeout` and the run goes
on; a cell past its overall limit is stopped, keeps what it has, and says so.

Three layers, each made to fire for real:
- the suites' soft timeout (SIGALRM in the test's thread) for hangs in Python code;
- the plugin's hard watchdog (COMPAT_HARD_TIMEOUT, a thread) for hangs in native code that
  release the GIL (a deadlocked mutex here; a stuck driver call on a GPU): it ends the worker;
- faulthandler's C watchdog for native hangs that hold the GIL (the watchdog thread cannot run).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cell import read_manifest
from harness.merge.combine import merge_cell_dirs
from tests.cellfactory import write_suite
from tests.faults.conftest import REPO, column_of, results_of, run_fault_cell

# The suites' soft timeout, reduced to its mechanism (suites/conftest.py does the same).
SOFT_TIMEOUT_CONFTEST = """
    import os
    import signal

    import pytest

    class Timeout(Exception):
        pass

    Timeout.__module__ = "builtins"

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(item):
        seconds = float(os.environ["COMPAT_TEST_TIMEOUT"])

        def expired(signum, frame):
            raise Timeout(f"test exceeded {seconds:g} s")

        previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
"""

HANGING_SUITE = {
    "alpha/conftest.py": SOFT_TIMEOUT_CONFTEST,
    "alpha/test_hangs.py": """
        import ctypes
        import time

        def _deadlock(lib):
            mutex = ctypes.create_string_buffer(64)  # a zeroed pthread_mutex_t is a default mutex
            lib.pthread_mutex_lock(mutex)
            lib.pthread_mutex_lock(mutex)  # locks itself out: no signal ends this wait

        def test_before():
            pass

        def test_python_hang():
            time.sleep(1000)

        def test_native_hang():
            _deadlock(ctypes.CDLL(None))  # releases the GIL while in C

        def test_native_hang_holding_gil():
            _deadlock(ctypes.PyDLL(None))  # keeps the GIL: no Python thread runs again

        def test_after():
            pass
    """,
    "beta/test_no_soft_timeout.py": """
        import time

        def test_python_hang_without_soft_timeout():
            time.sleep(1000)

        def test_fine():
            pass
    """,
}

TEST_TIMEOUT = 1.0
GRACE = 1.0  # hard limit = 2 s; the GIL backstop fires 5 s later


@pytest.fixture(scope="module")
def hung(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("hangs")
    suites = write_suite(root / "suites", HANGING_SUITE)
    started = time.monotonic()
    outcome = run_fault_cell(
        suites,
        root / "results",
        cell_id="hangs",
        workers="2",
        test_timeout=TEST_TIMEOUT,
        hard_timeout_grace=GRACE,
        cell_timeout=120,
    )
    return {
        "outcome": outcome,
        "seconds": time.monotonic() - started,
        "results": results_of(merge_cell_dirs([outcome.cell_dir]).to_json(), "hangs"),
    }


def test_python_hang_hits_soft_timeout(hung: dict) -> None:
    result = hung["results"]["alpha/test_hangs.py::test_python_hang"]
    assert result["outcome"] == "timeout"
    assert result["message"].startswith("Timeout: test exceeded 1 s")


def test_python_hang_without_soft_timeout_hits_hard_watchdog(hung: dict) -> None:
    result = hung["results"]["beta/test_no_soft_timeout.py::test_python_hang_without_soft_timeout"]
    assert result["outcome"] == "timeout"
    assert result["message"] == "Timeout: hard limit of 2.0 s reached; the process was ended"


def test_native_hang_hits_hard_watchdog(hung: dict) -> None:
    result = hung["results"]["alpha/test_hangs.py::test_native_hang"]
    assert result["outcome"] == "timeout"
    assert result["message"] == "Timeout: hard limit of 2.0 s reached; the process was ended"


def test_native_hang_holding_gil_hits_faulthandler_backstop(hung: dict) -> None:
    result = hung["results"]["alpha/test_hangs.py::test_native_hang_holding_gil"]
    assert result["outcome"] == "timeout"
    assert "watchdog ended the process" in result["message"]
    logs = "".join(p.read_text() for p in hung["outcome"].cell_dir.glob("faults-*.log"))
    assert "Timeout (0:00:07)!" in logs  # faulthandler's own line, with the stack below it
    assert "_deadlock" in logs


def test_run_goes_on_after_hangs(hung: dict) -> None:
    results = hung["results"]
    assert {k: v["outcome"] for k, v in results.items() if v["outcome"] != "timeout"} == {
        "alpha/test_hangs.py::test_before": "passed",
        "alpha/test_hangs.py::test_after": "passed",
        "beta/test_no_soft_timeout.py::test_fine": "passed",
    }
    assert hung["outcome"].status == "completed"
    assert hung["seconds"] < 60, "hangs were not cut at their limits"


# -- the cell's overall limit --------------------------------------------------------------
CELL_TIMEOUT_SUITE = {
    "alpha/test_slow.py": """
        import time

        def test_first():
            pass

        def test_stuck():
            time.sleep(1000)

        def test_never_reached():
            pass
    """,
}


def test_cell_timeout_stops_run_and_keeps_partial_results(tmp_path: Path) -> None:
    """Through the CLI, as a user runs it: exit 5, one line, no traceback; the cell says timeout."""
    suites = write_suite(tmp_path / "suites", CELL_TIMEOUT_SUITE)
    results = tmp_path / "results"
    argv = [sys.executable, "-m", "harness", "run", "--native", "--backend", "cpu", "--no-progress"]
    argv += ["--suites", str(suites), "--results-dir", str(results), "--cell-id", "slow", "--workers", "1"]
    argv += ["--test-timeout", "300", "--cell-timeout", "8", "--quiet"]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert time.monotonic() - started < 60
    assert done.returncode == 5, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("harness: error:")]
    assert len(errors) == 1 and "ran past its 8 s limit" in errors[0], done.stderr

    (cell_dir,) = [p for p in results.iterdir() if (p / "manifest.json").exists()]
    manifest = read_manifest(cell_dir / "manifest.json").to_json()
    assert manifest["status"] == "timeout"
    assert manifest["error"] == "the cell ran past its 8 s limit and was stopped"
    matrix = merge_cell_dirs([cell_dir]).to_json()
    outcomes = {k: v["outcome"] for k, v in results_of(matrix, "slow").items()}
    assert outcomes == {
        "alpha/test_slow.py::test_first": "passed",
        "alpha/test_slow.py::test_stuck": "timeout",
        "alpha/test_slow.py::test_never_reached": "not-run",
    }
    column = column_of(matrix, "slow")
    assert column["cell_status"] == "timeout"
    assert column["state"] == "partial-run"
    stuck = results_of(matrix, "slow")["alpha/test_slow.py::test_stuck"]
    assert stuck["message"] == "Timeout: the cell's overall time limit stopped the run during this test"
