"""Golden files of the committed real cells: the job summary and matrix.json, byte for byte.

A change to what the merge decides or how the summary reads shows up here as a diff to review;
`python -m pytest tests/publish/test_golden.py --update-golden` rewrites them after a deliberate
change. The cells are the real ones under tests/data/cells (tests/data/make_cells.py made them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.matrix_json import load_matrix, write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix
from harness.publish.render.markdown import render_markdown
from tests.committed import stated_features
from tests.conftest import REPO

CELLS = Path("tests") / "data" / "cells"
FIXED_TIME = "2026-12-01T00:00:00Z"


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    """The committed cells merged from the repository root (relative paths: the sources are stable)."""
    import dataclasses
    import os

    here = Path.cwd()
    os.chdir(REPO)
    try:
        merged = merge_cell_dirs(sorted(p for p in CELLS.iterdir() if p.is_dir()), features=stated_features())
    finally:
        os.chdir(here)
    return dataclasses.replace(merged, generated_at=FIXED_TIME)


def test_summary_markdown_is_golden(matrix: Matrix, golden) -> None:
    golden("summary-real-cells.md", render_markdown(matrix))


def test_matrix_json_is_golden(matrix: Matrix, golden, tmp_path: Path) -> None:
    path = tmp_path / "matrix.json"
    write_matrix(matrix, path)
    text = path.read_text(encoding="utf-8")
    golden("matrix-real-cells.json", text)
    assert load_matrix(path).to_json() == json.loads(text), "the golden file reads back as the same matrix"
