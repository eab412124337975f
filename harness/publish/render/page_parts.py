"""The page's test data in parts, so that a site of 20 columns x 50,000 tests draws at once and no
file of it comes near GitHub's limits: the page's own file holds the head (columns, features, the
roll-up, the trend); the tests come in parts the page loads when a feature, a test or a filter needs
them. A small matrix keeps every part inside the page (one file that works from file://).

    r<feature>-<k>   a feature's test rows, up to ROWS_PER_PART: [id, cells, detail part, test number],
                     a cell [outcome index, duration] per column (0: no result there)
    d<n>             details of tests (message, trace, skip class, ...): {test id: [per column: {...} or 0]},
                     cut at DETAIL_PART_BYTES so that even a run where everything fails stays small
    h<n>             per-test history of tests n*TIMELINE_TESTS onwards (by test number): per column, the
                     outcome codes and the duration codes of each test over the runs, one after the other
                     ({"o": {column: codes}, "d": {column: codes}}), and the verdict (first bad, last good,
                     flips) of each test that has one ({"v": {column: {position: verdict}}}); the runs and
                     builds they follow are in the head
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from harness import jsonio
from harness.errors import InputError
from harness.model import EVIDENCE, Matrix, TestResult, TestRow, evidence_text, trim
from harness.outcomes import Outcome, Scope
from harness.publish.history import RunResults, RunSummary
from harness.publish.render.figures import figure_row
from harness.publish.timeline import NOTEWORTHY, column_builds, is_quiet, judge, transposed

ROWS_PER_PART: Final = 2_000
DETAIL_PART_BYTES: Final = 512 * 1024
TIMELINE_TESTS: Final = 64
TRACE_CAP: Final = 4_000
MESSAGE_CAP: Final = 2_000


@dataclass
class Parts:
    """Every part by name, and where each feature's rows are."""

    data: dict[str, Any] = field(default_factory=dict)
    features: list[list[str]] = field(default_factory=list)  # feature index -> its row parts, in order

    def encoded(self) -> dict[str, bytes]:
        return {name: jsonio.dumps(value, int_keys=True) for name, value in self.data.items()}


@functools.lru_cache(maxsize=65_536)
def duration3(value: float | None) -> float | None:
    """Three significant digits for the page (results share durations: each is rounded once)."""
    if value is None:
        return None
    return float(f"{value:.3g}")


def detail(result: TestResult) -> dict[str, Any]:
    """What the page's panel shows of one result beyond its outcome and duration."""
    properties: dict[str, Any] = {}
    for key, value in result.properties.items():
        row = (
            figure_row("", "", "", key[len("perf.") :], value)
            if key.startswith("perf.") and isinstance(value, dict)
            else None
        )
        if key == EVIDENCE and isinstance(value, dict):
            properties["evidence"] = evidence_text(
                {"device": value.get("device"), "kernels": _kernels_of(value), "replayed": _replays(value)}
            )
            continue
        if row is not None:
            extra = ", ".join(x for x in (row.shape, row.dtype) if x)
            properties[row.label] = (
                row.value_text + (f" ({extra})" if extra else "") + (f"; claim: {row.claim}" if row.claim else "")
            )
        else:
            properties[key] = value if isinstance(value, str | int | float | bool) else json.dumps(value)
    found = {
        "m": trim(result.message, MESSAGE_CAP),
        "t": trim(result.trace, TRACE_CAP),
        "o": trim(result.output, MESSAGE_CAP),
        "c": result.skip_class.value if result.skip_class else None,
        "l": result.link,
        "a": result.attempts if result.attempts > 1 else None,
        "p": properties or None,
        "s": result.strict,
        "g": result.signal,
        "h": result.scope.value if result.scope is not Scope.BACKEND else None,
        "x": [trim(m, MESSAGE_CAP) for m in result.extra_messages] or None,
        "r": result.run,  # a later partial run's result, overlaid on the column's base run
        "w": result.at,
    }
    return {k: v for k, v in found.items() if v is not None}


