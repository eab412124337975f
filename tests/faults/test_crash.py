"""Point 1: a test kills its process (abort, segfault, SIGKILL); the matrix keeps the rest.

Under pytest-xdist (always on) a dead worker costs the one test it was running. When the
whole pytest process dies there is no JUnit at all: records then come from the event log
and the collected list: the running test is `crashed` with its signal, the rest `not-run`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.merge.combine import merge_cell_dirs
from tests.cellfactory import write_suite
from tests.faults.conftest import column_of, results_of, run_fault_cell

CRASHING_SUITE = {
    "alpha/test_crashing.py": """
        import ctypes
        import os
        import signal

        def test_before():
            pass

        def test_abort():
            os.abort()

        def test_segfault():
            ctypes.string_at(0)  # reads address 0: SIGSEGV in native code

        def test_oom_kill():
            # What the OOM killer does: SIGKILL to the whole pytest process group.
            if os.environ.get("FAULT_KILL_GROUP") == "1":
                os.killpg(os.getpgid(0), signal.SIGKILL)

        def test_after():
            pass
    """,
    "beta/test_beta.py": """
        def test_fine():
            pass
    """,
}


@pytest.fixture(scope="module")
def xdist_crash(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("xdist-crash")
    suites = write_suite(root / "suites", CRASHING_SUITE)
    outcome = run_fault_cell(suites, root / "results", cell_id="xdist-crash", workers="2")
    return {"outcome": outcome, "matrix": merge_cell_dirs([outcome.cell_dir]).to_json()}


def test_xdist_worker_abort_costs_one_test(xdist_crash: dict) -> None:
    results = results_of(xdist_crash["matrix"], "xdist-crash")
    abort = results["alpha/test_crashing.py::test_abort"]
    assert abort["outcome"] == "crashed"
    assert abort["signal"] == "Aborted"
    assert "crashed while running" in abort["message"]


def test_xdist_worker_segfault_costs_one_test(xdist_crash: dict) -> None:
    results = results_of(xdist_crash["matrix"], "xdist-crash")
    segv = results["alpha/test_crashing.py::test_segfault"]
    assert segv["outcome"] == "crashed"
    assert segv["signal"] == "Segmentation fault"


def test_xdist_crash_keeps_every_other_result(xdist_crash: dict) -> None:
    matrix = xdist_crash["matrix"]
    results = results_of(matrix, "xdist-crash")
    others = {k: v["outcome"] for k, v in results.items() if not k.endswith(("test_abort", "test_segfault"))}
    assert others == {
        "alpha/test_crashing.py::test_before": "passed",
        "alpha/test_crashing.py::test_oom_kill": "passed",
        "alpha/test_crashing.py::test_after": "passed",
        "beta/test_beta.py::test_fine": "passed",
    }
    column = column_of(matrix, "xdist-crash")
    assert column["counts"] == {"passed": 4, "crashed": 2}
    # Crashes are bad results, not an unreadable cell: pytest itself completed.
    assert xdist_crash["outcome"].status == "completed"
    assert matrix["cells"]["alpha"]["xdist-crash"]["state"] != "no-data"


def test_whole_process_abort_without_junit(tmp_path: Path) -> None:
    """pytest without xdist workers (`-n 0`): os.abort() kills the only process; no junit.xml."""
    suites = write_suite(tmp_path / "suites", CRASHING_SUITE)
    outcome = run_fault_cell(
        suites,
        tmp_path / "results",
        cell_id="abort-all",
        pytest_args=("-n", "0", "-k", "before or abort or after or fine"),
    )
    assert not (outcome.cell_dir / "junit.xml").exists(), "the fault did not really kill pytest"
    assert outcome.status == "crashed"
    assert outcome.manifest.exit.signal == "SIGABRT"
    matrix = merge_cell_dirs([outcome.cell_dir]).to_json()
    results = {k: (v["outcome"], v.get("signal")) for k, v in results_of(matrix, "abort-all").items()}
    assert results == {
        "alpha/test_crashing.py::test_before": ("passed", None),
        "alpha/test_crashing.py::test_abort": ("crashed", "Aborted"),
        "alpha/test_crashing.py::test_after": ("not-run", None),
        "beta/test_beta.py::test_fine": ("not-run", None),
    }
    column = column_of(matrix, "abort-all")
    assert column["cell_status"] == "crashed"
    assert column["state"] == "partial-run"
    assert "SIGABRT" in column["error"]


def test_process_group_sigkill_like_oom_killer(tmp_path: Path) -> None:
    """SIGKILL to pytest and all its workers mid-run (what the OOM killer does): no junit.xml."""
    suites = write_suite(tmp_path / "suites", CRASHING_SUITE)
    outcome = run_fault_cell(
        suites,
        tmp_path / "results",
        cell_id="killed",
        pytest_args=("-k", "before or oom_kill or after or fine"),
        env={"FAULT_KILL_GROUP": "1"},
    )
    assert not (outcome.cell_dir / "junit.xml").exists(), "the fault did not really kill pytest"
    assert outcome.status == "crashed"
    assert outcome.manifest.exit.signal == "SIGKILL"
    matrix = merge_cell_dirs([outcome.cell_dir]).to_json()
    results = {k: (v["outcome"], v.get("signal")) for k, v in results_of(matrix, "killed").items()}
    assert results == {
        "alpha/test_crashing.py::test_before": ("passed", None),
        "alpha/test_crashing.py::test_oom_kill": ("crashed", "SIGKILL"),
        "alpha/test_crashing.py::test_after": ("not-run", None),
        "beta/test_beta.py::test_fine": ("not-run", None),
    }
    assert column_of(matrix, "killed")["cell_status"] == "crashed"


def test_more_crashes_than_xdist_replaces(tmp_path: Path) -> None:
    """A backend whose every test crashes: xdist stops replacing workers after 4 per worker;
    what never ran is `not-run` (never passed) and the column says tests are missing."""
    body = "import os\n" + "".join(f"def test_abort_{i}():\n    os.abort()\n" for i in range(6))
    suites = write_suite(tmp_path / "suites", {"alpha/test_all_crash.py": body + "def test_last():\n    pass\n"})
    outcome = run_fault_cell(suites, tmp_path / "results", cell_id="all-crash")
    assert "maximum crashed workers reached" in (outcome.cell_dir / "output.log").read_text(encoding="utf-8")
    matrix = merge_cell_dirs([outcome.cell_dir]).to_json()
    counts = column_of(matrix, "all-crash")["counts"]
    assert counts.get("crashed", 0) >= 4 and "passed" not in counts
    assert counts["crashed"] + counts["not-run"] == 7
    column = column_of(matrix, "all-crash")
    missing = f"{counts['not-run']} planned test(s) never ran although pytest finished (see output.log)"
    assert missing in column["errors"]
    assert column["state"] == "partial-run"
