"""Helpers for the fault-injection tests: real cells from real pytest runs, then real faults.

Each fault is made to happen for real: a process aborts or segfaults, a worker hangs in
native code, files on disk are truncated or replaced, a 500 MB file is written. Nothing
here fakes a pytest report or hand-writes the harness's own files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.merge.combine import merge_cell_dirs
from harness.run.execute import CellOutcome
from tests.cellfactory import run_sample_cell, write_suite

REPO = Path(__file__).resolve().parents[2]


def run_fault_cell(
    suites: Path,
    results: Path,
    *,
    cell_id: str,
    workers: str = "1",
    test_timeout: float = 60.0,
    hard_timeout_grace: float = 60.0,
    cell_timeout: float = 300.0,
    pytest_args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> CellOutcome:
    """A real native cpu cell run (real pytest, real plugin), with every limit adjustable."""
    return run_sample_cell(
        suites, results, cell_id=cell_id, workers=workers, test_timeout=test_timeout,
        hard_timeout_grace=hard_timeout_grace, cell_timeout=cell_timeout, pytest_args=pytest_args, env=env,
    )  # fmt: skip


def results_of(matrix: dict[str, Any], column: str) -> dict[str, dict[str, Any]]:
    """nodeid -> that column's result in a merged matrix."""
    return {t["id"]: t["results"][column] for t in matrix["tests"] if column in t["results"]}


def column_of(matrix: dict[str, Any], column: str) -> dict[str, Any]:
    found = [c for c in matrix["columns"] if c["id"] == column]
    assert found, f"no column {column!r} in {[c['id'] for c in matrix['columns']]}"
    return found[0]


@dataclass
class Measured:
    """A finished child process and its own peak memory (its VmHWM, printed last)."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_rss_mb: float


def run_measured(argv: list[str], *, timeout: float = 120.0) -> Measured:
    """Run a child that prints `peak_rss_kb=N` as its last line; fail the test if it overruns."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv,
            cwd=REPO,
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"{argv[:3]} ran past {timeout} s (unbounded time): {str(err.stderr)[-500:]}")
    seconds = time.monotonic() - started
    text = done.stdout.decode("utf-8", "replace")
    lines = text.strip().splitlines()
    peak = int(lines[-1].split("=", 1)[1]) / 1024 if lines and lines[-1].startswith("peak_rss_kb=") else float("nan")
    return Measured(done.returncode, text, done.stderr.decode("utf-8", "replace"), seconds, peak)


# The last line of a measured child: its own peak RSS. VmHWM, not ru_maxrss: Linux carries the
# parent's peak into a child's ru_maxrss across fork/vfork and exec, so a child of a pytest process
# that once held 1.4 GB reported 1.4 GB for a 20 MB merge (tests/test_measured_child.py).
PRINT_OWN_PEAK = """
import re as _re
print("peak_rss_kb=%s" % _re.search(r"VmHWM:\\s*(\\d+)", open("/proc/self/status").read()).group(1))
"""

# A small program run in a child: ingest/merge the given cells, print what came out and its own peak RSS.
MERGE_AND_MEASURE = (
    """
import json, sys
from pathlib import Path
from harness.merge.combine import merge_cell_dirs
matrix = merge_cell_dirs([Path(p) for p in sys.argv[1:]]).to_json()
print(json.dumps(matrix))
"""
    + PRINT_OWN_PEAK
)


def merge_in_child(*cells: Path, timeout: float = 120.0) -> tuple[dict[str, Any], Measured]:
    done = run_measured([sys.executable, "-c", MERGE_AND_MEASURE, *map(str, cells)], timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    matrix = json.loads(done.stdout.strip().splitlines()[-2])
    return matrix, done


# The suite every "damage the files" test starts from: passes, a failure, a skip, an xfail.
BASE_SUITE = {
    "alpha/test_alpha.py": """
        import pytest

        def test_one():
            assert 1 + 1 == 2

        def test_two():
            assert [1, 2] == [1, 3], "alpha-two-broke"

        @pytest.mark.skip(reason="unsupported on this backend")
        def test_three():
            pass

        @pytest.mark.xfail(reason="known issue", strict=False)
        def test_four():
            assert False
    """,
    "beta/test_beta.py": """
        def test_five():
            pass

        def test_six():
            pass
    """,
}
BASE_OUTCOMES = {
    "alpha/test_alpha.py::test_one": "passed",
    "alpha/test_alpha.py::test_two": "failed",
    "alpha/test_alpha.py::test_three": "skipped",
    "alpha/test_alpha.py::test_four": "xfailed",
    "beta/test_beta.py::test_five": "passed",
    "beta/test_beta.py::test_six": "passed",
}


@pytest.fixture(scope="session")
def base_cell(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real completed cell (run once); tests damage copies of it, never this one."""
    root = tmp_path_factory.mktemp("base-cell")
    suites = write_suite(root / "suites", BASE_SUITE)
    outcome = run_fault_cell(suites, root / "results", cell_id="base")
    assert outcome.status == "completed", outcome.manifest
    matrix = merge_cell_dirs([outcome.cell_dir]).to_json()
    assert {k: v["outcome"] for k, v in results_of(matrix, "base").items()} == BASE_OUTCOMES
    return outcome.cell_dir
