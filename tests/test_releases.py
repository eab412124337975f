"""Release over release: a column is a backend and a torch build.

Real cells, committed (tests/data/make_cells.py made them): the real suites on this machine's CPU
torch 2.13.0+cpu, and on PyPI's default torch, the CUDA 13.0 build, 2.13.0 and 2.14.1, run on a
host without a GPU: each a `cpu-only` column of its own, its GPU tests skipped as hardware.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import UsageError
from harness.matrix_json import write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix
from harness.outcomes import Rollup, SkipClass
from harness.publish.diff import diff_matrices, release_pairs
from harness.publish.gate import evaluate_gate
from harness.publish.render.badge import badges
from harness.publish.render.html import page_data
from harness.publish.render.markdown import render_markdown
from tests.publishing_cells import REGRESSED, real_cells

CELLS = Path(__file__).resolve().parent / "data" / "cells"
CPU, CU130_OLD, CU130_NEW = "cpu-2.13.0", "cu130-2.13.0-cpu-only", "cu130-2.14.1-cpu-only"


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return merge_cell_dirs(sorted(p for p in CELLS.iterdir() if p.is_dir()))


def test_two_torch_builds_of_a_backend_are_two_columns_in_build_order(matrix: Matrix) -> None:
    assert [c.id for c in matrix.columns] == [CPU, CU130_OLD, CU130_NEW]
    assert [c.torch for c in matrix.columns] == ["2.13.0+cpu", "2.13.0+cu130", "2.14.1+cu130"]
    old, new = matrix.column(CU130_OLD), matrix.column(CU130_NEW)
    assert old.backend == new.backend == "cu130" and old.build_key == new.build_key


def test_a_cuda_build_without_a_gpu_is_a_cpu_only_column_apart_from_the_backend(matrix: Matrix) -> None:
    column = matrix.column(CU130_NEW)
    assert column.variant == "cpu-only" and not column.speaks_for_backend
    assert column.heading == "CUDA 13.0 build, CPU only"
    assert column.variant_reason.startswith("no CUDA 13.0 device on this host")
    assert column.environment.device == "cpu" and column.environment.cuda == "13.0"
    graphs = matrix.cell("graphs", CU130_NEW)
    assert graphs.skips == {SkipClass.HARDWARE: graphs.skips[SkipClass.HARDWARE]} and graphs.skips[SkipClass.HARDWARE]
    assert matrix.cell("linalg", CU130_NEW).state is Rollup.SUPPORTED
    # never the backend's verdict: a gate on cu130 finds no column of it, the overall badge leaves it out
    why = (
        f"its columns here ran without its device ({CU130_OLD}, {CU130_NEW}) and never speak for CUDA 13.0; "
        "name one by its id to judge it"
    )
    result = evaluate_gate(matrix, no_data=True, backends=["cu130"])
    assert result.reasons == [("cu130", why)] and result.checked == []
    with pytest.raises(UsageError, match=re.escape(f"--backend cu130 selects no column: {why}")):
        evaluate_gate(matrix, any_failure=True, backends=["cu130"])
    assert evaluate_gate(matrix, any_failure=True, backends=[CU130_NEW]).checked == [CU130_NEW]
    cpu = matrix.column(CPU).score
    assert f">{cpu.supported}/{cpu.judged} feature cells<" in badges(matrix)["matrix.svg"], (
        "only the real column counts"
    )


def test_column_heads_name_the_build_in_summary_page_and_badges(matrix: Matrix) -> None:
    summary = render_markdown(matrix)
    assert "CUDA 13.0 build, CPU only<br>`cu130-2.14.1-cpu-only`<br>torch 2.14.1+cu130" in summary
    assert "no CUDA 13.0 device on this host" in summary
    columns = page_data(matrix)["columns"]
    assert [(c["name"], c["torch"], c["variant"]) for c in columns] == [
        ("CPU", "2.13.0+cpu", None),
        ("CUDA 13.0 build, CPU only", "2.13.0+cu130", "cpu-only"),
        ("CUDA 13.0 build, CPU only", "2.14.1+cu130", "cpu-only"),
    ]
    assert "torch 2.14.1+cu130" in badges(matrix)[f"{CU130_NEW}.svg"]


def test_each_column_carries_the_command_that_reruns_it(matrix: Matrix) -> None:
    new = matrix.column(CU130_NEW).reproduce
    assert new.startswith(
        "python3 -m pip install torch==2.14.1+cu130 --index-url https://download.pytorch.org/whl/cu130"
    )
    assert "harness run --cpu-only --native --backend cu130 --cell-id cu130-2.14.1-cpu-only" in new
    assert "harness run --native --backend cpu --cell-id cpu-2.13.0" in matrix.column(CPU).reproduce
    assert f"rerun: `{new}`" in render_markdown(matrix)


def test_release_view_pairs_the_builds_of_a_backend(matrix: Matrix, capsys: pytest.CaptureFixture) -> None:
    assert release_pairs(matrix) == [(CU130_OLD, CU130_NEW)]
    report = diff_matrices(matrix, matrix, release_pairs(matrix))
    (pair,) = report.columns
    assert (pair.old.torch, pair.new.torch) == ("2.13.0+cu130", "2.14.1+cu130")
    assert report.columns_added == report.columns_removed == []
    releases = page_data(matrix)["releases"]
    # One release line: every column ran on the CPU (the CPU build, and the CUDA builds without a GPU).
    assert [(r["line"], r["cols"]) for r in releases] == [(["cpu", ""], [0, 1, 2])]
    (step,) = releases[0]["steps"]
    assert (step["a"], step["b"]) == (1, 2), "2.14.1's CUDA build follows 2.13.0's CUDA build, not the CPU build"


def _second_build(tmp_path: Path) -> Path:
    """The publishing tests' baseline and newer run, as two torch builds of one backend: their results
    are real, only the manifests' build (torch version and cell id) is set, as a release bump would."""
    cells = real_cells()
    out = tmp_path / "cells"
    for cell, version in ((cells.base, "2.12.0+cpu"), (cells.new, "2.13.0+cpu")):
        target = Path(shutil.copytree(cell, out / version))
        manifest = json.loads((target / "manifest.json").read_text())
        manifest["environment"]["torch"]["version"] = version
        manifest["cell_id"] = f"cpu-{version.split('+')[0]}"
        (target / "manifest.json").write_text(json.dumps(manifest))
    return out


def test_diff_releases_names_per_feature_changes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cells = _second_build(tmp_path)
    assert main(["merge", str(cells), "-o", str(tmp_path / "m.json")]) == 0
    assert main(["diff", str(tmp_path / "m.json"), "--releases", "--backend", "cpu"]) == 0
    text = capsys.readouterr().out
    assert "CPU: torch 2.12.0+cpu → 2.13.0+cpu" in text
    assert "| Alpha feature (`alpha`) | 🟡 partial | 🟡 partial | 1 | 1 |" in text
    assert f"`{REGRESSED}` (passed → failed)" in text
    assert main(["diff", str(tmp_path / "m.json"), "--releases", "--format", "json"]) == 0
    (pair,) = json.loads(capsys.readouterr().out)["columns"]
    assert pair["features"] == [
        {"feature": "alpha", "title": "Alpha feature", "before": "partial", "after": "partial",
         "newly_failing": 1, "newly_passing": 1}
    ]  # fmt: skip


def test_releases_needs_two_builds(matrix: Matrix, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "m.json"
    write_matrix(matrix, path)
    assert main(["diff", str(path), "--releases", "--backend", "cpu"]) == 2
    assert "no backend in this matrix has two torch builds" in capsys.readouterr().err
