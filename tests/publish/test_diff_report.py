"""The diff report as Markdown (harness/publish/render/diff_report.py), on the committed sample runs: a
row per column pair with its counts, the added column, each changed test with its change and (for
a new failure) its message escaped, the regression count; a list cut at `max_items` says so."""

from __future__ import annotations

import dataclasses

from harness.api_changes import WheelApi, diff_apis
from harness.model import Matrix, TestResult
from harness.outcomes import Outcome
from harness.publish.column_diff import diff_matrices, release_pairs, with_public_api
from harness.publish.render.diff_report import render_diff_markdown
from tests.committed import releases_matrix, sample_matrices
from tests.publishing_cells import REGRESSED


def test_the_changes_between_two_real_runs() -> None:
    base, new = sample_matrices()
    text = render_diff_markdown(diff_matrices(base, new))
    lines = text.splitlines()
    assert lines[0] == "## Matrix diff"
    assert "| CPU `cpu` · torch 2.13.0+cpu | 1 | 1 | 1 | 1 | 1 | 0 |" in lines
    assert "**Columns added:** ROCm 7.14 `rocm`" in lines
    assert "- `alpha/test_a.py::test_regress` (passed → failed): AssertionError: regressed" in lines
    assert "- `alpha/test_a.py::test_fixed` (failed → passed)" in lines
    assert "- `alpha/test_a.py::test_gone` (passed → absent)" in lines
    assert "- `alpha/test_a.py::test_new` (absent → passed)" in lines
    assert "| Alpha feature (`alpha`) | 🟡 partial | 🟡 partial | 1 | 1 |" in lines
    assert lines[-1] == "**1 new regression(s).**" and text.endswith("\n")


def test_no_change_says_so() -> None:
    base, _ = sample_matrices()
    text = render_diff_markdown(diff_matrices(base, base))
    assert text.splitlines()[-1] == "No new regressions."
    assert "###" not in text, "no section for a column without changes"


def test_a_release_pair_is_titled_by_its_torch_builds() -> None:
    matrix = releases_matrix()
    text = render_diff_markdown(diff_matrices(matrix, matrix, release_pairs(matrix)))
    assert (
        "| CPU cpu-2.13.0 (torch 2.13.0+cpu) → CUDA 13.0 build, CPU only cu130-2.14.1-cpu-only (torch 2.14.1+cu130) |"
        in text
    ), "a step onto another build names both builds"
    assert "New rows in this release: Per-process Intel GPU memory (`xpu_memory_tracking`)" in text
    assert "Device API: 2.15.0+cu132: " in text and "tested by the suites" in text


def test_a_long_list_is_cut_and_says_how_many_more() -> None:
    base, new = sample_matrices()
    text = render_diff_markdown(diff_matrices(base, new), max_items=0)
    assert "- … and 1 more (see the JSON diff)" in text
    assert "test_regress` (passed" not in text


def _regressed_with(base: Matrix, message: str) -> Matrix:
    rows = tuple(
        dataclasses.replace(row, results={"cpu": TestResult(outcome=Outcome.FAILED, message=message)})
        if row.id == REGRESSED
        else row
        for row in base.tests
    )
    assert REGRESSED in {row.id for row in rows}
    return dataclasses.replace(base, tests=rows)


def test_a_failure_message_cannot_change_the_markdown() -> None:
    base, _ = sample_matrices()
    new = _regressed_with(base, "a | b `tick` <script>alert(1)</script>\nsecond line")
    text = render_diff_markdown(diff_matrices(base, new))
    line = next(line for line in text.splitlines() if "test_regress" in line and "→ failed" in line)
    assert (
        line
        == "- `alpha/test_a.py::test_regress` (passed → failed): a \\| b \\`tick\\` &lt;script>alert(1)&lt;/script>"
    )
    assert "second line" not in text, "the first line of the message only"


def test_a_release_pair_says_its_public_api_from_the_wheels() -> None:
    """`harness diff --releases --api-diff`: the pair of the diff's two releases says "N new public APIs,
    M tested"; the other pair (2.13.0 -> 2.14.1) has no API diff and says nothing of it."""
    old = WheelApi("torch", "2.14.1", {"torch.nn.functional": ("scaled_mm",)})
    new = WheelApi("torch", "2.15.0", {"torch.nn.functional": ("scaled_addmm", "scaled_addmm_", "scaled_mm")})
    api = diff_apis(old, new, exercised={"torch.nn.functional.scaled_addmm"})
    matrix = releases_matrix()
    report = with_public_api(diff_matrices(matrix, matrix, release_pairs(matrix)), [api])
    assert [c.public_api for c in report.columns] == [None, api]
    text = render_diff_markdown(report)
    assert text.count("Public API, read from the wheels:") == 1
    assert "Public API, read from the wheels: 2.15.0: 2 new public APIs, 1 tested by the suites." in text
    assert report.to_json()["columns"][1]["public_api"] == {"old": "2.14.1", "new": "2.15.0", "added": 2, "tested": 1}


def test_a_row_the_older_column_lacked_reads_new_never_no_data(tmp_path) -> None:
    """Issue 42: a new row's cells read "NO DATA → n/a" in diff.md (a column with results, no row)."""
    from harness.cli import main
    from harness.matrix_json import write_matrix

    new = releases_matrix()
    dropped = new.features[0].id
    old = dataclasses.replace(
        new, features=new.features[1:], cells={k: v for k, v in new.cells.items() if k != dropped}
    )
    report = diff_matrices(old, new)
    (change,) = [c for c in report.columns[0].features if c.feature == dropped]
    assert change.before is None and change.to_json()["before"] is None
    text = render_diff_markdown(report)
    row = next(line for line in text.splitlines() if f"(`{dropped}`)" in line)
    assert "| 🆕 new |" in row and "NO DATA" not in row
    # diff.md as `harness diff -o` writes it: one final newline, not two, not none
    write_matrix(old, tmp_path / "old.json")
    write_matrix(new, tmp_path / "new.json")
    assert main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "-o", str(tmp_path / "d.md")]) == 0
    written = (tmp_path / "d.md").read_bytes()
    assert written.endswith(b".\n") and not written.endswith(b"\n\n")
