"""Posting the pull request comment (harness/github/comment.py, `harness comment post`): created once,
then updated in place, through GitHub's REST API, here a local stand-in that records and checks every
request (tests/workflows/github_standin.py). The same stand-in serves the workflow runs under act."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.matrix_json import write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.publish.render.prcomment import MARKER
from tests.publishing_cells import real_cells
from tests.workflows.github_standin import GitHubStandIn

REPO_NAME = "torch-compat/torch-compat"
TOKEN = "ghs_standin_token"


@pytest.fixture(scope="module")
def matrices(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The published nightly (cpu, a cu130 column, a NO DATA rocm one) and a pull request's cpu column."""
    cells = real_cells()
    out = tmp_path_factory.mktemp("pr")
    write_matrix(merge_cell_dirs([cells.base, cells.stale, cells.nodata]), out / "published.json")
    write_matrix(merge_cell_dirs([cells.new]), out / "pr.json")
    return {"published": out / "published.json", "pr": out / "pr.json"}


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    stand_in = GitHubStandIn(REPO_NAME, TOKEN, runs={}, pages=tmp_path).start()
    monkeypatch.setenv("GITHUB_API_URL", stand_in.api_url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO_NAME)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    yield stand_in
    stand_in.stop()
    assert stand_in.unexpected == [], f"requests the API stand-in does not know: {stand_in.unexpected}"


def _post(body: Path, pr: int = 7, head: str | None = "abc123") -> int:
    return main(["comment", "post", "--pr", str(pr), "--body", str(body), *(["--head-sha", head] if head else [])])


def test_the_comment_is_created_once_then_updated_in_place(matrices, hub, tmp_path, capsys) -> None:
    pull = hub.open_pull_request(7, "abc123")
    hub.add_comment(7, f"{MARKER} quoted by a person, not ours", "someone")  # the marker alone is not enough
    for n in range(120):  # more than a page of comments before ours
        hub.add_comment(7, f"comment {n}", "reviewer")
    first, second = tmp_path / "first.md", tmp_path / "second.md"
    first.write_text(f"{MARKER}\nfirst push\n", encoding="utf-8")
    second.write_text(f"{MARKER}\nsecond push\n", encoding="utf-8")
    assert _post(first) == 0
    assert "comment created on pull request #7" in capsys.readouterr().out
    pull.head_sha = "def456"
    assert _post(second, head="def456") == 0
    assert "comment updated on pull request #7" in capsys.readouterr().out
    ours = [c for c in pull.comments if c["user"]["login"] == "github-actions[bot]"]
    assert len(ours) == 1 and ours[0]["body"] == second.read_text()
    assert pull.comments[0]["body"].endswith("quoted by a person, not ours"), "someone else's comment was touched"
    methods = [(c.method, c.path.split("/api/repos/torch-compat/torch-compat/")[-1]) for c in hub.calls]
    assert methods == [
        ("GET", "pulls/7"),
        ("GET", "issues/7/comments"),
        ("GET", "issues/7/comments"),
        ("POST", "issues/7/comments"),
        ("GET", "pulls/7"),
        ("GET", "issues/7/comments"),
        ("GET", "issues/7/comments"),
        ("PATCH", f"issues/comments/{ours[0]['id']}"),
    ]
    assert {c.authorization for c in hub.calls} == {f"Bearer {TOKEN}"}
    assert [c.query["page"] for c in hub.api_calls("GET", "comments")][:2] == [["1"], ["2"]]


def test_a_run_of_another_commit_does_not_comment(hub, tmp_path, capsys) -> None:
    hub.open_pull_request(8, "newer")
    body = tmp_path / "c.md"
    body.write_text(f"{MARKER}\nx\n", encoding="utf-8")
    assert _post(body, pr=8, head="older") == 2
    assert "pull request #8 is at newer, but the run tested older: not commenting" in capsys.readouterr().err
    assert hub.api_calls("POST") == [] and hub.api_calls("PATCH") == []


def test_without_permission_the_job_summary_carries_the_comment(hub, tmp_path, monkeypatch, capsys) -> None:
    hub.open_pull_request(9, "abc123")
    hub.read_only = True
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    body = tmp_path / "c.md"
    body.write_text(f"{MARKER}\nthe text\n", encoding="utf-8")
    assert _post(body, pr=9) == 0
    assert "::warning::not allowed to comment on pull request #9" in capsys.readouterr().out
    assert summary.read_text(encoding="utf-8") == body.read_text(encoding="utf-8")


def test_bad_input_is_one_line(hub, tmp_path, capsys) -> None:
    body = tmp_path / "c.md"
    body.write_text("no marker here\n", encoding="utf-8")
    assert _post(body) == 2
    assert "has no marker" in capsys.readouterr().err
    body.write_text(MARKER, encoding="utf-8")
    assert main(["comment", "post", "--pr", "7; rm -rf /", "--body", str(body)]) == 2
    assert "is not a pull request number" in capsys.readouterr().err
    assert hub.calls == []
