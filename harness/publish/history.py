"""Append-only run history: one compact summary per published run, its per-test results beside it,
and an index.

    history/<UTC time>-<run key>.json          the run's summary: per column state, counts, score,
                                               torch build, per-feature state (what the trend reads)
    history/tests/<UTC time>-<run key>.json    the run's per-test results: a keyframe (per column one
                                               character per test for its outcome and one for its
                                               duration) or what changed since the run before it
    history/tests/ids-<sha256 of the ids>.json the test ids those characters follow, shared by every
                                               run of the same tests (so a run adds no id list)
    history/index.json                         derived from the files present; rewritten each time

Every file but the index is written once and never rewritten; publishing the same matrix again finds
its run key in the newest entry and adds nothing (a key is every run laid into each column, reruns
included; a matrix that goes back to an older key, after a run was forgotten, is recorded again).
Summaries of schema history/1 (before per-test results) are still read: their runs have a trend point
and no per-test results.

Per-test results are compact because a site at its scale holds 20 columns x 50,000 tests per run: an
outcome is one character (`OUTCOME_CODES`), a duration one character of a logarithmic scale
(`duration_code`: 25 % steps from 1 ms to about 17 minutes). A nightly changes a few % of them, so
history-results/2 stores, per column, only the tests whose codes changed since the previous
recorded run (`base`), with a keyframe (every code) every `KEYFRAME_EVERY` runs, when the test ids
change, and for a column the base lacks: a year of nightly runs is then about 13 keyframes and 352
small deltas instead of 365 full copies, and a reader follows at most `KEYFRAME_EVERY` files back.
history-results/1 files (every code, every run; what publishes before it wrote) are still read, and
serve as a base like a keyframe.
"""

from __future__ import annotations

import array
import binascii
import hashlib
import json
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from harness import jsonio, outputs
from harness.model import ColumnState, Matrix, Provenance, Score, TestResult
from harness.outcomes import BAD, GOOD, Outcome, Rollup, SkipClass

HISTORY_SCHEMA: Final = "history/2"
READABLE_SCHEMAS: Final = frozenset({"history/1", HISTORY_SCHEMA})
RESULTS_SCHEMA: Final = "history-results/2"
RESULTS_SCHEMA_V1: Final = "history-results/1"  # every code in every run (read, and written for comparison)
READABLE_RESULTS: Final = frozenset({RESULTS_SCHEMA_V1, RESULTS_SCHEMA})
# A keyframe every 30 runs: a delta's chain (what a reader follows back) stays short, and a year of
# nightlies holds 13 full copies, not 365.
KEYFRAME_EVERY: Final = 30
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
    """Identifies the run: the GitHub run when there is one, else a hash of every run laid into
    each column (a partial rerun changes the key: its results are a new publication). A column of
    one run keys as it always did, so a history written before reruns were keyed reads the same."""
    run_id = os.environ.get("GITHUB_RUN_ID")
    if run_id and run_id.isdigit():
        attempt = os.environ.get("GITHUB_RUN_ATTEMPT", "1")
        return f"gh{run_id}-{attempt if attempt.isdigit() else '1'}"
    runs = sorted(f"{c.id}={'+'.join(r.run_id for r in c.runs) or c.run_id}@{c.run_attempt}" for c in matrix.columns)
    return hashlib.sha256("\n".join(runs).encode()).hexdigest()[:12]


def recorded_last(history_dir: Path, key: str) -> bool:
    """Whether the newest entry is this run: publishing the same matrix again adds nothing. An older
    entry with the key (a forgotten run brought the column back to it) is recorded again, so the
    newest entry is always what the page shows."""
    names = _names(history_dir)
    return bool(names) and names[-1].group(2) == key


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
    provenance: Provenance | None = None  # who vouched for it in that run (a merge given a trust file)

    @property
    def has_data(self) -> bool:
        return self.state not in (ColumnState.NO_DATA, ColumnState.NOT_SHIPPED)

    @property
    def failures(self) -> int:
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
            **({"provenance": self.provenance.to_json()} if self.provenance else {}),
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
            provenance=Provenance.from_json(data["provenance"]) if data.get("provenance") else None,
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
                provenance=column.provenance,
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
        # The ids above name these objects only while `found` holds them: rows made as they are read
        # (a spilled merge's, merge/store.py) are new objects in the next column, whose ids may repeat.
        coded = {id(None): (ABSENT_CODE, NO_DURATION)}
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


