"""Append-only run history: one compact summary per published run, plus an index.

`history/<UTC timestamp>-<run key>.json` is written once and never rewritten; publishing the
same matrix again finds its run key already recorded and adds nothing. `history/index.json`
is derived from the files present, so it can always be rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from harness.cell import write_json_atomic
from harness.model import Matrix

HISTORY_SCHEMA: Final = "history/1"
# <publish time, UTC, to the microsecond>-<run key>.json: names sort in the order runs were appended.
_NAME_RE: Final = re.compile(r"^(\d{8}T\d{6}\.\d{6}Z)-([A-Za-z0-9._-]+)\.json$")


def run_key(matrix: Matrix) -> str:
    """Identifies the run: the GitHub run when there is one, else a hash of the columns' runs."""
    run_id = os.environ.get("GITHUB_RUN_ID")
    if run_id and run_id.isdigit():
        attempt = os.environ.get("GITHUB_RUN_ATTEMPT", "1")
        return f"gh{run_id}-{attempt if attempt.isdigit() else '1'}"
    runs = sorted(f"{c.id}={c.run_id}@{c.run_attempt}" for c in matrix.columns)
    return hashlib.sha256("\n".join(runs).encode()).hexdigest()[:12]


def summarize(matrix: Matrix) -> dict[str, Any]:
    """What the trend needs from one run: per column its state, counts and score, per feature its state."""
    columns = []
    for column in matrix.columns:
        env = column.environment
        columns.append(
            {
                "id": column.id,
                "backend": column.backend,
                "display_name": column.display_name,
                "state": column.state.value,
                "counts": {k.value: v for k, v in column.counts.items()},
                "score": column.score.to_json() if column.score else None,
                "torch": env.torch,
                "suite_sha": env.suite_sha,
                "started_at": env.started_at,
                "features": {
                    fid: cells[column.id].state.value for fid, cells in matrix.cells.items() if column.id in cells
                },
            }
        )
    return {
        "schema": HISTORY_SCHEMA,
        "generated_at": matrix.generated_at,
        "run": run_key(matrix),
        "columns": columns,
    }


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def append_run(history_dir: Path, matrix: Matrix) -> Path | None:
    """Write this run's summary (new file only) and refresh the index; None when already recorded."""
    history_dir.mkdir(parents=True, exist_ok=True)
    summary = summarize(matrix)
    if any(m.group(2) == summary["run"] for m in _names(history_dir)):
        write_index(history_dir)
        return None
    path = history_dir / f"{_stamp()}-{summary['run']}.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(summary, separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8")
    # link() fails if the name exists, so an existing summary is never replaced.
    try:
        os.link(tmp, path)
    except FileExistsError:
        return None
    finally:
        tmp.unlink(missing_ok=True)
    write_index(history_dir)
    return path


def _names(history_dir: Path) -> list[re.Match[str]]:
    found = [_NAME_RE.match(p.name) for p in history_dir.glob("*.json")]
    return sorted((m for m in found if m), key=lambda m: m.group(0))


def write_index(history_dir: Path) -> list[dict[str, str]]:
    entries = [{"file": m.group(0), "stamp": m.group(1), "run": m.group(2)} for m in _names(history_dir)]
    write_json_atomic(history_dir / "index.json", {"schema": HISTORY_SCHEMA, "runs": entries})
    return entries


def load_history(history_dir: Path, limit: int | None = 200, problems: list[str] | None = None) -> list[dict[str, Any]]:
    """The summaries, oldest first (the newest `limit` of them). An unreadable file is noted in
    `problems` and left out: one bad entry must not hide the rest of the trend."""
    if not history_dir.is_dir():
        return []
    names = _names(history_dir)
    if limit is not None:
        names = names[-limit:]
    runs = []
    for match in names:
        path = history_dir / match.group(0)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            if problems is not None:
                problems.append(f"{path}: unreadable history entry ({err})")
            continue
        if isinstance(data, dict) and data.get("schema") == HISTORY_SCHEMA and isinstance(data.get("columns"), list):
            runs.append(data)
        elif problems is not None:
            problems.append(f"{path}: not a {HISTORY_SCHEMA} summary")
    return runs