def _kernels_of(evidence: dict[str, Any]) -> list[Any]:
    """A test's claimed ops' kernels (else all it ran), as [name, launches] pairs."""
    per_op = [k for found in (evidence.get("ops") or {}).values() for k in found or ()]
    return [k for k in per_op or evidence.get("kernels") or () if isinstance(k, list | tuple) and k]


def _replays(evidence: dict[str, Any]) -> int:
    graphs = evidence.get("graphs")
    return int(graphs.get("replayed") or 0) if isinstance(graphs, dict) else 0


def _has_detail(result: TestResult) -> bool:
    return (
        result.outcome is not Outcome.PASSED
        or bool(result.properties)
        or result.scope is not Scope.BACKEND
        or result.run is not None
    )


def build_parts(
    matrix: Matrix,
    runs: Sequence[RunSummary] = (),
    results: Sequence[RunResults | None] = (),
) -> Parts:
    """Every part of the page's test data (the history parts only when runs with results are given),
    held together: the plain path of `emit_parts`, which hands each part on as it is made."""
    made: dict[str, Any] = {}
    features, order = emit_parts(matrix, runs, results, made.__setitem__)
    return Parts(data={name: made[name] for name in sorted(made, key=order)}, features=features)


# Hands a part on (its name, its JSON value) as soon as it is complete.
Emit = Callable[[str, Any], None]


def emit_parts(
    matrix: Matrix,
    runs: Sequence[RunSummary] = (),
    results: Sequence[RunResults | None] = (),
    emit: Emit | None = None,
    *,
    detail_rows: Iterable[TestRow] | None = None,
) -> tuple[list[list[str]], Callable[[str], tuple[int, ...]]]:
    """Every part of the page's test data, each handed to `emit` once complete, so that no more than
    a part per feature is held (a site of 5M results had 487 MB of parts in memory before).
    `detail_rows`: the same tests in the same order with every result whole, where `matrix` was
    read without the long texts (its traces are only needed here, one row at a time). Returns each
    feature's row parts, in order, and the order `build_parts` lists the parts in."""
    emit = emit or (lambda name, value: None)
    columns = matrix.columns
    col_index = {c.id: i for i, c in enumerate(columns)}
    feat_index = {f.id: i for i, f in enumerate(matrix.features)}
    out_index = {o: i for i, o in enumerate(Outcome)}
    with_history = any(r is not None for r in results)
    features: list[list[str]] = [[] for _ in matrix.features]
    rank: dict[int, int] = {}  # feature index -> the order its first test came in
    cells: dict[int, tuple[TestResult, list[Any]]] = {}  # a result shared by many tests is projected once
    details: dict[int, tuple[TestResult, dict[str, Any]]] = {}
    detail_part: dict[str, Any] = {}
    detail_bytes = 0
    detail_count = 0
    rows: dict[int, list[list[Any]]] = {}
    full = iter(detail_rows) if detail_rows is not None else None

    def flush_rows(fi: int) -> None:
        name = f"r{fi}-{len(features[fi])}"
        emit(name, rows[fi])
        features[fi].append(name)
        rows[fi] = []

    for number, test in enumerate(matrix.tests):
        whole = test if full is None else next(full)
        if whole.id != test.id:  # the file was replaced between the two reads
            raise InputError(f"the matrix changed while it was published: {whole.id} where {test.id} was")
        row_cells: list[Any] = [0] * len(columns)
        own: list[Any] = [0] * len(columns)
        for column_id, result in test.results.items():
            index = col_index.get(column_id)
            if index is None:
                continue
            # Kept with its result: an id names one object only while it lives, and rows made as they
            # are read (a spilled merge's, merge/store.py) let theirs go for new ones to take.
            known = cells.get(id(result))
            if known is not None and known[0] is result:
                cell = known[1]
            else:
                cell = [out_index[result.outcome], duration3(result.duration)]
                cells[id(result)] = (result, cell)
            row_cells[index] = cell
            result = whole.results[column_id]
            if _has_detail(result):
                if full is None:
                    seen = details.get(id(result))
                    if seen is not None and seen[0] is result:
                        found = seen[1]
                    else:
                        found = detail(result)
                        details[id(result)] = (result, found)
                else:  # results read one row at a time are not shared: nothing to remember
                    found = detail(result)
                if found:
                    own[index] = found
        detail_ref = -1
        if any(own):
            size = len(jsonio.dumps(own)) + len(test.id) + 8
            if detail_part and detail_bytes + size > DETAIL_PART_BYTES:
                emit(f"d{detail_count}", detail_part)
                detail_count += 1
                detail_part, detail_bytes = {}, 0
            detail_part[test.id] = own
            detail_bytes += size
            detail_ref = detail_count
        fi = feat_index.get(test.feature, -1)
        if fi < 0:
            continue
        rank.setdefault(fi, len(rank))
        feature_rows = rows.setdefault(fi, [])
        feature_rows.append([test.id, row_cells, detail_ref, number if with_history else -1])
        if len(feature_rows) == ROWS_PER_PART:
            flush_rows(fi)
    if detail_part:
        emit(f"d{detail_count}", detail_part)
    for fi in rank:
        if rows[fi]:
            flush_rows(fi)
    if with_history:
        for name, shard in _timeline_parts(matrix, runs, results):
            emit(name, shard)

    def order(name: str) -> tuple[int, ...]:
        """d parts, then each feature's row parts (features by their first test), then h parts."""
        if name[0] == "r":
            fi, _, k = name[1:].partition("-")
            return (1, rank[int(fi)], int(k))
        return (0 if name[0] == "d" else 2, int(name[1:]))

    return features, order


