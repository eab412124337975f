"""The job-summary Markdown: symbols and words, legend, environments, failures, size limit."""

from __future__ import annotations

import copy

import pytest

from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix
from harness.publish.render.markdown import GITHUB_SUMMARY_LIMIT, render_markdown
from tests.cellfactory import run_sample_cell, write_suite
from tests.conftest import slow_fixture

FILES = {
    "alpha/test_alpha.py": """
        import pytest
        def test_ok():
            pass
        @pytest.mark.parametrize("x", ["a|b", "<script>alert(1)</script>"])
        def test_param(x):
            assert x == "never", f"value {x} | broke"
    """,
    "beta/test_beta.py": """
        import pytest
        @pytest.mark.xfail(reason="[known-issue https://example.org/7] expected", strict=False)
        def test_fixed_upstream():
            pass
    """,
}


@pytest.fixture(scope="module")
@slow_fixture("real runs of a sample suite")
def matrix(tmp_path_factory):
    root = tmp_path_factory.mktemp("md")
    suites = write_suite(root / "suites", FILES)
    cpu = run_sample_cell(suites, root / "r1", cell_id="cpu-md")
    gpu = run_sample_cell(suites, root / "r2", backend="rocm", cell_id="rocm-md")
    return merge_cell_dirs([cpu.cell_dir, gpu.cell_dir])


def test_table_has_symbols_words_and_columns(matrix):
    text = render_markdown(matrix)
    cpu = matrix.column("cpu-md")
    # Each column names the Python its cell recorded (issue 41): the NO DATA ROCm run ran on this one too.
    torch, python = cpu.environment.torch, cpu.python_label
    assert python.startswith("Python 3.") and matrix.column("rocm-md").python_label == python
    assert (
        f"| Feature | Since | CPU<br>`cpu-md`<br>torch {torch}<br>{python} | ROCm 7.14<br>`rocm-md`<br>{python} |"
        in text
    )
    assert "| **Alpha feature** (`alpha`) | 2.11 | 🟡 partial<br>1 passed, 2 failed | ❔ NO DATA |" in text
    assert "🟡 partial" in text and "❔ NO DATA" in text


def test_legend_and_one_environment_line_per_column(matrix):
    text = render_markdown(matrix)
    assert "**Legend.**" in text and "**unsupported**: the backend or torch build lacks the feature" in text
    env_lines = [line for line in text.splitlines() if line.startswith("- **") and "`" in line.split(":")[0]]
    assert len(env_lines) == 2
    assert "torch 2." in env_lines[0]
    assert "**NO DATA**" in env_lines[1] and "rocm" in env_lines[1]


def test_failures_listed_with_message_and_escaped(matrix):
    text = render_markdown(matrix)
    assert "### Failures (2)" in text
    assert "`alpha/test_alpha.py::test_param[a|b]`" in text  # a code span in a list item takes no escapes
    # Markup from results is either escaped or inside a code span, where Markdown shows it literally.
    outside_code = "".join(text.split("`")[0::2])
    assert "<script>" not in outside_code and "&lt;script" in outside_code
    assert "`alpha/test_alpha.py::test_param[<script>alert(1)</script>]`" in text
    assert "value a\\|b \\| broke" in text
    assert "### Unexpected passes (1)" in text and "test_fixed_upstream" in text


def test_detail_is_dropped_to_fit_the_limit(matrix):
    big = matrix.to_json()
    template = next(t for t in big["tests"] if t["id"].endswith("a|b]"))
    for i in range(40_000):
        clone = copy.deepcopy(template)
        clone["id"] = f"alpha/test_alpha.py::test_generated_{i}"
        clone["results"]["cpu-md"]["message"] = "AssertionError: " + "x" * 200
        big["tests"].append(clone)
    big = Matrix.from_json(big)
    full = render_markdown(big, limit=10**9)
    assert len(full.encode()) > GITHUB_SUMMARY_LIMIT
    fitted = render_markdown(big)
    assert len(fitted.encode()) <= GITHUB_SUMMARY_LIMIT
    assert "| **Alpha feature** (`alpha`)" in fitted and "**Legend.**" in fitted
    assert "more (see matrix.json or the HTML page)" in fitted
    tiny = render_markdown(big, limit=4_000)
    assert len(tiny.encode()) <= 4_000 and "| Feature |" in tiny


def test_an_empty_matrix_says_it_has_no_columns_instead_of_a_broken_table() -> None:
    """Issue 28: a matrix without columns printed `| Feature | Since |  |` over a two-column rule."""
    from tests.committed import releases_matrix

    full = releases_matrix()
    empty = Matrix.from_json({**full.to_json(), "columns": [], "tests": [], "cells": {f.id: {} for f in full.features}})
    text = render_markdown(empty)
    assert "| Feature | Since |" not in text
    assert "_No columns: no cell results were merged (run `harness` or `harness merge <cells>`)._" in text
    table = [line for line in render_markdown(full).splitlines() if line.startswith("|")][:2]
    assert table[0].count(" | ") + 1 == table[1].count("---|"), "a header and its rule have as many columns"


def test_the_legend_explains_host_side_tests_cpu_only_columns_and_composites() -> None:
    from tests.committed import releases_matrix

    text = render_markdown(releases_matrix())
    marks = next(line for line in text.splitlines() if line.startswith("Marks: "))
    assert "_judged without N host-side tests_: tests of host-side logic" in marks
    assert (
        "_CPU only (a column's heading, or the page's CPU-ONLY tag)_: a CUDA, ROCm or XPU build run on a host" in marks
    )
    assert "_composite of N runs_" in marks and "▫️ **not in this release**" in text
