"""A (release, build) pair upstream does not ship is "not shipped": never NO DATA, never scored.

The cells are the committed real ones (tests/data/cells), copied with their identity restated so
that one matrix holds CUDA 12.6 beside torch 2.13 and the CPU build of 2.15 beside 2.13: 2.15 ships
no CUDA 12.6 build (harness/backends.toml), so the matrix gains a `not shipped` column for it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.matrix_json import load_matrix, validate_json, write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.model import ColumnState, Matrix
from harness.outcomes import Rollup
from harness.publish.gate import evaluate_gate
from harness.publish.render.badge import badges
from harness.publish.render.html import page_data
from harness.publish.render.markdown import render_markdown
from harness.registry import load_registry

CELLS = Path(__file__).resolve().parent / "data" / "cells"
PLACEHOLDER = "cu126-2.15-cpu-only-not-shipped"


def _restated(source: str, dest: Path, *, cell_id: str, backend: str, torch: str, cuda: str | None) -> Path:
    """A copy of a real cell whose manifest says another backend and torch build."""
    shutil.copytree(CELLS / source, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    env = manifest["environment"]
    base, _, tag = torch.partition("+")
    env["torch"].update(version=torch, base_version=base, local_tag=tag)
    env["runtime"]["cuda"] = cuda
    env["backend"] = backend
    manifest.update(cell_id=cell_id, backend=backend, run_id=f"{manifest['run_id']}-{cell_id}")
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    root = tmp_path_factory.mktemp("cells")
    cells = [
        CELLS / "cpu-2.13.0",
        _restated(
            "cpu-2.13.0", root / "cpu-2.15.0", cell_id="cpu-2.15.0", backend="cpu", torch="2.15.0+cpu", cuda=None
        ),
        _restated(
            "cu130-2.14.1-cpu-only",
            root / "cu126",
            cell_id="cu126-2.13.0-cpu-only",
            backend="cu126",
            torch="2.13.0+cu126",
            cuda="12.6",
        ),
        CELLS / "cu130-2.14.1-cpu-only",
    ]
    return merge_cell_dirs(cells)


def test_the_registry_says_2_15_ships_no_cuda_12_6() -> None:
    registry = load_registry()
    assert registry.ships("2.15.0", "cu126") is False and registry.ships("2.14.1", "cu126") is True


def test_a_pair_upstream_does_not_build_is_a_not_shipped_column(matrix: Matrix) -> None:
    ids = [c.id for c in matrix.columns]
    assert ids == ["cpu-2.13.0", "cpu-2.15.0", "cu126-2.13.0-cpu-only", PLACEHOLDER, "cu130-2.14.1-cpu-only"]
    column = matrix.column(PLACEHOLDER)
    assert column.state is ColumnState.NOT_SHIPPED and not column.has_data and not column.shipped
    assert column.score is None and column.release_series == "2.15" and column.build_key == ("cu126", "cpu-only")
    assert "torch 2.15 is not shipped as a CUDA 12.6 build" in (column.error or "")
    assert {matrix.cell(f.id, PLACEHOLDER).state for f in matrix.features} == {Rollup.NOT_SHIPPED}
    # Absent but shipped (cpu for 2.14, cu130 for 2.13 and 2.15) is no column at all, as before.
    assert not any("not-shipped" in c.id and c.backend in ("cpu", "cu130") for c in matrix.columns)


def test_not_shipped_survives_matrix_json(matrix: Matrix, tmp_path: Path) -> None:
    path = tmp_path / "matrix.json"
    write_matrix(matrix, path)
    data = json.loads(path.read_text())
    validate_json(data)
    saved = next(c for c in data["columns"] if c["id"] == PLACEHOLDER)
    assert saved["state"] == "not-shipped" and saved["release"] == "2.15" and saved["score"] is None
    loaded = load_matrix(path)
    assert loaded.column(PLACEHOLDER).state is ColumnState.NOT_SHIPPED
    assert loaded.cell("linalg", PLACEHOLDER).state is Rollup.NOT_SHIPPED


def test_the_summary_says_not_shipped_never_no_data(matrix: Matrix) -> None:
    summary = render_markdown(matrix)
    head, rows = summary.split("\n", 3)[2], summary.split("\n")
    assert "CUDA 12.6 build, CPU only<br>`cu126-2.15-cpu-only-not-shipped`<br>torch 2.15" in head
    linalg = next(r for r in rows if "(`linalg`)" in r)
    assert linalg.split(" | ")[5] == "📦 not shipped"
    score = next(r for r in rows if r.startswith("| **Features supported**"))
    assert score.split(" | ")[5] == "not shipped"
    assert "📦 **not shipped**: upstream does not build" in summary  # the legend
    env_line = next(r for r in rows if r.startswith("- **CUDA 12.6 build, CPU only") and PLACEHOLDER in r)
    assert "📦 **not shipped**: torch 2.15 is not shipped as a CUDA 12.6 build" in env_line
    assert "NO DATA" not in env_line


def test_not_shipped_is_never_judged(matrix: Matrix) -> None:
    result = evaluate_gate(matrix, no_data=True)
    assert PLACEHOLDER not in result.checked and not result.reasons
    with pytest.raises(UsageError, match=f"--backend {PLACEHOLDER} selects only columns upstream does not ship"):
        evaluate_gate(matrix, no_data=True, backends=[PLACEHOLDER])
    assert f"{PLACEHOLDER}.svg" not in badges(matrix)


def test_the_page_and_its_release_view_say_not_shipped(matrix: Matrix) -> None:
    data = page_data(matrix)
    index = [c["id"] for c in data["columns"]].index(PLACEHOLDER)
    assert data["columns"][index]["state"] == "not-shipped" and data["columns"][index]["release"] == "2.15"
    assert data["states"]["not-shipped"]["meaning"].startswith("upstream does not build")
    (cpu_line,) = data["releases"]  # every column ran on the CPU: one release line
    assert index in cpu_line["cols"], "the release line shows that 2.15 ships no CUDA 12.6 build"
    assert all(step["b"] != index for step in cpu_line["steps"]), "nothing is compared with a build that does not exist"