def _timeline_parts(
    matrix: Matrix, runs: Sequence[RunSummary], results: Sequence[RunResults | None]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """h<n> (see the module's docstring). Built per column and shard from whole strings: most shards
    of most columns never failed, and are joined, not looked at test by test."""
    ids = [t.id for t in matrix.tests]
    count = (len(ids) + TIMELINE_TESTS - 1) // TIMELINE_TESTS
    shards: dict[str, dict[str, Any]] = {f"h{n}": {"o": {}, "d": {}, "v": {}} for n in range(count)}
    recorded = {c for found in results if found is not None for c in found.outcomes}
    for column in matrix.columns:
        if column.id not in recorded:
            continue
        builds = column_builds(runs, column.id)
        o_rows, d_rows = transposed(ids, runs, results, column.id)
        for n in range(count):
            window = slice(n * TIMELINE_TESTS, (n + 1) * TIMELINE_TESTS)
            codes = "".join(o_rows[window])
            shard = shards[f"h{n}"]
            shard["o"][column.id] = codes
            shard["d"][column.id] = "".join(d_rows[window])
            if not NOTEWORTHY.search(codes):
                continue
            verdicts = {
                k: judge(test_codes, builds).to_json()
                for k, test_codes in enumerate(o_rows[window])
                if not is_quiet(test_codes)
            }
            if verdicts:
                shard["v"][column.id] = verdicts
    for name in list(shards):  # handed on and let go one by one
        yield name, shards.pop(name)


def history_head(runs: Sequence[RunSummary], results: Sequence[RunResults | None], columns: Sequence[str]) -> Mapping:
    """What every history part follows: the runs (oldest first) and each column's build per run."""
    from harness.publish.history import CODE_OUTCOMES, DURATION_ALPHABET, duration_of

    return {
        "shard": TIMELINE_TESTS,
        "runs": [[r.run, r.generated_at, r.run_url] for r in runs],
        "recorded": [found is not None for found in results],
        "builds": {c: column_builds(runs, c) for c in columns},
        "codes": {
            **{code: ("known issue" if code == "K" else outcome.value) for code, outcome in CODE_OUTCOMES.items()},
            "-": "no result",
            "?": "not recorded",
        },
        "durations": {code: duration_of(code) for code in DURATION_ALPHABET},
        # per column, per run: the tests whose result came from a later partial run of that column
        "reruns": {
            c: [dict(next((s.reruns for s in r.columns if s.id == c), {})) for r in runs]
            for c in columns
            if any(s.id == c and s.reruns for r in runs for s in r.columns)
        },
    }
