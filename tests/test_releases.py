"""Release over release: a column is a backend and a torch build.

Real cells, committed (tests/data/make_cells.py made them): the real suites on torch 2.13.0+cpu, and on
PyPI's default torch of the two releases after it, 2.14.1 (the CUDA 13.0 build) and 2.15.0 (the CUDA
13.2 build), run on a host without a GPU: each a `cpu-only` column of its own, its GPU tests skipped as
hardware. All three ran on the CPU: one release line, 2.13.0 → 2.14.1 → 2.15.0.
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
from harness.publish.column_diff import diff_matrices, release_pairs
from harness.publish.gate import evaluate_gate
from harness.publish.render.badge import badges
from harness.publish.render.html import page_data
from harness.publish.render.markdown import render_markdown
from tests.publishing_cells import REGRESSED, real_cells

CELLS = Path(__file__).resolve().parent / "data" / "cells"
CPU, CU130, CU132 = "cpu-2.13.0", "cu130-2.14.1-cpu-only", "cu132-2.15.0-cpu-only"
CU132_PY315 = "cu132-2.15.0-cp315-cpu-only"  # the same build on Python 3.15 (Debian forky's, in an image)


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return merge_cell_dirs(sorted(p for p in CELLS.iterdir() if p.is_dir()))


def test_three_releases_are_three_columns_in_build_order(matrix: Matrix) -> None:
    assert [c.id for c in matrix.columns] == [CPU, CU130, CU132, CU132_PY315]
    assert [c.torch for c in matrix.columns] == ["2.13.0+cpu", "2.14.1+cu130", "2.15.0+cu132", "2.15.0+cu132"]
    assert [c.backend for c in matrix.columns] == ["cpu", "cu130", "cu132", "cu132"]
    assert [c.python for c in matrix.columns] == [None, None, "3.11", "3.15"], "older cells: not recorded"
    lines = [c.release_line for c in matrix.columns]
    assert lines == [("cpu", "", "")] * 3 + [("cpu", "", "3.15")], "all ran on the CPU; 3.15 is a line of its own"


def test_a_cuda_build_without_a_gpu_is_a_cpu_only_column_apart_from_the_backend(matrix: Matrix) -> None:
    column = matrix.column(CU130)
    assert column.variant == "cpu-only" and not column.speaks_for_backend
    assert column.heading == "CUDA 13.0 build, CPU only"
    assert column.variant_reason.startswith("no CUDA 13.0 device on this host")
    assert column.environment.device == "cpu" and column.environment.cuda == "13.0"
    graphs = matrix.cell("graphs", CU130)
    assert graphs.skips == {SkipClass.HARDWARE: graphs.skips[SkipClass.HARDWARE]} and graphs.skips[SkipClass.HARDWARE]
    assert matrix.cell("linalg", CU130).state is Rollup.SUPPORTED
    # never the backend's verdict: a gate on cu130 finds no column of it, the overall badge leaves it out
    why = (
        f"its columns here ran without its device ({CU130}) and never speak for CUDA 13.0; "
        "name one by its id to judge it"
    )
    result = evaluate_gate(matrix, no_data=True, backends=["cu130"])
    assert result.reasons == [("cu130", why)] and result.checked == []
    with pytest.raises(UsageError, match=re.escape(f"--backend cu130 selects no column: {why}")):
        evaluate_gate(matrix, any_failure=True, backends=["cu130"])
    assert evaluate_gate(matrix, any_failure=True, backends=[CU130]).checked == [CU130]
    cpu = matrix.column(CPU).score
    assert f">{cpu.supported}/{cpu.judged} feature cells<" in badges(matrix)["matrix.svg"], (
        "only the real column counts"
    )


def test_column_heads_name_the_build_in_summary_page_and_badges(matrix: Matrix) -> None:
    summary = render_markdown(matrix)
    assert "CUDA 13.0 build, CPU only<br>`cu130-2.14.1-cpu-only`<br>torch 2.14.1+cu130" in summary
    assert "no CUDA 13.0 device on this host" in summary
    columns = page_data(matrix)["columns"]
    assert [(c["name"], c["torch"], c["variant"], c["python"]) for c in columns] == [
        ("CPU", "2.13.0+cpu", None, "Python not recorded"),
        ("CUDA 13.0 build, CPU only", "2.14.1+cu130", "cpu-only", "Python not recorded"),
        ("CUDA 13.2 build, CPU only", "2.15.0+cu132", "cpu-only", "Python 3.11"),
        ("CUDA 13.2 build, CPU only", "2.15.0+cu132", "cpu-only", "Python 3.15"),
    ]
    assert "torch 2.15.0+cu132<br>Python 3.15" in summary and "torch 2.13.0+cpu<br>Python not recorded" in summary
    # Two CPU-only columns of two builds read apart in every text output, not only in the head.
    assert "**CUDA 13.0 build, CPU only · torch 2.14.1+cu130**" in summary
    assert "**CUDA 13.2 build, CPU only · torch 2.15.0+cu132 · Python 3.11**" in summary
    assert "torch 2.14.1+cu130" in badges(matrix)[f"{CU130}.svg"]
    assert "torch 2.15.0+cu132 · Python 3.15" in badges(matrix)[f"{CU132_PY315}.svg"]


def test_each_column_carries_the_command_that_reruns_it(matrix: Matrix) -> None:
    new = matrix.column(CU130).reproduce
    assert new.startswith(
        "python3 -m pip install torch==2.14.1+cu130 --index-url https://download.pytorch.org/whl/cu130"
    )
    assert "harness run --cpu-only --native --backend cu130 --cell-id cu130-2.14.1-cpu-only" in new
    assert "harness run --native --backend cpu --cell-id cpu-2.13.0" in matrix.column(CPU).reproduce
    assert f"rerun: `{new}`" in render_markdown(matrix)


def test_release_view_follows_the_cpu_line_through_three_releases(matrix: Matrix) -> None:
    assert release_pairs(matrix) == [(CPU, CU130), (CU130, CU132)]
    report = diff_matrices(matrix, matrix, release_pairs(matrix))
    assert [(c.old.torch, c.new.torch) for c in report.columns] == [
        ("2.13.0+cpu", "2.14.1+cu130"),
        ("2.14.1+cu130", "2.15.0+cu132"),
    ]
    assert report.columns_added == report.columns_removed == []
    releases = page_data(matrix)["releases"]
    # One release line: every column ran on the CPU (the CPU build, and the CUDA builds without a GPU).
    assert [(r["line"], r["cols"]) for r in releases] == [(["cpu", "", ""], [0, 1, 2])]
    assert [(step["a"], step["b"]) for step in releases[0]["steps"]] == [(0, 1), (1, 2)]


def test_each_release_says_its_new_rows_and_device_api(matrix: Matrix) -> None:
    """2.14 brought the rows of its release; 2.15's device API against 2.14.1's: the new names, and
    how many of them the suites exercise (a feature's `apis` in suites/features.toml)."""
    to_214, to_215 = diff_matrices(matrix, matrix, release_pairs(matrix)).columns
    since = {f.id: f.since for f in matrix.features}
    assert to_214.new_features and all(since[f] == "2.14" for f in to_214.new_features)
    assert to_215.new_features and all(since[f] == "2.15" for f in to_215.new_features)
    api = to_215.device_api
    assert api is not None and api.added and set(api.tested) <= set(api.added)
    assert "torch.mps.Stream" in api.added, "2.15 added MPS streams (read off the real 2.15.0 wheel)"
    assert "torch.mps.Stream" in api.tested, "and the suites exercise them (mps_streams)"
    line = api.summary("2.15.0+cu132")
    assert line == f"2.15.0+cu132: {len(api.added)} new device APIs, {len(api.tested)} tested" + (
        f", {len(api.removed)} gone" if api.removed else ""
    )
    summary = render_markdown(matrix)
    assert "### Release over release" in summary
    assert f"{len(api.added)} new device APIs, {len(api.tested)} tested by the suites" in summary


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
