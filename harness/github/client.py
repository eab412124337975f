"""The few GitHub REST calls the harness makes, with the standard library (no SDK, no `gh`):
a run's jobs and its artifacts (collecting cells as they arrive), and listing, creating and updating
a pull request's comments. The API's root comes from $GITHUB_API_URL as on every Actions runner
(GitHub Enterprise Server included), the token from $GITHUB_TOKEN.

Every problem is one line: a missing token, HTTP 403 (the token may not do this: a pull request
from a fork gets a read-only one), 404, a network error. An artifact download is redirected to
blob storage; the redirect is followed without the token (it must not leave GitHub's API).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from harness.errors import HarnessError, InfrastructureError, UsageError

DEFAULT_API_URL: Final = "https://api.github.com"
TIMEOUT: Final = 60
PER_PAGE: Final = 100
MAX_PAGES: Final = 50  # 5,000 comments or artifacts: far past anything a run or a pull request holds


class GitHubError(InfrastructureError):
    """The API refused or failed; `status` is the HTTP status (0: no answer)."""

    def __init__(self, message: str, status: int = 0, *, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.status = status


@dataclass(frozen=True)
class Job:
    name: str
    status: str  # queued | in_progress | completed (| waiting, pending, requested)
    conclusion: str | None
    started_at: str | None


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    size: int
    expired: bool
    download_url: str


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the caller follows it, without the token


class GitHub:
    def __init__(self, repository: str, *, token: str | None = None, api_url: str | None = None) -> None:
        if repository.count("/") != 1 or not all(repository.split("/")):
            raise UsageError(f"repository {repository!r} is not OWNER/NAME")
        self.repository = repository
        self.token = token if token is not None else os.environ.get("GITHUB_TOKEN", "")
        self.api_url = (api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
        if not self.token:
            raise UsageError("no GitHub token: set GITHUB_TOKEN (in a workflow: ${{ github.token }})")
        self._opener = urllib.request.build_opener(_NoRedirect)

    # -- transport ---------------------------------------------------------------------------
    def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> tuple[int, Any, Any]:
        url = path if path.startswith(("http://", "https://")) else f"{self.api_url}{path}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/vnd.github+json")
        request.add_header("X-GitHub-Api-Version", "2022-11-28")
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("User-Agent", "torch-compat-harness")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with self._opener.open(request, timeout=TIMEOUT) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as err:
            if err.code in (301, 302, 303, 307, 308):
                return err.code, err.headers, b""
            detail = _message(err.read())
            raise GitHubError(f"{method} {url}: HTTP {err.code} {detail or err.reason}", err.code) from None
        except (urllib.error.URLError, OSError, TimeoutError) as err:
            raise GitHubError(f"{method} {url}: no answer ({getattr(err, 'reason', err)})") from None

    def _json(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        status, _, raw = self._request(method, path, body)
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            raise GitHubError(f"{method} {path}: HTTP {status} with an answer that is not JSON") from None

    def _pages(self, path: str, key: str | None = None) -> Iterator[dict[str, Any]]:
        joiner = "&" if "?" in path else "?"
        for page in range(1, MAX_PAGES + 1):
            found = self._json("GET", f"{path}{joiner}per_page={PER_PAGE}&page={page}")
            items = found.get(key, []) if key and isinstance(found, dict) else found
            if not isinstance(items, list):
                raise GitHubError(f"GET {path}: the answer is not a list")
            yield from items
            if len(items) < PER_PAGE:
                return

    # -- artifacts ---------------------------------------------------------------------------
    def artifacts(self, run_id: int) -> list[Artifact]:
        path = f"/repos/{self.repository}/actions/runs/{run_id}/artifacts"
        return [
            Artifact(
                id=int(a["id"]),
                name=str(a["name"]),
                size=int(a.get("size_in_bytes") or 0),
                expired=bool(a.get("expired")),
                download_url=str(a.get("archive_download_url") or ""),
            )
            for a in self._pages(path, "artifacts")
        ]

    def jobs(self, run_id: int) -> list[Job]:
        """The run's jobs (its latest attempt), a matrix job once per leg."""
        path = f"/repos/{self.repository}/actions/runs/{run_id}/jobs?filter=latest"
        return [
            Job(
                name=str(j.get("name") or ""),
                status=str(j.get("status") or ""),
                conclusion=j.get("conclusion"),
                started_at=j.get("started_at"),
            )
            for j in self._pages(path, "jobs")
        ]

    def download(self, artifact: Artifact) -> bytes:
        """The artifact's zip. GitHub answers with a redirect to storage, fetched without the token."""
        url = artifact.download_url or f"/repos/{self.repository}/actions/artifacts/{artifact.id}/zip"
        status, headers, raw = self._request("GET", url)
        if status in (301, 302, 303, 307, 308):
            location = headers.get("Location", "")
            if not location.startswith(("https://", "http://")):
                raise GitHubError(f"artifact {artifact.name}: a redirect to {location!r}")
            try:
                with urllib.request.urlopen(location, timeout=TIMEOUT * 5) as response:
                    return response.read()
            except (urllib.error.URLError, OSError, TimeoutError) as err:
                host = urllib.parse.urlsplit(location).netloc
                raise GitHubError(f"artifact {artifact.name}: download from {host} failed ({err})") from None
        return raw

    # -- pull request comments ------------------------------------------------------------------
    def comments(self, number: int) -> list[dict[str, Any]]:
        return list(self._pages(f"/repos/{self.repository}/issues/{number}/comments"))

    def create_comment(self, number: int, body: str) -> dict[str, Any]:
        return self._json("POST", f"/repos/{self.repository}/issues/{number}/comments", {"body": body})

    def update_comment(self, comment_id: int, body: str) -> dict[str, Any]:
        return self._json("PATCH", f"/repos/{self.repository}/issues/comments/{comment_id}", {"body": body})

    def pull_head(self, number: int) -> str:
        """The head commit of a pull request."""
        found = self._json("GET", f"/repos/{self.repository}/pulls/{number}")
        try:
            return str(found["head"]["sha"])
        except (KeyError, TypeError):
            raise GitHubError(f"pull request #{number}: the answer has no head commit") from None


def _message(raw: bytes) -> str:
    try:
        return str(json.loads(raw).get("message") or "")
    except (ValueError, AttributeError):
        return ""


def is_refusal(err: HarnessError) -> bool:
    """The token may not do this (403, or 404 for what a read-only token cannot see)."""
    return isinstance(err, GitHubError) and err.status in (401, 403, 404)
