"""Append-only run history: one compact summary per published run, its per-test results beside it,
and an index.

    history/<UTC time>-<run key>.json          the run's summary: per column state, counts, score,
                                               torch build, per-feature state (what the trend reads)
    history/tests/<UTC time>-<run key>.json    the run's per-test results: per column one character
                                               per test for its outcome and one for its duration
    history/tests/ids-<sha256 of the ids>.json the test ids those characters follow, shared by every
                                               run of the same tests (so a run adds no id list)
    history/index.json                         derived from the files present; rewritten each time

Every file but the index is written once and never rewritten; publishing the same matrix again finds
its run key already recorded and adds nothing. Summaries of schema history/1 (before per-test
results) are still read: their runs have a trend point and no per-test results.

Per-test results are compact because a site at its scale holds 20 columns x 50,000 tests per run: an
outcome is one character (`OUTCOME_CODES`), a duration one character of a logarithmic scale
(`duration_code`: 25 % steps from 1 ms to about 17 minutes). Both strings compress to little in git.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from harness import jsonio, outputs
from harness.model import ColumnState, Matrix, Score, TestResult
from harness.outcomes import BAD, GOOD, Outcome, Rollup, SkipClass

HISTORY_SCHEMA: Final = "history/2"
READABLE_SCHEMAS: Final = frozenset({"history/1", HISTORY_SCHEMA})
RESULTS_SCHEMA: Final = "history-results/1"
IDS_SCHEMA: Final = "history-ids/1"
RESULTS_DIR: Final = "tests"
# <publish time, UTC, to the microsecond>-<run key>.json: names sort in the order runs were appended.
_NAME_RE: Final = re.compile(r"^(\d{8}T\d{6}\.\d{6}Z)-([A-Za-z0-9._-]+)\.json$")

# One character per outcome; a skip that is a known issue has its own, since it is never a failure.
OUTCOME_CODES: Final[Mapping[Outcome, str]] = {
    Outcome.PASSED: "p",
    Outcome.FAILED: "f",
    Outcome.ERROR: "e",
    Outcome.SKIPPED: "s",
    Outcome.XFAILED: "x",
    Outcome.XPASSED: "X",
    Outcome.FLAKY: "k",
    Outcome.TIMEOUT: "t",
    Outcome.CRASHED: "c",
    Outcome.NOT_RUN: "n",
}
KNOWN_ISSUE_CODE: Final = "K"
ABSENT_CODE: Final = "-"  # no result for this test on this column in that run
UNRECORDED_CODE: Final = "?"  # the run recorded no per-test results for this column (history/1, or no column)
CODE_OUTCOMES: Final[Mapping[str, Outcome]] = {
    **{code: outcome for outcome, code in OUTCOME_CODES.items()},
    KNOWN_ISSUE_CODE: Outcome.SKIPPED,
}
BAD_CODES: Final = frozenset(OUTCOME_CODES[o] for o in BAD)
GOOD_CODES: Final = frozenset(OUTCOME_CODES[o] for o in GOOD)

# Durations: 0 is under 1 ms, k >= 1 is 1 ms x 1.25^(k-1) (the nearest step), '.' is unknown.
DURATION_ALPHABET: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"
_DURATION_STEP: Final = 1.25
_DURATION_FLOOR: Final = 0.001
NO_DURATION: Final = "."


def duration_code(seconds: float | None) -> str:
    if seconds is None or seconds != seconds:  # None or NaN
        return NO_DURATION
    if seconds < _DURATION_FLOOR:
        return DURATION_ALPHABET[0]
    step = round(math.log(seconds / _DURATION_FLOOR, _DURATION_STEP)) + 1
    return DURATION_ALPHABET[max(1, min(step, len(DURATION_ALPHABET) - 1))]


def duration_of(code: str) -> float | None:
    """The duration a code stands for (the middle of its step), None when unknown."""
    index = DURATION_ALPHABET.find(code)
    if index < 0:
        return None
    return 0.0 if index == 0 else _DURATION_FLOOR * _DURATION_STEP ** (index - 1)


def outcome_code(result: TestResult) -> str:
    if result.outcome is Outcome.SKIPPED and result.skip_class is SkipClass.KNOWN_ISSUE:
        return KNOWN_ISSUE_CODE
    return OUTCOME_CODES[result.outcome]


def run_key(matrix: Matrix) -> str:
    """Identifies the run: the GitHub run when there is one, else a hash of the columns' runs."""
    run_id = os.environ.get("GITHUB_RUN_ID")
    if run_id and run_id.isdigit():
        attempt = os.environ.get("GITHUB_RUN_ATTEMPT", "1")
        return f"gh{run_id}-{attempt if attempt.isdigit() else '1'}"
    runs = sorted(f"{c.id}={c.run_id}@{c.run_attempt}" for c in matrix.columns)
    return hashlib.sha256("\n".join(runs).encode()).hexdigest()[:12]


