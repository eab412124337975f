"""Text from input is shown as text: a `|`, a backtick run or `<script>` in a feature title, a test id,
a message or a property never changes the Markdown's structure or becomes markup.

The cell comes from a real pytest run; the summary is rendered to HTML by a real CommonMark parser
(markdown-it, with GitHub's table rule), and the result is checked as a browser would see it.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix
from harness.publish.column_diff import diff_matrices
from harness.publish.render.diff_report import render_diff_markdown
from harness.publish.render.markdown import render_markdown
from tests.cellfactory import run_sample_cell, write_suite
from tests.conftest import slow_fixture

HOSTILE = "a|b ``tick`` <script>alert(1)</script> *bold* [link](http://x) &amp;"
FEATURES = {"alpha": {"title": f"Alpha {HOSTILE}", "since": "2.13 | x", "claim": HOSTILE}}
FILES = {
    "alpha/test_hostile.py": f"""
        import json
        import pytest

        HOSTILE = {HOSTILE!r}

        @pytest.mark.parametrize("x", ["p|q", "``x``", "<script>alert(2)</script>", "`"])
        def test_param(x):
            assert x == "never", f"failed with {{x}} | " + HOSTILE

        def test_figure(record_property):
            figure = {{"value": 2.5, "unit": "x", "label": HOSTILE, "shape": "4 | 4", "dtype": "<b>", "claim": HOSTILE}}
            record_property("perf.hostile", json.dumps(figure))
            record_property("note", HOSTILE)
    """,
}


class _Cells(HTMLParser):
    """Collects the table rows (cell texts) and any element that is not plain structure."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.tags: set[str] = set()
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture(scope="module")
@slow_fixture("a real run of a hostile sample suite")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    root = tmp_path_factory.mktemp("escaping")
    suites = write_suite(root / "suites", FILES, FEATURES)
    cell = run_sample_cell(suites, root / "results", cell_id="cpu-hostile").cell_dir
    return merge_cell_dirs([cell])


def _rendered(markdown: str) -> _Cells:
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    parsed = _Cells()
    parsed.feed(html)
    return parsed


def test_summary_tables_keep_their_shape_and_show_input_as_text(matrix: Matrix) -> None:
    parsed = _rendered(render_markdown(matrix))
    assert "script" not in parsed.tags and "a" not in parsed.tags, "input became markup"
    tables = [row for row in parsed.rows if row]
    header = tables[0]
    assert len(header) == 3  # Feature, Since, one column
    feature_row = next(row for row in tables if row[0].startswith("Alpha"))
    assert len(feature_row) == len(header), "a | in the title or release split the row"
    assert feature_row[0] == f"Alpha {HOSTILE} (alpha)"  # the title exactly as written, shown as text
    assert feature_row[1] == "2.13 | x"
    figure_row = next(row for row in tables if HOSTILE in row[0] and "2.5x" in row)
    assert figure_row[0] == HOSTILE and figure_row[2:] == ["2.5x", "4 | 4", "<b>", HOSTILE]
    assert figure_row[1].startswith("CPU · torch "), "a column outside the head is named with its torch build"


def test_failure_list_shows_each_test_id_verbatim(matrix: Matrix) -> None:
    markdown = render_markdown(matrix)
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    for param in ("p|q", "``x``", "<script>alert(2)</script>", "`"):
        test_id = f"alpha/test_hostile.py::test_param[{param}]"
        code = test_id.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert f"<code>{code}</code>" in html, test_id
    assert "<script>" not in html


def test_diff_markdown_is_escaped_too(matrix: Matrix) -> None:
    data = matrix.to_json()
    for test in data["tests"]:
        for result in test["results"].values():
            if result["outcome"] == "failed":
                result["outcome"] = "passed"
    before = Matrix.from_json(data)
    parsed = _rendered(render_diff_markdown(diff_matrices(before, matrix)))
    assert "script" not in parsed.tags
    moved = next(row for row in parsed.rows if row and row[0].startswith("Alpha"))
    assert moved[0] == f"Alpha {HOSTILE} (alpha)" and len(moved) == 5
