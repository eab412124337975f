"""Point 7: big inputs. A 500 MB JUnit file made mostly of one <system-out> is read in
bounded memory (peak RSS of the merging process under 500 MB); long messages and traces are
trimmed in the reports while the full text stays in the cell's own files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.ingest.decide import MESSAGE_CAP, TRACE_CAP
from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix
from harness.publish.render.markdown import render_markdown
from tests.cellfactory import write_suite
from tests.faults.conftest import column_of, merge_in_child, results_of, run_fault_cell

BIG_BYTES = 500 * 1024 * 1024
PEAK_LIMIT_MB = 500.0


def write_big_junit(path: Path, size: int) -> int:
    """Stream a JUnit file of `size` bytes, almost all of it one test's <system-out>."""
    line = "step {:>9}: tensor([0.1, 0.2]) &amp; grad &lt;ok&gt; lorem ipsum dolor sit amet\n"
    block = "".join(line.format(i) for i in range(4096)).encode()
    with path.open("wb") as handle:
        handle.write(
            b'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">'
            b'<testcase classname="alpha.test_big" name="test_before" time="0.1"/>'
            b'<testcase classname="alpha.test_big" name="test_chatty" time="12.5"><system-out>'
        )
        while handle.tell() < size:
            handle.write(block)
        handle.write(
            b"TAIL-OF-THE-OUTPUT</system-out></testcase>"
            b'<testcase classname="alpha.test_big" name="test_failing" time="0.2">'
            b'<failure message="AssertionError: after the flood">trace</failure></testcase>'
            b'<testcase classname="beta.test_small" name="test_after" time="0.1"/>'
            b"</testsuite></testsuites>"
        )
        return handle.tell()


@pytest.mark.slow
def test_500mb_system_out_in_bounded_memory(tmp_path: Path) -> None:
    cell = tmp_path / "big"
    cell.mkdir()
    manifest = {"cell_id": "big", "backend": "cpu", "run_id": "run-big", "status": "completed"}
    (cell / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    junit = cell / "junit.xml"
    try:
        written = write_big_junit(junit, BIG_BYTES)
        assert written >= BIG_BYTES
        matrix, run = merge_in_child(cell, timeout=180)
    finally:
        junit.unlink(missing_ok=True)  # 500 MB: never leave it behind
    assert run.peak_rss_mb < PEAK_LIMIT_MB, f"peak RSS {run.peak_rss_mb:.0f} MB for a {written >> 20} MB file"
    results = results_of(matrix, "big")
    assert {k: v["outcome"] for k, v in results.items()} == {
        "alpha/test_big.py::test_before": "passed",
        "alpha/test_big.py::test_chatty": "passed",
        "alpha/test_big.py::test_failing": "failed",
        "beta/test_small.py::test_after": "passed",
    }
    assert results["alpha/test_big.py::test_failing"]["message"] == "AssertionError: after the flood"
    assert results["alpha/test_big.py::test_chatty"]["duration"] == pytest.approx(12.5)
    assert column_of(matrix, "big")["errors"] == []
    assert len(run.stdout) < 1_000_000, "the flood leaked into matrix.json"


# -- long messages: trimmed in reports, whole in the cell's files ---------------------------------
MARKER = "MIDDLE-OF-THE-LONG-MESSAGE"
LONG_SUITE = {
    "alpha/test_long.py": f"""
        def test_long_failure():
            print("chatter " * 200_000)  # about 1.6 MB of captured output
            detail = "x" * 60_000 + "{MARKER}" + "y" * 60_000
            assert False, detail
    """,
}


def test_long_messages_trimmed_in_reports_full_in_cell_files(tmp_path: Path) -> None:
    suites = write_suite(tmp_path / "suites", LONG_SUITE)
    outcome = run_fault_cell(suites, tmp_path / "results", cell_id="long")
    matrix = merge_cell_dirs([outcome.cell_dir]).to_json()
    result = results_of(matrix, "long")["alpha/test_long.py::test_long_failure"]
    assert result["outcome"] == "failed"
    assert len(result["message"]) <= MESSAGE_CAP + 100
    assert len(result.get("trace") or "") <= TRACE_CAP + 100
    assert "trimmed; full text in the cell's files" in result["message"]
    report = json.dumps(matrix) + render_markdown(Matrix.from_json(matrix))
    assert MARKER not in report
    # The whole text is kept where the column's source points: the cell's own files.
    assert column_of(matrix, "long")["source"] == str(outcome.cell_dir)
    assert MARKER in (outcome.cell_dir / "junit.xml").read_text(encoding="utf-8")
    assert MARKER in (outcome.cell_dir / "output.log").read_text(encoding="utf-8")
