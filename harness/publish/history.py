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
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from harness import jsonio
from harness.model import ColumnState, Matrix, Score
from harness.outcomes import BAD, Outcome, Rollup

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


@dataclass(frozen=True, kw_only=True)
class ColumnSummary:
    """One column of one published run: what the trend needs."""

    id: str
    backend: str
    display_name: str
    state: ColumnState
    counts: Mapping[Outcome, int]
    score: Score | None
    torch: str | None
    suite_sha: str | None
    started_at: str | None
    features: Mapping[str, Rollup]

    @property
    def has_data(self) -> bool:
        return self.state not in (ColumnState.NO_DATA, ColumnState.NOT_SHIPPED)

    @property
    def failing(self) -> int:
        return sum(self.counts.get(o, 0) for o in BAD)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "backend": self.backend,
            "display_name": self.display_name,
            "state": self.state.value,
            "counts": {k.value: v for k, v in self.counts.items()},
            "score": self.score.to_json() if self.score else None,
            "torch": self.torch,
            "suite_sha": self.suite_sha,
            "started_at": self.started_at,
            "features": {fid: state.value for fid, state in self.features.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ColumnSummary:
        return cls(
            id=str(data["id"]),
            backend=str(data.get("backend", "")),
            display_name=str(data.get("display_name", "")),
            state=ColumnState(data["state"]),
            counts={Outcome(k): int(v) for k, v in (data.get("counts") or {}).items()},
            score=Score.from_json(data["score"]) if data.get("score") else None,
            torch=data.get("torch"),
            suite_sha=data.get("suite_sha"),
            started_at=data.get("started_at"),
            features={str(k): Rollup(v) for k, v in (data.get("features") or {}).items()},
        )


@dataclass(frozen=True, kw_only=True)
class RunSummary:
    """One published run in history/: parsed once here; the page and the terminal read its fields."""

    generated_at: str
    run: str
    columns: tuple[ColumnSummary, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": HISTORY_SCHEMA,
            "generated_at": self.generated_at,
            "run": self.run,
            "columns": [c.to_json() for c in self.columns],
        }

    @classmethod
    def from_json(cls, data: Any) -> RunSummary:
        """Raises ValueError (naming what is wrong) for anything but a history/1 summary."""
        if not isinstance(data, dict) or data.get("schema") != HISTORY_SCHEMA:
            raise ValueError(f"not a {HISTORY_SCHEMA} summary")
        columns = data.get("columns")
        if not isinstance(columns, list):
            raise ValueError("its columns are not a list")
        try:
            return cls(
                generated_at=str(data.get("generated_at") or ""),
                run=str(data.get("run") or ""),
                columns=tuple(ColumnSummary.from_json(c) for c in columns),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ValueError(f"a column is malformed ({type(err).__name__}: {err})") from None


def summarize(matrix: Matrix) -> RunSummary:
    """What the trend needs from one run: per column its state, counts and score, per feature its state."""
    columns = []
    for column in matrix.columns:
        env = column.environment
        columns.append(
            ColumnSummary(
                id=column.id,
                backend=column.backend,
                display_name=column.display_name,
                state=column.state,
                counts=dict(column.counts),
                score=column.score,
                torch=env.torch,
                suite_sha=env.suite_sha,
                started_at=env.started_at,
                features={fid: cells[column.id].state for fid, cells in matrix.cells.items() if column.id in cells},
            )
        )
    return RunSummary(generated_at=matrix.generated_at, run=run_key(matrix), columns=tuple(columns))


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def append_run(history_dir: Path, matrix: Matrix) -> Path | None:
    """Write this run's summary (new file only) and refresh the index; None when already recorded."""
    history_dir.mkdir(parents=True, exist_ok=True)
    summary = summarize(matrix)
    if any(m.group(2) == summary.run for m in _names(history_dir)):
        write_index(history_dir)
        return None
    path = history_dir / f"{_stamp()}-{summary.run}.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(summary.to_json(), separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8")
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
    data = jsonio.dumps_pretty({"schema": HISTORY_SCHEMA, "runs": entries}) + b"\n"
    jsonio.write_atomic(history_dir / "index.json", lambda handle: handle.write(data))
    return entries


def load_history(history_dir: Path, limit: int | None = 200, problems: list[str] | None = None) -> list[RunSummary]:
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
            runs.append(RunSummary.from_json(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError) as err:
            if problems is not None:
                problems.append(f"{path}: unreadable history entry ({err})")
    return runs