def run_url() -> str | None:
    """The GitHub Actions run that published, when there is one (its page lists the jobs and logs)."""
    server, repo, run_id = (os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    if server and repo and run_id and run_id.isdigit():
        return f"{server}/{repo}/actions/runs/{run_id}"
    return None


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
    # test id -> "run <id> started <when>" for the tests whose result came from a later partial run
    reruns: Mapping[str, str] = field(default_factory=dict)

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
            **({"reruns": dict(self.reruns)} if self.reruns else {}),
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
            reruns={str(k): str(v) for k, v in (data.get("reruns") or {}).items()},
        )


@dataclass(frozen=True, kw_only=True)
class RunSummary:
    """One published run in history/: parsed once here; the page and the terminal read its fields."""

    generated_at: str
    run: str
    columns: tuple[ColumnSummary, ...]
    run_url: str | None = None
    results: str | None = None  # its per-test results, relative to history/ (None: history/1)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "schema": HISTORY_SCHEMA,
            "generated_at": self.generated_at,
            "run": self.run,
            "columns": [c.to_json() for c in self.columns],
        }
        if self.run_url:
            data["run_url"] = self.run_url
        if self.results:
            data["results"] = self.results
        return data

    @classmethod
    def from_json(cls, data: Any) -> RunSummary:
        """Raises ValueError (naming what is wrong) for anything but a history/1 or /2 summary."""
        if not isinstance(data, dict) or data.get("schema") not in READABLE_SCHEMAS:
            raise ValueError(f"not a {HISTORY_SCHEMA} summary")
        columns = data.get("columns")
        if not isinstance(columns, list):
            raise ValueError("its columns are not a list")
        results = data.get("results")
        if results is not None and not (isinstance(results, str) and _safe_relative(results)):
            raise ValueError(f"its results path {results!r} is not a file under history/")
        try:
            return cls(
                generated_at=str(data.get("generated_at") or ""),
                run=str(data.get("run") or ""),
                columns=tuple(ColumnSummary.from_json(c) for c in columns),
                run_url=data.get("run_url") if isinstance(data.get("run_url"), str) else None,
                results=results,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ValueError(f"a column is malformed ({type(err).__name__}: {err})") from None


def _safe_relative(path: str) -> bool:
    """A path inside history/ (a hostile summary must not make a reader open /etc/passwd)."""
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and all(parts)


@dataclass(frozen=True, kw_only=True)
class RunResults:
    """One run's per-test results: the ids they follow, and per column the outcome and duration codes."""

    run: str
    ids: tuple[str, ...]
    outcomes: Mapping[str, str]  # column id -> one code per id
    durations: Mapping[str, str]

    def position(self) -> dict[str, int]:
        return {test: index for index, test in enumerate(self.ids)}


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
                reruns={row.id: f"run {r.run} started {r.at or '?'}" for row, r in matrix.results(column.id) if r.run}
                if column.composite
                else {},
            )
        )
    return RunSummary(generated_at=matrix.generated_at, run=run_key(matrix), columns=tuple(columns), run_url=run_url())


