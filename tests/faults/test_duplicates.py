"""Point 6: duplicates. A failed attempt then a passing rerun is one `flaky` test with the
failure text kept; a call failure plus a teardown error is one test; the same cell uploaded
twice is merged once; re-runs of a cell (GitHub run attempts) keep the latest.

All from real runs: pytest-rerunfailures really reruns, the fixture really fails in teardown,
cell dirs are really copied and really run twice.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.merge.combine import merge_cell_dirs
from tests.cellfactory import write_suite
from tests.conftest import in_ci
from tests.faults.conftest import REPO, column_of, results_of, run_fault_cell

try:
    import pytest_rerunfailures  # noqa: F401  (the real rerun plugin; CI installs the test extra)
except ImportError:
    if in_ci():
        raise
    pytest.skip("pytest-rerunfailures missing: pip install -e '.[test]'", allow_module_level=True)

DUPLICATING_SUITE = {
    "alpha/test_dup.py": """
        import os
        import pathlib

        import pytest

        def test_flaky():
            mark = pathlib.Path(os.environ["FAULT_MARK_DIR"]) / "flaky-attempted"
            if not mark.exists():
                mark.write_text("1")
                assert False, "first-attempt-failure-text"

        @pytest.fixture
        def breaks_in_teardown():
            yield
            raise RuntimeError("teardown-broke")

        @pytest.mark.flaky(reruns=0)  # no rerun for this one: a plain call failure + teardown error
        def test_fails_then_teardown_errors(breaks_in_teardown):
            assert False, "call-failure-text"

        def test_steady():
            pass
    """,
}
FLAKY = "alpha/test_dup.py::test_flaky"
PAIR = "alpha/test_dup.py::test_fails_then_teardown_errors"


@pytest.fixture(scope="module")
def rerun_cell(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dups")
    (root / "marks").mkdir()
    suites = write_suite(root / "suites", DUPLICATING_SUITE)
    outcome = run_fault_cell(
        suites,
        root / "results",
        cell_id="dups",
        pytest_args=("--reruns", "1"),
        env={"FAULT_MARK_DIR": str(root / "marks")},
    )
    assert outcome.status == "completed", outcome.manifest
    return outcome.cell_dir


def _junit_cases_named(cell: Path, name: str) -> int:
    return (cell / "junit.xml").read_text(encoding="utf-8").count(f'name="{name}"')


def test_rerun_pass_is_one_flaky_test_with_failure_text(rerun_cell: Path) -> None:
    assert _junit_cases_named(rerun_cell, "test_flaky") == 2  # the fault: one <testcase> per attempt
    matrix = merge_cell_dirs([rerun_cell]).to_json()
    flaky = results_of(matrix, "dups")[FLAKY]
    assert flaky["outcome"] == "flaky"
    assert flaky["attempts"] == 2
    assert "first-attempt-failure-text" in flaky["message"]
    assert "first-attempt-failure-text" in flaky["trace"]
    assert column_of(matrix, "dups")["counts"] == {"flaky": 1, "failed": 1, "passed": 1}


def test_call_failure_plus_teardown_error_is_one_test(rerun_cell: Path) -> None:
    assert _junit_cases_named(rerun_cell, "test_fails_then_teardown_errors") == 2  # failure + error
    pair = results_of(merge_cell_dirs([rerun_cell]).to_json(), "dups")[PAIR]
    assert pair["outcome"] == "failed"
    assert "call-failure-text" in pair["message"]
    assert any("teardown-broke" in m for m in pair["extra_messages"])


def test_duplicates_folded_from_junit_alone(rerun_cell: Path, tmp_path: Path) -> None:
    """The event log lost: JUnit's duplicate <testcase>s still fold into one record each."""
    cell = Path(shutil.copytree(rerun_cell, tmp_path / "junit-only"))
    (cell / "events.jsonl").unlink()
    matrix = merge_cell_dirs([cell]).to_json()
    results = results_of(matrix, "dups")
    assert {k: v["outcome"] for k, v in results.items()} == {
        FLAKY: "flaky",
        PAIR: "failed",
        "alpha/test_dup.py::test_steady": "passed",
    }
    assert any("teardown-broke" in m for m in results[PAIR]["extra_messages"])
    assert column_of(matrix, "dups")["counts"] == {"flaky": 1, "failed": 1, "passed": 1}


def test_same_cell_uploaded_twice_is_merged_once(rerun_cell: Path, tmp_path: Path) -> None:
    """The same dir given twice, and a copy of it (a second artifact download): one column."""
    copy = Path(shutil.copytree(rerun_cell, tmp_path / "artifact-copy"))
    out = tmp_path / "matrix.json"
    argv = [sys.executable, "-m", "harness", "merge", str(rerun_cell), str(rerun_cell), str(copy), "-o", str(out)]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    matrix = json.loads(out.read_text())
    assert [c["id"] for c in matrix["columns"]] == ["dups"]
    assert len(matrix["notes"]) == 2 and all("merged once" in n["note"] for n in matrix["notes"])
    # The same words about one column are printed once, with the count (issue 42: notes printed once).
    assert done.stderr.count("harness: note: dups: duplicate upload of run") == 1
    assert "merged once (2 runs)" in done.stderr
    assert column_of(matrix, "dups")["counts"] == {"flaky": 1, "failed": 1, "passed": 1}


ATTEMPT_SUITE = {
    "alpha/test_attempt.py": """
        import os

        def test_fixed_by_rerun():
            assert os.environ["GITHUB_RUN_ATTEMPT"] == "2", "broken on attempt 1"
    """,
}


def test_rerun_of_a_cell_keeps_latest_attempt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub "re-run jobs": the same cell id from attempt 1 and attempt 2; attempt 2 wins."""
    suites = write_suite(tmp_path / "suites", ATTEMPT_SUITE)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    cells = {}
    for attempt in ("1", "2"):
        monkeypatch.setenv("GITHUB_RUN_ATTEMPT", attempt)
        cells[attempt] = run_fault_cell(suites, tmp_path / f"attempt{attempt}", cell_id="cpu-runner").cell_dir
    # Given newest first, so argument order cannot be what picks the winner.
    matrix = merge_cell_dirs([cells["2"], cells["1"]]).to_json()
    (column,) = matrix["columns"]
    assert column["run_attempt"] == 2
    assert results_of(matrix, "cpu-runner")["alpha/test_attempt.py::test_fixed_by_rerun"]["outcome"] == "passed"
    (note,) = matrix["notes"]
    assert note["source"] == str(cells["1"]) and "(attempt 2)" in note["note"]
    # And the losing attempt really was different.
    older = merge_cell_dirs([cells["1"]]).to_json()
    assert results_of(older, "cpu-runner")["alpha/test_attempt.py::test_fixed_by_rerun"]["outcome"] == "failed"
