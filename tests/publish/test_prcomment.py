"""The pull request comment's text (harness/publish/render/prcomment.py, `harness comment render`): the
pull request's columns compared with the published matrix, the others marked as the published run's,
within GitHub's comment limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.matrix_json import load_matrix, write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.publish.render.prcomment import COMMENT_LIMIT, MARKER, render_comment
from tests.publishing_cells import REGRESSED, real_cells


@pytest.fixture(scope="module")
def matrices(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The published nightly (cpu, a cu130 column, a NO DATA rocm one) and a pull request's cpu column."""
    cells = real_cells()
    out = tmp_path_factory.mktemp("pr")
    write_matrix(merge_cell_dirs([cells.base, cells.stale, cells.nodata]), out / "published.json")
    write_matrix(merge_cell_dirs([cells.new]), out / "pr.json")
    return {"published": out / "published.json", "pr": out / "pr.json"}


def test_the_comment_compares_the_pull_requests_column_and_marks_the_published_ones(matrices, tmp_path) -> None:
    out = tmp_path / "comment.md"
    args = ["comment", "render", str(matrices["pr"]), "--published", str(matrices["published"])]
    assert main([*args, "--published-url", "https://torch-compat.github.io/torch-compat/", "-o", str(out)]) == 0
    body = out.read_text(encoding="utf-8")
    assert body.startswith(MARKER + "\n## PyTorch compatibility matrix: this pull request\n")
    rows = {line.split(" | ")[1]: line for line in body.splitlines() if line.startswith("| ") and " | `" in line}
    assert "this pull request (torch 2.13.0+cpu)" in rows["`cpu`"] and rows["`cpu`"].endswith("| 1 | 1 |")
    assert "_the published run_" in rows["`cu130`"] and rows["`cu130`"].endswith("| – | – |")
    assert "_the published run_" in rows["`rocm`"] and "NO DATA" in rows["`rocm`"]
    assert "are not run on pull requests" in body
    assert "### CPU `cpu`: 1 newly failing, 1 newly passing" in body
    assert f"- `{REGRESSED}` (passed → failed): AssertionError: regressed" in body
    assert "- `alpha/test_a.py::test_fixed` (failed → passed)" in body
    assert "| Feature | Published | This pull request |" in body
    assert body.rstrip().endswith("**1 new regression(s)** against the published matrix.")


def test_without_a_published_matrix_the_comment_says_so(matrices) -> None:
    body = render_comment(load_matrix(matrices["pr"]), None)
    assert "No published matrix to compare with yet" in body and "newly failing" not in body.lower().split("|")[0]


def test_a_huge_diff_stays_within_githubs_comment_limit(matrices) -> None:
    pr, published = load_matrix(matrices["pr"]), load_matrix(matrices["published"])
    body = render_comment(pr, published, cap=10**6)
    assert len(body) <= COMMENT_LIMIT
    huge = render_comment(pr, published)
    assert len(huge) <= COMMENT_LIMIT