def result_codes(matrix: Matrix) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(test ids, column -> outcome codes, column -> duration codes) for the columns with results.
    A result shared by many tests (the merge shares equal ones) is encoded once."""
    ids = [row.id for row in matrix.tests]
    outcomes: dict[str, str] = {}
    durations: dict[str, str] = {}
    coded: dict[int, tuple[str, str]] = {id(None): (ABSENT_CODE, NO_DURATION)}
    for column in matrix.columns:
        if not column.has_data:
            continue
        found = [row.results.get(column.id) for row in matrix.tests]
        for result in found:
            if id(result) not in coded:
                coded[id(result)] = (outcome_code(result), duration_code(result.duration))  # type: ignore[union-attr]
        pairs = [coded[id(result)] for result in found]
        outcomes[column.id] = "".join([pair[0] for pair in pairs])
        durations[column.id] = "".join([pair[1] for pair in pairs])
    return ids, outcomes, durations


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False) + "\n"


def _write_once(path: Path, text: str) -> bool:
    """Create `path` with `text`; False (and nothing written) when it exists: a file of the history
    is never replaced (harness/outputs.py links it into place)."""
    return outputs.write_once(path, text)


def ids_name(ids: Sequence[str]) -> str:
    digest = hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()[:16]
    return f"{RESULTS_DIR}/ids-{digest}.json"


def append_run(history_dir: Path, matrix: Matrix) -> Path | None:
    """Write this run's summary and per-test results (new files only) and refresh the index; None
    when the run is already recorded."""
    outputs.make_dirs(history_dir)
    summary = summarize(matrix)
    if any(m.group(2) == summary.run for m in _names(history_dir)):
        write_index(history_dir)
        return None
    stamp = _stamp()
    ids, outcomes, durations = result_codes(matrix)
    id_file = ids_name(ids)
    if not (history_dir / id_file).exists():
        _write_once(history_dir / id_file, _dumps({"schema": IDS_SCHEMA, "ids": ids}))
    results = f"{RESULTS_DIR}/{stamp}-{summary.run}.json"
    columns = {cid: {"outcomes": outcomes[cid], "durations": durations[cid]} for cid in outcomes}
    _write_once(
        history_dir / results,
        _dumps({"schema": RESULTS_SCHEMA, "run": summary.run, "ids": id_file, "columns": columns}),
    )
    summary = RunSummary(
        generated_at=summary.generated_at,
        run=summary.run,
        columns=summary.columns,
        run_url=summary.run_url,
        results=results,
    )
    path = history_dir / f"{stamp}-{summary.run}.json"
    if not _write_once(path, _dumps(summary.to_json())):
        return None
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


class _IdLists:
    """Id lists read once each (every run of the same tests shares one)."""

    def __init__(self, history_dir: Path) -> None:
        self.history_dir = history_dir
        self.cache: dict[str, tuple[str, ...]] = {}

    def get(self, name: str) -> tuple[str, ...]:
        found = self.cache.get(name)
        if found is None:
            if not _safe_relative(name):
                raise ValueError(f"id list path {name!r} is not a file under history/")
            data = json.loads((self.history_dir / name).read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("schema") != IDS_SCHEMA or not isinstance(data.get("ids"), list):
                raise ValueError(f"{name} is not a {IDS_SCHEMA} id list")
            found = self.cache[name] = tuple(str(i) for i in data["ids"])
        return found


def load_results(
    history_dir: Path, runs: Sequence[RunSummary], problems: list[str] | None = None
) -> list[RunResults | None]:
    """Each run's per-test results (None for a run that has none, or whose files are unreadable)."""
    lists = _IdLists(history_dir)
    out: list[RunResults | None] = []
    for run in runs:
        if not run.results:
            out.append(None)
            continue
        path = history_dir / run.results
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("schema") != RESULTS_SCHEMA:
                raise ValueError(f"not a {RESULTS_SCHEMA} file")
            ids = lists.get(str(data.get("ids")))
            outcomes: dict[str, str] = {}
            durations: dict[str, str] = {}
            for column, codes in (data.get("columns") or {}).items():
                o, d = str(codes.get("outcomes", "")), str(codes.get("durations", ""))
                if len(o) != len(ids) or len(d) != len(ids):
                    raise ValueError(f"column {column}: {len(o)} outcome codes for {len(ids)} tests")
                outcomes[str(column)], durations[str(column)] = o, d
            out.append(RunResults(run=run.run, ids=ids, outcomes=outcomes, durations=durations))
        except (OSError, ValueError, AttributeError, TypeError) as err:
            if problems is not None:
                problems.append(f"{path}: unreadable per-test history ({err})")
            out.append(None)
    return out
