"""TEST DOUBLE of GitHub's REST API and of GitHub Pages (tests only): a tiny HTTP server in a thread that
answers what the harness asks of GitHub, from local folders, and records every request so a test can
check them.

- `GET /repos/O/R/actions/runs/{id}/jobs`: the jobs of run `id` as act runs them (`job_event` is fed
  act's JSON log line by line while the run goes on): queued until act starts one, then in_progress,
  then completed with its conclusion; a matrix leg is `<job> <cell id>`, a reusable workflow's job
  `<caller job> / <job> <cell id>`, as GitHub names them;
- `GET /repos/O/R/actions/runs/{id}/artifacts`: the artifacts of run `id` (folders in its store,
  `runs[id]/artifacts/<name>`), paginated like GitHub (`per_page`, `page`);
- `GET /repos/O/R/actions/artifacts/{aid}/zip`: 302 to `/blob/{aid}` (as GitHub redirects to blob
  storage); `/blob/{aid}` answers the zip and records whether a token came along (it must not);
- `GET /repos/O/R/issues/{n}/comments`, `POST` the same (create), `PATCH /repos/O/R/issues/comments/{id}`
  (update), `GET /repos/O/R/pulls/{n}` (its head commit): an in-memory pull request;
- `GET /pages/...`: the live GitHub Pages site (a folder the deploy-pages double copies into).

Every /repos call must carry `Authorization: Bearer <token>`, else 401. `read_only` makes writes 403,
as for a pull request from a fork. Requests outside this list are 404 and recorded as unexpected.
"""

from __future__ import annotations

import io
import json
import mimetypes
import threading
import time
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, list[str]]
    authorization: str
    body: Any = None


@dataclass
class PullRequest:
    number: int
    head_sha: str
    comments: list[dict[str, Any]] = field(default_factory=list)