def append_run(history_dir: Path, matrix: Matrix, *, results_schema: str = RESULTS_SCHEMA) -> Path | None:
    """Write this run's summary and per-test results (new files only) and refresh the index; None
    when the run is already recorded. `results_schema` RESULTS_SCHEMA_V1 writes every code, as
    publishes before history-results/2 did (for the comparisons in tests and benchmarks)."""
    outputs.make_dirs(history_dir)
    summary = summarize(matrix)
    if recorded_last(history_dir, summary.run):
        write_index(history_dir)
        return None
    ids, outcomes, durations = result_codes(matrix)
    return append_codes(history_dir, summary, ids, outcomes, durations, results_schema=results_schema)


def append_codes(
    history_dir: Path,
    summary: RunSummary,
    ids: Sequence[str],
    outcomes: Mapping[str, str],
    durations: Mapping[str, str],
    *,
    results_schema: str = RESULTS_SCHEMA,
) -> Path | None:
    """append_run's writing, from the run's codes (`result_codes`): the id list when new, the
    per-test results (a delta against the previous recorded run where it can be), the summary last
    (a kill before it leaves an unnamed results file, which no summary points at: never a base)."""
    outputs.make_dirs(history_dir)
    if recorded_last(history_dir, summary.run):
        write_index(history_dir)
        return None
    stamp = _stamp()
    id_file = ids_name(ids)
    if not (history_dir / id_file).exists():
        _write_once(history_dir / id_file, _dumps({"schema": IDS_SCHEMA, "ids": list(ids)}))
    results = f"{RESULTS_DIR}/{stamp}-{summary.run}.json"
    full = {cid: {"outcomes": outcomes[cid], "durations": durations[cid]} for cid in outcomes}
    if results_schema == RESULTS_SCHEMA_V1:
        document: dict[str, Any] = {"schema": RESULTS_SCHEMA_V1, "run": summary.run, "ids": id_file, "columns": full}
    else:
        document = {"schema": RESULTS_SCHEMA, "run": summary.run, "ids": id_file, "base": None, "depth": 0}
        document["columns"] = full
        base = _delta_base(history_dir, id_file)
        if base is not None:
            name, depth, state = base
            document.update(base=name, depth=depth + 1, columns=delta_columns(state, outcomes, durations))
    _write_once(history_dir / results, _dumps(document))
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


def _delta_base(history_dir: Path, id_file: str) -> tuple[str, int, _State] | None:
    """The newest recorded run's results (name, chain depth, codes) when this run can be stored as
    a delta against them: same test ids, readable, and its chain shorter than KEYFRAME_EVERY - 1."""
    for run in reversed(load_history(history_dir, limit=None)):
        if not run.results:
            continue
        reader = _Reader(history_dir)
        try:
            document = reader.document(run.results)
            depth = int(document.get("depth") or 0)
            if document.get("ids") != id_file or depth + 1 >= KEYFRAME_EVERY:
                return None
            return run.results, depth, reader.state(run.results)
        except (OSError, ValueError, TypeError, AttributeError):
            return None  # an unreadable base: this run is a keyframe
    return None


def delta_columns(base: _State, outcomes: Mapping[str, str], durations: Mapping[str, str]) -> dict[str, Any]:
    """Per column, its changes since `base` ({"at": the changed tests' indices, "outcomes",
    "durations": their new codes}), or every code for a column the base lacks."""
    columns: dict[str, Any] = {}
    for cid, new_o in outcomes.items():
        new_d = durations[cid]
        if cid not in base.outcomes:
            columns[cid] = {"outcomes": new_o, "durations": new_d}
            continue
        old_o, old_d = base.outcomes[cid], base.durations[cid]
        if old_o == new_o and old_d == new_d:
            columns[cid] = {"at": "", "outcomes": "", "durations": ""}
            continue
        changed = [i for i, (a, b, c, d) in enumerate(zip(old_o, new_o, old_d, new_d, strict=True)) if a != b or c != d]
        if len(changed) * _CHANGE_CHARS >= 2 * len(new_o):  # the changes would outweigh every code
            columns[cid] = {"outcomes": new_o, "durations": new_d}
            continue
        columns[cid] = {
            "at": encode_indices(changed),
            "outcomes": "".join(new_o[i] for i in changed),
            "durations": "".join(new_d[i] for i in changed),
        }
    return columns


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


@dataclass(frozen=True)
class _State:
    """One recorded run's codes, every test: what a delta applies to."""

    ids: str  # the id list's file
    outcomes: Mapping[str, str]
    durations: Mapping[str, str]


