"""A column is backend + build + Python (issue 41), on the committed real cells: torch 2.15.0 on Python 3.11
and on Python 3.15 (an image of Debian forky's python3.15), beside two cells from before the interpreter was
recorded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.matrix_json import load_matrix, write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.model import ColumnState
from harness.outcomes import Rollup
from harness.plan import PlannedCell
from tests.committed import CELLS, releases_matrix, stated_features

PY311, PY315 = "cu132-2.15.0-cpu-only", "cu132-2.15.0-cp315-cpu-only"


def test_each_column_names_its_python_and_older_cells_say_not_recorded() -> None:
    matrix = releases_matrix()
    assert {c.id: c.python for c in matrix.columns} == {
        "cpu-2.13.0": None, "cu130-2.14.1-cpu-only": None, PY311: "3.11", PY315: "3.15"
    }  # fmt: skip
    old = matrix.column("cpu-2.13.0")
    assert old.python_label == "Python not recorded" and old.environment.python == "3.11.7", (
        "the version string the old probe printed is shown as recorded, never read as the column's Python"
    )
    py315 = matrix.column(PY315)
    assert py315.interpreter.abi == "cp315" and not py315.interpreter.free_threaded
    assert py315.label == "CUDA 13.2 build, CPU only · torch 2.15.0+cu132 · Python 3.15"
    assert py315.reproduce.endswith("--cell-id cu132-2.15.0-cp315-cpu-only --python 3.15")


def test_rows_that_depend_on_the_interpreter_are_judged_where_they_can_be() -> None:
    matrix = releases_matrix()
    real = matrix.cell("compile_py315", PY315)
    assert real.state is Rollup.SUPPORTED and not real.other_python, "the real compile ran on Python 3.15"
    elsewhere = matrix.cell("compile_py315", PY311)
    assert elsewhere.other_python == 1 and elsewhere.state is not Rollup.NOT_IN_RELEASE, (
        "on 3.11 the 3.15 part is shown, never judged; the admission check still judges the row"
    )
    for column in (PY311, PY315):
        cell = matrix.cell("free_threading", column)
        assert (cell.state, cell.reason) == (Rollup.NOT_IN_RELEASE, "free-threaded Python only")
    assert matrix.cell("free_threading", "cpu-2.13.0").state is not Rollup.NOT_IN_RELEASE, (
        "a column whose Python was not recorded is never ruled out by it"
    )


def test_a_python_survives_matrix_json(tmp_path: Path) -> None:
    path = tmp_path / "matrix.json"
    write_matrix(releases_matrix(), path)
    again = load_matrix(path)
    assert again.column(PY315).python == "3.15" and again.column(PY315).interpreter.version == "3.15.0"
    assert again.column("cpu-2.13.0").python is None
    assert again.feature("free_threading").python == ("3.13t", "3.14t", "3.15t")
    assert again.cell("compile_py315", PY311).other_python == 1


def test_a_cell_whose_interpreter_contradicts_its_plan_is_refused_as_its_columns_error() -> None:
    planned = [PlannedCell(cell_id=PY315, backend="cu132", python="3.14"), PlannedCell(cell_id=PY311, python="3.11")]
    matrix = merge_cell_dirs([CELLS / PY315, CELLS / PY311], planned, jobs=1, features=stated_features())
    wrong = matrix.column(PY315)
    assert wrong.state is ColumnState.NO_DATA and wrong.score is None
    assert wrong.error == "refused: planned for Python 3.14, ran on CPython 3.15.0 (cp315)"
    assert {matrix.cell(f.id, PY315).state for f in matrix.features} <= {Rollup.NO_DATA, Rollup.NOT_IN_RELEASE}
    assert matrix.column(PY311).state is ColumnState.OK, "the one that ran on its planned Python stands"


def test_a_cell_without_an_interpreter_record_cannot_prove_a_planned_python(tmp_path: Path) -> None:
    cell = tmp_path / "old"
    shutil.copytree(CELLS / PY315, cell)
    manifest = json.loads((cell / "manifest.json").read_text())
    del manifest["environment"]["interpreter"]
    (cell / "manifest.json").write_text(json.dumps(manifest))
    matrix = merge_cell_dirs([cell], [PlannedCell(cell_id=PY315, python="3.15")], jobs=1)
    column = matrix.column(PY315)
    assert column.python is None and column.python_label == "Python not recorded"
    assert column.error == "refused: planned for Python 3.15, and the cell recorded no interpreter"


def test_a_planned_cell_that_sent_nothing_keeps_its_python() -> None:
    planned = PlannedCell(cell_id="cpu-cp314t", backend="cpu", torch="2.15.0", python="3.14t")
    matrix = merge_cell_dirs([CELLS / PY311], [planned], jobs=1)
    column = matrix.column("cpu-cp314t")
    assert column.state is ColumnState.NO_DATA and column.python == "3.14t"
