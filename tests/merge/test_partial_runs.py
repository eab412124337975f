"""A partial run (a selection of tests) updates its column; it does not replace it.

The merge builds a column from the newest complete run of its cell id and lays over it the results
of the tests each later partial run selected, each marked with its run and start; a newer complete
run supersedes; a partial run with no complete base is a column of its own, marked partial.

The fast tests restate the identity of committed real cells (a sample suite's run as a later
partial run of `cpu-2.13.0`); the slow one reruns one real test into a copy of a committed cell.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cell import Selection, read_manifest
from harness.matrix_json import load_matrix, write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix
from harness.publish.render.html import page_data
from harness.publish.render.markdown import render_markdown
from tests.committed import CELLS, SAMPLES
from tests.conftest import REPO

BASE = "cpu-2.13.0"


def _restated(source: Path, dest: Path, *, run_id: str, started_at: str, selection: dict | None) -> Path:
    """A copy of a real cell stated as another run of cell `cpu-2.13.0` (partial when `selection`)."""
    shutil.copytree(source, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest.update(cell_id=BASE, run_id=run_id, started_at=started_at)
    if selection is not None:
        manifest["selection"] = selection
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


def _ids(matrix: Matrix, column: str) -> set[str]:
    return {row.id for row, _ in matrix.results(column)}


@pytest.fixture(scope="module")
def later(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample suite's newer run, restated as a later partial run (-k) of cpu-2.13.0."""
    return _restated(
        SAMPLES / "publishing-new",
        tmp_path_factory.mktemp("partial") / "later",
        run_id="20261202T000000Z-partial",
        started_at="2026-12-02T00:00:00Z",
        selection={"keyword": "sample"},
    )


def test_the_selection_is_what_the_run_was_asked_for() -> None:
    assert Selection.of((), ()) is None
    assert Selection.of(("a.py::t",), ()) == Selection(tests=("a.py::t",))
    assert Selection.of((), ("-k", "cuda and not slow", "-m", "gpu")) == Selection(
        keyword="cuda and not slow", markexpr="gpu"
    )
    assert Selection.of((), ("graphs", "--maxfail", "1", "-x")) == Selection(paths=("graphs",))
    assert Selection.of((), ("--maxfail=1", "-q")) is None


def test_a_manifest_from_before_the_selection_was_recorded_reads_it_from_planned(tmp_path: Path) -> None:
    manifest = json.loads((CELLS / BASE / "manifest.json").read_text())
    assert read_manifest(CELLS / BASE / "manifest.json").selection is None
    manifest["planned"]["tests"] = ["amp/test_autocast.py::t"]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert read_manifest(tmp_path / "manifest.json").selection == Selection(tests=("amp/test_autocast.py::t",))


def test_a_later_partial_run_is_laid_over_the_complete_one(later: Path) -> None:
    alone = merge_cell_dirs([CELLS / BASE], jobs=1)
    partial = merge_cell_dirs([later], jobs=1)
    matrix = merge_cell_dirs([CELLS / BASE, later], jobs=1)
    (column,) = matrix.columns
    assert column.composite and not column.partial
    assert [r.run_id for r in column.runs] == [alone.columns[0].run_id, "20261202T000000Z-partial"]
    assert column.runs[1].selection == {"keyword": "sample"}
    # every test of the complete run stays; the partial run's tests are added, marked with their run
    assert _ids(matrix, BASE) == _ids(alone, BASE) | _ids(partial, BASE)
    marked = {row.id for row, r in matrix.results(BASE) if r.run == "20261202T000000Z-partial"}
    assert marked == _ids(partial, BASE)
    assert all(r.at == "2026-12-02T00:00:00Z" for row, r in matrix.results(BASE) if row.id in marked)
    assert all(r.run is None for row, r in matrix.results(BASE) if row.id not in marked)
    assert column.runs[0].tests == len(_ids(alone, BASE)) and column.runs[1].tests == len(marked)
    amp = matrix.cell("amp", BASE)
    assert amp == alone.cell("amp", BASE), "a row the partial run did not touch is unchanged"
    assert sum(cell.overlay for cells in matrix.cells.values() for cell in cells.values()) == len(marked)


