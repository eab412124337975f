"""The cell: one run of the suites for one backend and torch build on one runner.

A cell dir holds manifest.json, junit.xml, events.jsonl, collected.json and output.log
(see docs/cell-contract.md). The manifest is written before tests start and completed
after, always atomically, so a crash still leaves identity and status.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from harness import __version__
from harness.errors import InputError

MANIFEST: Final = "manifest.json"
JUNIT: Final = "junit.xml"
EVENTS: Final = "events.jsonl"
COLLECTED: Final = "collected.json"
OUTPUT_LOG: Final = "output.log"
MANIFEST_VERSION: Final = 1

_CELL_ID_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
# Names that look like credentials are never written anywhere (manifest, logs, reports).
SECRET_NAME_RE: Final = re.compile(
    r"(TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|COOKIE|SESSION)",
    re.IGNORECASE,
)


class CellStatus(StrEnum):
    RUNNING = "running"  # manifest written, run not finished (a crash of the harness leaves this)
    COMPLETED = "completed"  # pytest ran to its end (tests may have failed)
    INFRA_ERROR = "infra-error"  # health gate failed or the runner could not start the suites
    TIMEOUT = "timeout"  # the cell ran past its overall time limit and was stopped
    INTERRUPTED = "interrupted"  # Ctrl-C / SIGTERM
    CRASHED = "crashed"  # the test process or container died (signal, OOM kill)


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def valid_cell_id(cell_id: str) -> str:
    if not _CELL_ID_RE.match(cell_id):
        raise InputError(
            f"invalid cell id {cell_id!r}",
            hint="use letters, digits, '.', '_' and '-' (at most 128 characters)",
        )
    return cell_id


def default_cell_id(backend: str, torch: str | None = None, variant: str | None = None) -> str:
    """<backend>[-<torch build>][-<variant>]-<host>: two torch builds of a backend on one runner are
    two columns; a rerun of the same build replaces its column. `torch` is already a label
    (see execute.torch_label), e.g. 2.13.0 or 2.14.0.dev20261130."""
    host = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname())[:40] or "host"
    parts = [backend, *(re.sub(r"[^A-Za-z0-9._-]", "-", p) for p in (torch, variant) if p), host]
    return "-".join(parts)[:128]


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON via a temp file and rename, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes 0600; cell files are shared (artifacts, other users)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=False, default=str)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def github_context(env: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The GitHub Actions run this cell belongs to, when in Actions."""
    env = dict(os.environ) if env is None else env
    if env.get("GITHUB_ACTIONS") != "true":
        return None
    server = env.get("GITHUB_SERVER_URL", "https://github.com")
    repo = env.get("GITHUB_REPOSITORY", "")
    run_id = env.get("GITHUB_RUN_ID", "")
    return {
        "run_url": f"{server}/{repo}/actions/runs/{run_id}" if repo and run_id else None,
        "run_id": run_id or None,
        "run_attempt": int(env.get("GITHUB_RUN_ATTEMPT", "1") or 1),
        "job": env.get("GITHUB_JOB"),
        "workflow": env.get("GITHUB_WORKFLOW"),
        "sha": env.get("GITHUB_SHA"),
        "ref": env.get("GITHUB_REF"),
        "runner_name": env.get("RUNNER_NAME"),
    }


def redact_env(env: dict[str, str]) -> dict[str, str]:
    """Drop variables whose names look like credentials."""
    return {k: v for k, v in env.items() if not SECRET_NAME_RE.search(k)}


@dataclass
class CellDir:
    """Paths of one cell directory."""

    path: Path

    @property
    def manifest(self) -> Path:
        return self.path / MANIFEST

    @property
    def junit(self) -> Path:
        return self.path / JUNIT

    @property
    def events(self) -> Path:
        return self.path / EVENTS

    @property
    def collected(self) -> Path:
        return self.path / COLLECTED

    @property
    def output_log(self) -> Path:
        return self.path / OUTPUT_LOG

    def read_manifest(self) -> dict[str, Any]:
        return read_manifest(self.manifest)

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        write_json_atomic(self.manifest, manifest)


def read_manifest(path: Path) -> dict[str, Any]:
    """Read and minimally validate a manifest; errors name the file and the fix."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path.parent}: no manifest.json", hint="not a cell dir written by `harness run`") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err}") from err
    try:
        manifest = json.loads(raw)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: not valid JSON ({err.msg} at line {err.lineno})") from err
    if not isinstance(manifest, dict):
        raise InputError(f"{path}: manifest must be a JSON object")
    for key in ("cell_id", "backend", "run_id"):
        if not isinstance(manifest.get(key), str) or not manifest.get(key):
            raise InputError(f"{path}: manifest lacks {key!r}")
    valid_cell_id(manifest["cell_id"])
    return manifest


def new_manifest(
    *,
    cell_id: str,
    backend: str,
    mode: str,
    suite_sha: str | None,
    runner: dict[str, Any],
    planned: dict[str, Any],
    features: dict[str, Any],
    image: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest as written before tests start."""
    gh = github_context()
    return {
        "manifest_version": MANIFEST_VERSION,
        "cell_id": valid_cell_id(cell_id),
        "run_id": new_run_id(),
        "run_attempt": gh["run_attempt"] if gh else 1,
        "backend": backend,
        "mode": mode,
        "status": CellStatus.RUNNING.value,
        "started_at": utc_now(),
        "finished_at": None,
        "harness_version": __version__,
        "suite_sha": suite_sha,
        "image": image,
        "runner": runner,
        "github": gh,
        "environment": None,
        "planned": planned,
        "features": features,
        "exit": None,
        "error": None,
    }
