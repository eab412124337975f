"""Where the merge keeps every test's result until the matrix's rows are written: in memory, or
spilled to disk. One boundary (`open_store`), two paths that give the same rows:

- `InMemoryResults`, the plain path: test id -> column -> result, in dicts. Its memory grows with
  every result of every column (about 200 MB per million results).
- `SpilledResults`: each column's results go to a run file on disk as the column arrives (written
  by the worker that read the cell, so they never cross to the merging process), sorted by its
  feature then test id, in pickled chunks. The rows are made as they are iterated, a k-way merge
  of the columns' runs, feature by feature: what is held at once is a chunk per column, whatever
  the number of columns. The matrix's `tests` is then a `SpilledRows`, iterable any number of
  times, with a length; the run files are removed when it is dropped (or the process ends).

tests/merge/test_store.py holds both to the same matrix.json byte for byte on the committed cells.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import pickle
import secrets
import tempfile
import weakref
from collections import deque
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import setitem
from pathlib import Path
from typing import Any, Final

from harness import outputs
from harness.errors import WriteError
from harness.merge import handoff  # noqa: F401  (registers how results are pickled: plain values)
from harness.model import UNASSIGNED, TestResult, TestRow

CHUNK: Final = 2048  # results per pickled chunk of a run: one read per chunk, little held per column
SPILL_NAME: Final = "merge-spill"


# -- the plain path --------------------------------------------------------------------------------
class InMemoryResults:
    """test id -> column -> result, in memory (the plain path)."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, TestResult]] = {}

    def add(self, column_id: str, nodeids: Sequence[str], results: Sequence[TestResult], known: bool) -> None:
        """`known`: every test already has a row (every cell of one suite has the same tests):
        then the results go in from C (map, not a loop per test)."""
        rows = self.rows
        if known:
            deque(map(setitem, map(rows.__getitem__, nodeids), repeat(column_id), results), maxlen=0)
            return
        for nodeid, result in zip(nodeids, results, strict=True):
            row = rows.get(nodeid)
            if row is None:
                rows[nodeid] = {column_id: result}
            else:
                row[column_id] = result

    def results_of(self, column_id: str) -> Iterator[tuple[str, TestResult]]:
        """(test id, result) of every test on one column."""
        for nodeid, row in self.rows.items():
            result = row.get(column_id)
            if result is not None:
                yield nodeid, result

    def test_rows(self, column_ids: list[str], order: Mapping[str, list[str]], in_order: bool) -> tuple[TestRow, ...]:
        """The rows: for each feature, its tests (`order`, sorted); each row's results in column order
        (`in_order`: the results went in in column order already)."""
        results = self.rows
        rows: list[TestRow] = []
        for fid, ids in order.items():
            for nodeid in ids:
                row = results[nodeid]
                if not in_order and len(row) > 1:
                    row = {c: row[c] for c in column_ids if c in row}
                rows.append(TestRow(id=nodeid, feature=fid, results=row))
        return tuple(rows)

    def close(self) -> None:
        self.rows = {}


# -- the spilled path ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Run:
    """One column's results on disk: per feature (the cell's own), chunks of (test ids, results)
    sorted by test id, at (offset, length) in the file."""

    path: Path
    segments: Mapping[str, tuple[tuple[int, int], ...]]

    def chunks(self, feature: str) -> Iterator[tuple[list[str], list[TestResult]]]:
        with self.path.open("rb") as handle:
            for offset, length in self.segments.get(feature, ()):
                handle.seek(offset)
                yield pickle.loads(handle.read(length))

    def records(self) -> Iterator[tuple[str, str, TestResult]]:
        """(feature, test id, result) of every test."""
        for feature in self.segments:
            for ids, results in self.chunks(feature):
                yield from zip(repeat(feature), ids, results)


def write_run(folder: Path, nodeids: Sequence[str], features: Sequence[str], results: Sequence[TestResult]) -> Run:
    """A column's results as a run file in `folder` (the spill store's): grouped by feature ("" is
    `unassigned`), each group sorted by test id. A test listed twice keeps its last result, as the
    plain path does."""
    last = dict(zip(nodeids, range(len(nodeids)), strict=True))
    groups: dict[str, list[int]] = {}
    for index in last.values():
        groups.setdefault(features[index] or UNASSIGNED, []).append(index)
    path = folder / f"{os.getpid()}-{secrets.token_hex(6)}.run"
    segments: dict[str, tuple[tuple[int, int], ...]] = {}
    with spilling(folder), path.open("wb") as handle:
        for feature, indices in groups.items():
            indices.sort(key=nodeids.__getitem__)
            spans = []
            for start in range(0, len(indices), CHUNK):
                part = indices[start : start + CHUNK]
                data = pickle.dumps(
                    ([nodeids[i] for i in part], [results[i] for i in part]), protocol=pickle.HIGHEST_PROTOCOL
                )
                spans.append((handle.tell(), len(data)))
                handle.write(data)
            segments[feature] = tuple(spans)
    return Run(path, segments)