def test_the_composite_survives_matrix_json_and_shows_in_summary_and_page(later: Path, tmp_path: Path) -> None:
    matrix = merge_cell_dirs([CELLS / BASE, later], jobs=1)
    write_matrix(matrix, tmp_path / "matrix.json")
    again = load_matrix(tmp_path / "matrix.json")
    assert again.columns[0].runs == matrix.columns[0].runs
    assert {r.run for _, r in again.results(BASE)} == {None, "20261202T000000Z-partial"}
    assert "_composite of 2 runs_" in render_markdown(again)
    data = page_data(again)
    assert [r["run_id"] for r in data["columns"][0]["runs"]] == [r.run_id for r in matrix.columns[0].runs]


def test_a_newer_complete_run_supersedes_base_and_partial(later: Path, tmp_path: Path) -> None:
    newest = _restated(
        CELLS / BASE,
        tmp_path / "newest",
        run_id="20261203T000000Z-full",
        started_at="2026-12-03T00:00:00Z",
        selection=None,
    )
    matrix = merge_cell_dirs([CELLS / BASE, later, newest], jobs=1)
    (column,) = matrix.columns
    assert column.run_id == "20261203T000000Z-full" and not column.composite and not column.partial
    assert all(r.run is None for _, r in matrix.results(BASE))
    superseded = sorted(n.source for n in matrix.notes if "superseded by run 20261203T000000Z-full" in n.note)
    assert superseded == sorted([str(CELLS / BASE), str(later)])


def test_a_partial_run_without_a_complete_base_is_its_own_partial_column(later: Path) -> None:
    matrix = merge_cell_dirs([later], jobs=1)
    (column,) = matrix.columns
    assert column.partial and not column.composite
    assert "_partial: a selection of tests_" in render_markdown(matrix)


def test_an_older_partial_run_is_superseded_by_the_complete_run_after_it(tmp_path: Path) -> None:
    early = _restated(
        SAMPLES / "publishing-new", tmp_path / "early", run_id="20261101T000000Z-p", started_at="2026-11-01T00:00:00Z",
        selection={"tests": ["x"]},
    )  # fmt: skip
    matrix = merge_cell_dirs([CELLS / BASE, early], jobs=1)
    assert not matrix.columns[0].composite
    assert any(n.source == str(early) and "superseded" in n.note for n in matrix.notes)


def _ended(cell: Path, **fields: object) -> Path:
    manifest = json.loads((cell / "manifest.json").read_text())
    manifest.update(fields)
    (cell / "manifest.json").write_text(json.dumps(manifest))
    return cell


NO_TEST = {"status": "not-started", "exit": {"code": 5, "signal": None, "meaning": "no tests collected"}}


@pytest.mark.parametrize(
    ("selection", "ended"),
    [
        ({"tests": ["amp/x.py::test_nope"]}, NO_TEST),  # --test of a typo: nothing selected
        (None, {**NO_TEST, "exit": {"code": 4, "signal": None, "meaning": "usage error"}}),  # --pytest-args typo
        ({"keyword": "sample"}, {"status": "infra-error", "error": "pytest ended with internal error (exit 3)"}),
        ({"keyword": "sample"}, {"status": "crashed"}),
        ({"keyword": "sample"}, {"status": "completed", "exit": {"code": 5}}),  # written before `not-started`
        (None, {"status": "infra-error", "exit": {"code": 4}}),  # the same, a whole run refused by pytest
    ],
    ids=["typo-selection", "typo-args", "partial-internal-error", "partial-crashed", "old-exit-5", "old-exit-4"],
)
def test_a_run_that_ran_nothing_or_did_not_complete_is_never_laid_over(
    tmp_path: Path, selection: dict | None, ended: dict
) -> None:
    """Issue 42: a newer run that failed to start hid the complete run (every row NO DATA, 0 tests)."""
    alone = merge_cell_dirs([CELLS / BASE], jobs=1)
    failed = _ended(
        _restated(SAMPLES / "publishing-new", tmp_path / "failed", run_id="r-failed", started_at="2026-12-03T00:00:00Z",
                  selection=selection),
        **ended,
    )  # fmt: skip
    matrix = merge_cell_dirs([CELLS / BASE, failed], jobs=1)
    (column,) = matrix.columns
    assert column.run_id == alone.columns[0].run_id and not column.composite and column.has_data
    assert column.counts == alone.columns[0].counts
    (note,) = [n for n in matrix.notes if n.source == str(failed)]
    assert "ran nothing" in note.note or "not laid over run" in note.note, note.note
    assert "superseded" not in note.note