class GitHubStandIn:
    def __init__(self, repository: str, token: str, runs: dict[int, Path] | None = None, pages: Path | None = None):
        self.repository = repository
        self.token = token
        self.runs = runs if runs is not None else {}  # run id -> its store (holding artifacts/)
        self.pages = pages
        self.calls: list[Call] = []
        self.unexpected: list[str] = []
        self.blob_with_token: list[str] = []
        self.pulls: dict[int, PullRequest] = {}
        self.read_only = False
        self._ids: dict[tuple[int, str], int] = {}
        self.jobs: dict[int, dict[str, dict[str, Any]]] = {}  # run id -> job name -> GitHub's job fields
        self._next_comment = 1000
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # -- lifetime ----------------------------------------------------------------------------
    def start(self) -> GitHubStandIn:
        handler = _handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_port}"

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"

    @property
    def pages_url(self) -> str:
        return f"{self.url}/pages/"

    def api_calls(self, method: str | None = None, contains: str = "") -> list[Call]:
        return [c for c in self.calls if (method is None or c.method == method) and contains in c.path]

    # -- jobs, from act's log as it runs --------------------------------------------------------
    def job_event(self, run_id: int, event: dict[str, Any]) -> None:
        job_id = event.get("jobID")
        if not job_id:
            return
        leg = (event.get("matrix") or {}).get("cell_id")
        name = f"{job_id} {leg}" if leg else str(job_id)
        nested = str(event.get("job") or "").split("/")
        if len(nested) == 3:  # caller job / called workflow / job: a job of a reusable workflow
            name = f"{nested[0]} / {name}"
        with self._lock:
            job = self.jobs.setdefault(run_id, {}).setdefault(
                name,
                {"name": name, "status": "in_progress", "conclusion": None, "started_at": _now(), "failed": False},
            )
            if event.get("stepResult") == "failure":
                job["failed"] = True
            if "jobResult" in event:
                # act 0.2.89 shares one result among a job's legs: a leg's own steps decide its conclusion
                job.update(status="completed", conclusion="failure" if job["failed"] else "success")

    # -- artifacts ---------------------------------------------------------------------------
    def artifact_id(self, run_id: int, name: str) -> int:
        with self._lock:
            return self._ids.setdefault((run_id, name), 9000 + len(self._ids))

    def artifacts(self, run_id: int) -> list[tuple[int, str, Path]]:
        store = self.runs.get(run_id)
        folder = store / "artifacts" if store else None
        if folder is None or not folder.is_dir():
            return []
        return [(self.artifact_id(run_id, p.name), p.name, p) for p in sorted(folder.iterdir()) if p.is_dir()]

    def zipped(self, aid: int) -> bytes | None:
        for (run_id, name), known in self._ids.items():
            if known == aid:
                store = self.runs.get(run_id)
                folder = store / "artifacts" / name if store else None
                if folder is None or not folder.is_dir():
                    return None
                buffer = io.BytesIO()
                with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                    for path in sorted(folder.rglob("*")):
                        if path.is_file():
                            archive.write(path, path.relative_to(folder).as_posix())
                return buffer.getvalue()
        return None

    # -- pull requests -------------------------------------------------------------------------
    def open_pull_request(self, number: int, head_sha: str) -> PullRequest:
        self.pulls[number] = PullRequest(number, head_sha)
        return self.pulls[number]

    def add_comment(self, number: int, body: str, login: str) -> dict[str, Any]:
        with self._lock:
            self._next_comment += 1
            comment = {
                "id": self._next_comment,
                "body": body,
                "user": {"login": login},
                "html_url": f"https://github.com/{self.repository}/pull/{number}#issuecomment-{self._next_comment}",
            }
        self.pulls[number].comments.append(comment)
        return comment


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _handler(hub: GitHubStandIn) -> type[BaseHTTPRequestHandler]:
    prefix = f"/api/repos/{hub.repository}"

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(
            self,
            status: int,
            payload: Any = None,
            *,
            raw: bytes | None = None,
            headers: dict | None = None,
            content_type: str | None = None,
        ):
            data = raw if raw is not None else json.dumps(payload).encode() if payload is not None else b""
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            kind = content_type or ("application/json" if raw is None else "application/octet-stream")
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                return raw.decode(errors="replace")

        def _route(self, method: str) -> None:
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            call = Call(method, parts.path, query, self.headers.get("Authorization", ""), self._body())
            hub.calls.append(call)
            path = parts.path
            if path.startswith("/pages/") and method == "GET":
                return self._pages(path[len("/pages/") :])
            if path.startswith("/blob/") and method == "GET":
                if call.authorization:
                    hub.blob_with_token.append(path)
                data = hub.zipped(int(path.rsplit("/", 1)[-1]))
                return self._send(200, raw=data) if data is not None else self._send(404, {"message": "Not Found"})
            if not path.startswith(prefix):
                hub.unexpected.append(f"{method} {path}")
                return self._send(404, {"message": "Not Found"})
            if call.authorization != f"Bearer {hub.token}":
                return self._send(401, {"message": "Bad credentials"})
            rest = path[len(prefix) :].strip("/").split("/")
            page = int(query.get("page", ["1"])[0])
            per_page = int(query.get("per_page", ["30"])[0])
            window = slice((page - 1) * per_page, page * per_page)
            if (
                method == "GET"
                and rest[:3] == ["actions", "runs", rest[2] if len(rest) > 2 else ""]
                and rest[3:] == ["artifacts"]
            ):
                found = hub.artifacts(int(rest[2]))
                items = [
                    {
                        "id": aid,
                        "name": name,
                        "size_in_bytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()),
                        "expired": False,
                        "archive_download_url": f"{hub.api_url}/repos/{hub.repository}/actions/artifacts/{aid}/zip",
                    }
                    for aid, name, folder in found
                ]
                return self._send(200, {"total_count": len(items), "artifacts": items[window]})
            if method == "GET" and rest[:2] == ["actions", "runs"] and rest[3:] == ["jobs"]:
                with hub._lock:
                    jobs = [
                        {k: v for k, v in j.items() if k != "failed"} for j in hub.jobs.get(int(rest[2]), {}).values()
                    ]
                return self._send(200, {"total_count": len(jobs), "jobs": jobs[window]})
            if method == "GET" and rest[:2] == ["actions", "artifacts"] and rest[3:] == ["zip"]:
                return self._send(302, headers={"Location": f"{hub.url}/blob/{rest[2]}"})
            if rest[:1] == ["issues"] and len(rest) == 3 and rest[2] == "comments":
                pull = hub.pulls.get(int(rest[1]))
                if pull is None:
                    return self._send(404, {"message": "Not Found"})
                if method == "GET":
                    return self._send(200, pull.comments[window])
                if method == "POST":
                    if hub.read_only:
                        return self._send(403, {"message": "Resource not accessible by integration"})
                    return self._send(201, hub.add_comment(pull.number, call.body["body"], "github-actions[bot]"))
            if method == "PATCH" and rest[:2] == ["issues", "comments"] and len(rest) == 3:
                if hub.read_only:
                    return self._send(403, {"message": "Resource not accessible by integration"})
                for pull in hub.pulls.values():
                    for comment in pull.comments:
                        if comment["id"] == int(rest[2]):
                            comment["body"] = call.body["body"]
                            return self._send(200, comment)
                return self._send(404, {"message": "Not Found"})
            if method == "GET" and rest[:1] == ["pulls"] and len(rest) == 2:
                pull = hub.pulls.get(int(rest[1]))
                if pull is None:
                    return self._send(404, {"message": "Not Found"})
                return self._send(200, {"number": pull.number, "head": {"sha": pull.head_sha}})
            hub.unexpected.append(f"{method} {path}")
            return self._send(404, {"message": "Not Found"})

        def _pages(self, relative: str) -> None:
            root = hub.pages
            target = (root / relative).resolve() if root else None
            if target is None or root is None or root.resolve() not in target.parents or not target.is_file():
                return self._send(404, {"message": "Not Found"})
            kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            return self._send(200, raw=target.read_bytes(), content_type=kind)

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_PATCH(self) -> None:
            self._route("PATCH")

    return Handler