def new_spill_folder() -> Path:
    """An empty folder for one merge's runs, named as the project's temp files are (the writer's
    pid inside), in the system's temp folder; a killed merge's folder is swept by the next."""
    base = Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):  # best effort: a leftover stays for the next merge
        for leftover in base.glob(f"{outputs.TEMP_PREFIX}*-{SPILL_NAME}"):  # spill folders only
            if outputs.is_leftover(leftover):
                outputs.remove_tree(leftover)
    folder = outputs.temp_path(base / SPILL_NAME)
    with spilling(folder):
        folder.mkdir()
    return folder


@contextlib.contextmanager
def spilling(folder: Path) -> Iterator[None]:
    """Any OSError while spilling is a WriteError naming the temp folder it happens in (the spill
    folder's own name means nothing to a reader; a full /tmp, or TMPDIR, is what to fix)."""
    try:
        yield
    except OSError as err:
        reason = err.strerror or str(err)
        where = folder.parent
        raise WriteError(
            f"cannot write the merge's spilled results to {where}: {reason}",
            path=str(where),
            reason=reason,
        ) from None


class SpilledResults:
    """Each column's results in a run file of a spill folder (removed when this is dropped)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or new_spill_folder()
        self.runs: dict[str, Run] = {}
        self._removal = weakref.finalize(self, outputs.remove_tree, self.folder)

    def add_run(self, column_id: str, run: Run) -> None:
        self.runs[column_id] = run

    def add(
        self, column_id: str, nodeids: Sequence[str], results: Sequence[TestResult], features: Sequence[str]
    ) -> None:
        """A column read in this process (a composite column): spilled here."""
        self.runs[column_id] = write_run(self.folder, nodeids, features, results)

    def results_of(self, column_id: str) -> Iterator[tuple[str, TestResult]]:
        run = self.runs.get(column_id)
        if run is not None:
            for _, nodeid, result in run.records():
                yield nodeid, result

    def test_rows(
        self,
        column_ids: list[str],
        order: Mapping[str, list[str]],
        disputed: Mapping[str, str],
    ) -> SpilledRows:
        """The rows, made as they are iterated. `disputed`: the row of each test that columns put in
        different rows (its results in other rows' segments move to it)."""
        columns = [(c, self.runs[c]) for c in column_ids if c in self.runs]
        return SpilledRows(self, columns, {fid: len(ids) for fid, ids in order.items()}, disputed)

    def close(self) -> None:
        self._removal()


class SpilledRows(Collection[TestRow]):
    """A matrix's test rows, read from the spill store each time they are iterated: by feature (in
    the matrix's order), then test id, each row's results in column order, as the plain path's."""

    def __init__(
        self,
        store: SpilledResults,
        columns: list[tuple[str, Run]],
        features: Mapping[str, int],
        disputed: Mapping[str, str],
    ) -> None:
        self._store = store  # held: the run files live as long as the rows
        self._columns = columns
        self._sizes = features  # feature -> its number of rows, in the matrix's order
        self._disputed = disputed
        self._count = sum(features.values())
        self._moved: dict[str, list[tuple[str, int, TestResult]]] | None = None

    def __len__(self) -> int:
        return self._count

    def halves(self) -> tuple[SpilledRows, SpilledRows]:
        """The rows in two parts, split between features where about half of them are in the
        first: iterated one after the other, the same rows as these (for matrix.json's writer,
        jsonio.write_json_lines_object_split)."""
        first: dict[str, int] = {}
        taken = 0
        for fid, size in self._sizes.items():
            if taken and taken + size / 2 > self._count / 2:
                break
            first[fid] = size
            taken += size
        second = {fid: size for fid, size in self._sizes.items() if fid not in first}
        return (
            SpilledRows(self._store, self._columns, first, self._disputed),
            SpilledRows(self._store, self._columns, second, self._disputed),
        )

    def __contains__(self, item: object) -> bool:
        return any(row == item for row in self)

    def __eq__(self, other: object) -> bool:
        """Equal to any collection of the same rows in the same order (a tuple of them: the plain
        path's, or a matrix read back from its file)."""
        if not isinstance(other, Collection) or isinstance(other, (str, bytes)) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  (equal to a tuple, so not hashable as itself)

    def __iter__(self) -> Iterator[TestRow]:
        shared: dict[tuple[Any, ...], TestResult] = {}
        for fid in self._sizes:
            streams = [(rank, c, run) for rank, (c, run) in enumerate(self._columns) if fid in run.segments]
            if self._disputed:
                yield from self._merged(fid, streams, shared)
            else:
                yield from self._lockstep(fid, streams, shared)

    def _lockstep(
        self, fid: str, streams: list[tuple[int, str, Run]], shared: dict[tuple[Any, ...], TestResult]
    ) -> Iterator[TestRow]:
        """Columns whose chunks hold the same tests (every cell of one suite) are zipped chunk by
        chunk; from the first chunk where they differ, the rest is merged by test id."""
        column_ids = [c for _, c, _ in streams]
        readers = [run.chunks(fid) for _, _, run in streams]
        while True:
            chunks = [next(reader, None) for reader in readers]
            if all(chunk is None for chunk in chunks):
                return
            first = chunks[0]
            if first is not None and all(chunk is not None and chunk[0] == first[0] for chunk in chunks[1:]):
                lists = [_share(chunk[1], shared) for chunk in chunks]  # type: ignore[index]
                for nodeid, results in zip(first[0], zip(*lists, strict=True), strict=True):
                    yield TestRow(id=nodeid, feature=fid, results=dict(zip(column_ids, results, strict=True)))
                continue
            rest = [
                _records(rank, _chain(chunk, reader), shared)
                for (rank, _, _), chunk, reader in zip(streams, chunks, readers, strict=True)
            ]
            yield from _rows(fid, heapq.merge(*rest), self._columns)
            return

    def _merged(
        self, fid: str, streams: list[tuple[int, str, Run]], shared: dict[tuple[Any, ...], TestResult]
    ) -> Iterator[TestRow]:
        """The general path, where some tests' columns put them in different rows: each column's
        records of this row's feature, less the tests whose row is another, plus those of this row
        that sit in another feature's segment."""
        disputed = self._disputed
        moved = self._moved_records().get(fid, [])

        def kept(rank: int, run: Run) -> Iterator[tuple[str, int, TestResult]]:
            for nodeid, number, result in _records(rank, run.chunks(fid), shared):
                if disputed.get(nodeid, fid) == fid:
                    yield nodeid, number, result

        sources = [kept(rank, run) for rank, _, run in streams]
        yield from _rows(fid, heapq.merge(*sources, moved), self._columns)

    def _moved_records(self) -> dict[str, list[tuple[str, int, TestResult]]]:
        """Records of disputed tests stored under another feature than their row's (few)."""
        if self._moved is None:
            moved: dict[str, list[tuple[str, int, TestResult]]] = {}
            for rank, (_, run) in enumerate(self._columns):
                for feature, nodeid, result in run.records():
                    row = self._disputed.get(nodeid, feature)
                    if row != feature:
                        moved.setdefault(row, []).append((nodeid, rank, result))
            for records in moved.values():
                records.sort(key=lambda r: (r[0], r[1]))
            self._moved = moved
        return self._moved


def _chain(
    chunk: tuple[list[str], list[TestResult]] | None, reader: Iterator[tuple[list[str], list[TestResult]]]
) -> Iterator[tuple[list[str], list[TestResult]]]:
    if chunk is not None:
        yield chunk
    yield from reader


def _records(
    rank: int, chunks: Iterable[tuple[list[str], list[TestResult]]], shared: dict[tuple[Any, ...], TestResult]
) -> Iterator[tuple[str, int, TestResult]]:
    for ids, results in chunks:
        yield from zip(ids, repeat(rank), _share(results, shared))


def _rows(
    fid: str, records: Iterable[tuple[str, int, TestResult]], columns: list[tuple[str, Run]]
) -> Iterator[TestRow]:
    """Rows from (test id, column rank, result) sorted by test id then rank."""
    current: str | None = None
    row: dict[str, TestResult] = {}
    for nodeid, rank, result in records:
        if nodeid != current:
            if current is not None:
                yield TestRow(id=current, feature=fid, results=row)
            current, row = nodeid, {}
        row[columns[rank][0]] = result
    if current is not None:
        yield TestRow(id=current, feature=fid, results=row)


def _share(results: list[TestResult], shared: dict[tuple[Any, ...], TestResult]) -> list[TestResult]:
    """Equal results without text as one object across the whole matrix (within a chunk, pickle
    already shares them), as the plain path holds them: a writer that turns each distinct result
    into JSON once keeps a few objects, not one per chunk."""
    swap: dict[int, TestResult] = {}
    for key, result in dict(zip(map(id, results), results, strict=True)).items():
        value = _plain_key(result)
        if value is not None:
            found = shared.setdefault(value, result)
            if found is not result:
                swap[key] = found
    return list(map(swap.get, map(id, results), results)) if swap else results


def _plain_key(result: TestResult) -> tuple[Any, ...] | None:
    """What identifies a result with no text (an outcome, a duration): None for one with text."""
    if (
        result.message is not None
        or result.trace is not None
        or result.output is not None
        or result.link is not None
        or result.properties
        or result.extra_messages
    ):
        return None
    duration = result.duration
    return (
        result.outcome,
        result.skip_class,
        duration,
        type(duration),
        result.attempts,
        result.scope,
        result.strict,
        result.signal,
        result.run,
        result.at,
    )


def open_store(spill: bool) -> InMemoryResults | SpilledResults:
    """The one switch between the plain path and the spilled one."""
    return SpilledResults() if spill else InMemoryResults()