def test_a_run_that_ran_nothing_is_a_column_only_when_its_cell_id_has_no_other(tmp_path: Path) -> None:
    failed = _ended(
        _restated(SAMPLES / "publishing-nodata", tmp_path / "f", run_id="r-f", started_at="2026-12-03T00:00:00Z",
                  selection=None),
        **NO_TEST, error="pytest selected no test (exit 5)",
    )  # fmt: skip
    matrix = merge_cell_dirs([failed], jobs=1)
    write_matrix(matrix, tmp_path / "matrix.json")  # the schema knows the status
    (column,) = load_matrix(tmp_path / "matrix.json").columns
    assert not column.has_data and column.cell_status is not None and column.cell_status.value == "not-started"
    assert column.error == "pytest selected no test (exit 5)"


@pytest.mark.slow
def test_a_real_one_test_rerun_keeps_every_other_test(tmp_path: Path) -> None:
    """`harness run --native --test ID --cell-id <an existing cell id>` into a copy of a committed cell."""
    results = tmp_path / "results"
    shutil.copytree(CELLS / BASE, results / BASE)
    shutil.copytree(SAMPLES / "publishing-nodata", results / "rocm-nodata")  # an earlier failed attempt
    before = merge_cell_dirs([results / BASE], jobs=1)
    test_id = "amp/test_autocast.py::test_autocast_op_dtype_and_value[bmm-bfloat16]"
    argv = [sys.executable, "-m", "harness", "run", "--native", "--backend", "cpu", "--test", test_id,
            "--cell-id", BASE, "--results-dir", str(results), "--no-progress", "--quiet", "--workers", "1"]  # fmt: skip
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    (rerun,) = [p for p in results.iterdir() if p.is_dir() and p.name not in (BASE, "rocm-nodata")]
    assert read_manifest(rerun / "manifest.json").selection == Selection(tests=(test_id,))
    matrix = load_matrix(results / "matrix.json")
    assert [c.id for c in matrix.columns] == [BASE, "rocm"]
    column = matrix.column(BASE)
    assert column.composite and len(column.runs) == 2
    assert _ids(matrix, BASE) == _ids(before, BASE), "every other test of the column stays"
    changed = {row.id: r for row, r in matrix.results(BASE) if r.run is not None}
    assert list(changed) == [test_id] and changed[test_id].run == column.runs[1].run_id
    assert changed[test_id].outcome.value == "passed" and changed[test_id].at == column.runs[1].started_at
    assert matrix.cell("amp", BASE).overlay == 1
    summary = (results / "summary.md").read_text()
    assert "_composite of 2 runs_" in summary and "1 from a later rerun" in summary
    # the main job names the older NO DATA run and how to drop it, in one line
    notes = [line for line in done.stderr.splitlines() if "older NO DATA" in line]
    assert notes == [
        f"harness: note: 1 older NO DATA run(s) in {results} (rocm): `harness cells prune --results-dir {results}` "
        f"drops superseded ones, `harness cells forget --results-dir {results} ID` any run or cell"
    ]


def test_the_per_test_history_keeps_which_run_a_result_came_from(later: Path) -> None:
    from harness.publish.history import RunSummary, summarize
    from harness.publish.render.page_parts import history_head

    matrix = merge_cell_dirs([CELLS / BASE, later], jobs=1)
    summary = RunSummary.from_json(json.loads(json.dumps(summarize(matrix).to_json())))
    (column,) = summary.columns
    marked = {row.id for row, r in matrix.results(BASE) if r.run}
    assert set(column.reruns) == marked
    assert set(column.reruns.values()) == {"run 20261202T000000Z-partial started 2026-12-02T00:00:00Z"}
    head = history_head([summary], [None], [BASE])
    assert head["reruns"][BASE][0] == dict(column.reruns)
    plain = summarize(merge_cell_dirs([CELLS / BASE], jobs=1))
    assert "reruns" not in plain.to_json()["columns"][0], "a column of one run records nothing extra"
