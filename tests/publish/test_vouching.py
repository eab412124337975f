"""Who vouches for each column, where a user reads the matrix: the job summary (a mark in the column's
head, a line per column), the page's header, the pull request comment, matrix.json and history."""

from __future__ import annotations

import dataclasses
import html
import json
from pathlib import Path

import pytest

from harness.matrix_json import matrix_from_bytes, validate_matrix
from harness.model import Matrix, Provenance, ProvenanceState
from harness.publish.history import RunSummary, summarize
from harness.publish.render.html import render_html
from harness.publish.render.markdown import render_markdown
from harness.publish.render.prcomment import render_comment
from harness.publish.render.vouching import vouch_section
from tests.committed import sample_matrices
from tests.publish.test_html import Page, browser  # noqa: F401 (fixture)

VERIFIED = Provenance(
    state=ProvenanceState.VERIFIED,
    by="AMD <lab> | ROCm",
    signer="github.com/amd/compat/.github/workflows/cells.yml@refs/heads/main",
    run_url="https://github.com/amd/compat/actions/runs/42/attempts/1",
)
INVALID = Provenance(state=ProvenanceState.INVALID, reason="junit.xml changed since it was signed")


@pytest.fixture(scope="module")
def vouched() -> Matrix:
    """The sample run (a cpu column with results, a rocm column NO DATA), as a merge with a trust file
    would have it: cpu verified by a workflow, rocm invalid."""
    matrix = sample_matrices()[1]
    cpu, rocm = matrix.columns
    columns = (dataclasses.replace(cpu, provenance=VERIFIED), dataclasses.replace(rocm, provenance=INVALID))
    return dataclasses.replace(matrix, columns=columns)


def test_without_a_trust_file_nothing_is_said() -> None:
    matrix = sample_matrices()[1]
    assert vouch_section(matrix) == []
    assert "Who vouches" not in render_markdown(matrix) and 'id="provenance"' not in render_html(matrix)
    assert "provenance" not in json.dumps(matrix.to_json()["columns"])


def test_the_summary_marks_each_column_and_says_who_vouches(vouched: Matrix) -> None:
    text = render_markdown(vouched)
    head = text.splitlines()[2]
    assert head.count("<br>🔏 verified") == 1 and head.count("<br>⛔ invalid") == 1
    section = vouch_section(vouched)
    assert section[1] == "### Who vouches for each column"
    assert section[3].endswith(
        ": 🔏 verified by **AMD &lt;lab> \\| ROCm** "
        "(github.com/amd/compat/.github/workflows/cells.yml@refs/heads/main) "
        "· [run](https://github.com/amd/compat/actions/runs/42/attempts/1)"
    ), "the name is text: escaped, never markup"
    assert section[4].endswith(": ⛔ invalid: junit.xml changed since it was signed")
    assert "\n".join(section) in text


def test_the_page_header_names_who_vouches_and_links_the_run(vouched: Matrix) -> None:
    page = render_html(vouched)
    start = page.index('<details id="provenance"')
    header = page[start : page.index("</details>", start)]
    assert page.index("<header>") < start < page.index("</header>")
    assert html.escape("AMD <lab> | ROCm") in header and "<lab>" not in header
    assert 'href="https://github.com/amd/compat/actions/runs/42/attempts/1"' in header
    assert 'class="vouch-invalid"' in header and "junit.xml changed since it was signed" in header


def test_the_pull_request_comment_says_who_vouches(vouched: Matrix) -> None:
    comment = render_comment(vouched, None)
    assert "### Who vouches for each column" in comment and "⛔ invalid: junit.xml changed" in comment


def test_matrix_json_and_history_keep_it_per_column_and_run(vouched: Matrix) -> None:
    data = vouched.to_json()
    validate_matrix(data)
    assert data["columns"][0]["provenance"] == {
        "state": "verified",
        "by": "AMD <lab> | ROCm",
        "signer": "github.com/amd/compat/.github/workflows/cells.yml@refs/heads/main",
        "run_url": "https://github.com/amd/compat/actions/runs/42/attempts/1",
    }
    again = matrix_from_bytes(json.dumps(data).encode(), "m.json")
    assert [c.provenance for c in again.columns] == [VERIFIED, INVALID]
    summary = summarize(vouched)
    assert RunSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary
    assert [c.provenance for c in summary.columns] == [VERIFIED, INVALID]
    bad = json.loads(json.dumps(data))
    bad["columns"][0]["provenance"]["state"] = "trusted"
    with pytest.raises(Exception, match="provenance"):
        validate_matrix(bad)


@pytest.mark.browser
def test_the_page_tags_each_columns_head_in_a_browser(vouched: Matrix, tmp_path: Path, browser) -> None:  # noqa: F811
    """In headless Chromium: each column's head carries its tag (VERIFIED, INVALID) with who or why as
    its title; the header's list names who vouches; no script error."""
    path = tmp_path / "index.html"
    path.write_text(render_html(vouched), encoding="utf-8")
    page = Page(browser, path.as_uri())
    tags = page.page.eval_on_selector_all(
        "thead th.col .tag[class*='vouch-']", "els => els.map(e => [e.textContent, e.title])"
    )
    assert tags == [
        [
            "VERIFIED",
            "verified by AMD <lab> | ROCm (github.com/amd/compat/.github/workflows/cells.yml@refs/heads/main)",
        ],
        ["INVALID", "junit.xml changed since it was signed"],
    ]
    assert page.page.inner_text("#provenance summary") == "Who vouches for each column"
    page.close()