class _Reader:
    """Reads results files of either schema, following a delta's chain to its keyframe; id lists and
    rebuilt runs are read once each."""

    def __init__(self, history_dir: Path) -> None:
        self.history_dir = history_dir
        self.ids_cache: dict[str, tuple[str, ...]] = {}
        self.positions: dict[str, dict[str, int]] = {}
        self.states: dict[str, _State] = {}
        self.points: dict[tuple[str, str], tuple[str, bool, dict[str, tuple[str, str]]]] = {}

    def ids(self, name: str) -> tuple[str, ...]:
        found = self.ids_cache.get(name)
        if found is None:
            if not _safe_relative(name):
                raise ValueError(f"id list path {name!r} is not a file under history/")
            data = json.loads((self.history_dir / name).read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("schema") != IDS_SCHEMA or not isinstance(data.get("ids"), list):
                raise ValueError(f"{name} is not a {IDS_SCHEMA} id list")
            found = self.ids_cache[name] = tuple(str(i) for i in data["ids"])
        return found

    def position(self, name: str) -> dict[str, int]:
        found = self.positions.get(name)
        if found is None:
            found = self.positions[name] = {test: index for index, test in enumerate(self.ids(name))}
        return found

    def document(self, name: str) -> dict[str, Any]:
        if not _safe_relative(name):
            raise ValueError(f"results path {name!r} is not a file under history/")
        data = json.loads((self.history_dir / name).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("schema") not in READABLE_RESULTS:
            raise ValueError(f"not a {RESULTS_SCHEMA} file")
        if not isinstance(data.get("columns") or {}, dict):
            raise ValueError("its columns are not an object")
        return data

    def _base(self, document: dict[str, Any], name: str, chain: int) -> str | None:
        base = document.get("base") if document.get("schema") == RESULTS_SCHEMA else None
        if base is None:
            return None
        if not isinstance(base, str) or base == name or chain >= KEYFRAME_EVERY:
            raise ValueError(f"its base {base!r} is not an earlier results file within {KEYFRAME_EVERY} runs")
        return base

    def state(self, name: str, chain: int = 0) -> _State:
        """Every code of the run `name` (a keyframe's own, a delta's applied to its base's)."""
        found = self.states.get(name)
        if found is not None:
            return found
        document = self.document(name)
        id_file = str(document.get("ids"))
        n = len(self.ids(id_file))
        base_name = self._base(document, name, chain)
        base = self.state(base_name, chain + 1) if base_name else None
        if base is not None and base.ids != id_file:
            raise ValueError(f"its base {base_name} follows other test ids")
        outcomes: dict[str, str] = {}
        durations: dict[str, str] = {}
        for column, codes in (document.get("columns") or {}).items():
            o, d = str(codes.get("outcomes", "")), str(codes.get("durations", ""))
            if "at" in codes:
                if base is None or column not in base.outcomes:
                    raise ValueError(f"column {column}: changes without a base that has the column")
                at = decode_indices(_index_bytes(codes["at"], len(o), len(d), column))
                if at and max(at) >= n:
                    raise ValueError(f"column {column}: a changed test's index is past the {n} tests")
                o, d = _apply(base.outcomes[column], at, o), _apply(base.durations[column], at, d)
            elif len(o) != n or len(d) != n:
                raise ValueError(f"column {column}: {len(o)} outcome codes for {n} tests")
            outcomes[str(column)], durations[str(column)] = o, d
        found = self.states[name] = _State(id_file, outcomes, durations)
        return found

    def test_codes(self, name: str, test: str, chain: int = 0) -> tuple[str, bool, dict[str, tuple[str, str]]]:
        """(its id list, whether `test` is among those ids, column -> the test's (outcome, duration)
        codes), read without rebuilding the run: a delta's value for one test is its own change or
        its base's."""
        key = (name, test)
        if key in self.points:
            return self.points[key]
        document = self.document(name)
        id_file = str(document.get("ids"))
        index = self.position(id_file).get(test)
        if index is None:
            absent = id_file, False, {str(c): ("", "") for c in (document.get("columns") or {})}
            self.points[key] = absent
            return absent
        n = len(self.ids(id_file))
        base_name = self._base(document, name, chain)
        base = None
        if base_name:
            base_ids, _, base = self.test_codes(base_name, test, chain + 1)
            if base_ids != id_file:
                raise ValueError(f"its base {base_name} follows other test ids")
        found: dict[str, tuple[str, str]] = {}
        for column, codes in (document.get("columns") or {}).items():
            o, d = str(codes.get("outcomes", "")), str(codes.get("durations", ""))
            if "at" in codes:
                if base is None or column not in base:
                    raise ValueError(f"column {column}: changes without a base that has the column")
                k = find_index(_index_bytes(codes["at"], len(o), len(d), column), index)
                found[str(column)] = (o[k], d[k]) if k >= 0 else base[column]
            elif len(o) != n or len(d) != n:
                raise ValueError(f"column {column}: {len(o)} outcome codes for {n} tests")
            else:
                found[str(column)] = (o[index], d[index])
        self.points[key] = (id_file, True, found)
        return id_file, True, found


# A delta's indices: unsigned 32-bit little-endian, base64 (json parses one string, not thousands
# of numbers; one test is found with bytes.rfind, all of them decoded in C).
_INDEX_BYTES: Final = 4
_CHANGE_CHARS: Final = _INDEX_BYTES * 4 / 3 + 2  # a change's share of a delta: its index in base64, 2 codes


def encode_indices(indices: Sequence[int]) -> str:
    packed = array.array("I", indices)
    if sys.byteorder == "big":
        packed.byteswap()
    return binascii.b2a_base64(packed.tobytes(), newline=False).decode("ascii")


def decode_indices(raw: bytes) -> array.array:
    packed = array.array("I")
    packed.frombytes(raw)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed


def _index_bytes(text: Any, outcomes: int, durations: int, column: str) -> bytes:
    """A delta column's indices as bytes, checked: one per changed code."""
    if not isinstance(text, str):
        raise ValueError(f"column {column}: its changed indices are not a base64 string")
    try:
        raw = binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except binascii.Error as err:
        raise ValueError(f"column {column}: its changed indices are not base64 ({err})") from None
    if len(raw) != outcomes * _INDEX_BYTES or outcomes != durations:
        raise ValueError(f"column {column}: its changes and their codes differ in number")
    return raw


def find_index(raw: bytes, index: int) -> int:
    """Where `index` is among the packed indices (the last time, as applying them all keeps the
    last), or -1."""
    key = index.to_bytes(_INDEX_BYTES, "little")
    end = len(raw)
    while (at := raw.rfind(key, 0, end)) >= 0:
        if at % _INDEX_BYTES == 0:
            return at // _INDEX_BYTES
        end = at + _INDEX_BYTES - 1  # a match across two indices: look before it
    return -1


def _apply(codes: str, at: Sequence[int], changes: str) -> str:
    buffer = bytearray(codes, "ascii")
    for index, code in zip(at, changes.encode("ascii"), strict=True):
        buffer[index] = code
    return buffer.decode("ascii")


def load_results(
    history_dir: Path, runs: Sequence[RunSummary], problems: list[str] | None = None
) -> list[RunResults | None]:
    """Each run's per-test results (None for a run that has none, or whose files are unreadable)."""
    reader = _Reader(history_dir)
    out: list[RunResults | None] = []
    for run in runs:
        if not run.results:
            out.append(None)
            continue
        try:
            state = reader.state(run.results)
            ids = reader.ids(state.ids)
            out.append(RunResults(run=run.run, ids=ids, outcomes=state.outcomes, durations=state.durations))
        except (OSError, ValueError, AttributeError, TypeError) as err:
            if problems is not None:
                problems.append(f"{history_dir / run.results}: unreadable per-test history ({err})")
            out.append(None)
    return out


def load_test_results(
    history_dir: Path, runs: Sequence[RunSummary], test: str, problems: list[str] | None = None
) -> list[RunResults | None]:
    """load_results for one test: each run's results cut to `test` (ids `(test,)`, or `()` where the
    run has no such test), read without rebuilding every run. What `harness history TEST` reads."""
    reader = _Reader(history_dir)
    out: list[RunResults | None] = []
    for run in runs:
        if not run.results:
            out.append(None)
            continue
        try:
            _, present, codes = reader.test_codes(run.results, test)
            outcomes = {column: o for column, (o, _) in codes.items()}
            durations = {column: d for column, (_, d) in codes.items()}
            out.append(RunResults(run=run.run, ids=(test,) if present else (), outcomes=outcomes, durations=durations))
        except (OSError, ValueError, AttributeError, TypeError, IndexError) as err:
            if problems is not None:
                problems.append(f"{history_dir / run.results}: unreadable per-test history ({err})")
            out.append(None)
    return out


def recorded_ids(history_dir: Path, runs: Sequence[RunSummary]) -> tuple[str, ...]:
    """The test ids of the newest run with readable per-test results (for "did you mean")."""
    reader = _Reader(history_dir)
    for run in reversed(runs):
        if run.results:
            try:
                return reader.ids(str(reader.document(run.results).get("ids")))
            except (OSError, ValueError, AttributeError, TypeError):
                continue
    return ()
