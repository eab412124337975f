"""The GitHub REST client (harness/github/client.py) against the API stand-in (tests/workflows/github_standin.py):
pages of results, the artifact download redirected to storage without the token, one-line refusals."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.github.client import GitHub, GitHubError, is_refusal
from tests.workflows.github_standin import GitHubStandIn

REPO_NAME = "torch-compat/torch-compat"
TOKEN = "ghs_standin_token"


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    stand_in = GitHubStandIn(REPO_NAME, TOKEN, runs={}, pages=tmp_path).start()
    monkeypatch.setenv("GITHUB_API_URL", stand_in.api_url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    yield stand_in
    stand_in.stop()
    assert stand_in.unexpected == [], f"requests the API stand-in does not know: {stand_in.unexpected}"


def test_artifacts_are_listed_by_page_and_downloaded_without_the_token(hub, tmp_path) -> None:
    store = tmp_path / "run-1"
    for n in range(105):
        (store / "artifacts" / f"cell-{n:03d}").mkdir(parents=True)
        (store / "artifacts" / f"cell-{n:03d}" / "x.txt").write_text(str(n))
    hub.runs[1001] = store
    api = GitHub(REPO_NAME)
    found = api.artifacts(1001)
    assert len(found) == 105 and len(hub.api_calls("GET", "artifacts")) == 2
    data = api.download(next(a for a in found if a.name == "cell-042"))
    assert zipfile.ZipFile(io.BytesIO(data)).read("x.txt") == b"42"
    assert hub.api_calls("GET", "/blob/") and hub.blob_with_token == [], "the token went to blob storage"


def test_the_runs_jobs_come_by_page(hub) -> None:
    for n in range(101):
        hub.job_event(7, {"jobID": "cell", "matrix": {"cell_id": f"c{n}"}, "job": "matrix/matrix/cell"})
    hub.job_event(
        7, {"jobID": "cell", "matrix": {"cell_id": "c3"}, "job": "matrix/matrix/cell", "jobResult": "success"}
    )
    jobs = GitHub(REPO_NAME).jobs(7)
    assert len(jobs) == 101 and len(hub.api_calls("GET", "/jobs")) == 2
    c3 = next(j for j in jobs if j.name == "matrix / cell c3")
    assert (c3.status, c3.conclusion) == ("completed", "success")
    assert all(c.query.get("filter") == ["latest"] for c in hub.api_calls("GET", "/jobs"))


def test_refusals_and_missing_tokens_are_one_line(hub, monkeypatch: pytest.MonkeyPatch) -> None:
    api = GitHub(REPO_NAME, token="wrong")
    with pytest.raises(GitHubError) as caught:
        api.artifacts(1)
    assert caught.value.status == 401 and "HTTP 401 Bad credentials" in str(caught.value) and is_refusal(caught.value)
    with pytest.raises(GitHubError, match="HTTP 404"):
        GitHub(REPO_NAME).pull_head(99)
    monkeypatch.delenv("GITHUB_TOKEN")
    with pytest.raises(UsageError, match="no GitHub token: set GITHUB_TOKEN"):
        GitHub(REPO_NAME)
    with pytest.raises(UsageError, match="is not OWNER/NAME"):
        GitHub("just-a-name", token="t")
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # nothing listens there
    with pytest.raises(GitHubError, match="no answer"):
        GitHub(REPO_NAME, token="t").artifacts(1)
