"""The merge's worker pool: cells read in parallel forked processes, handed back in start order.

Cells are independent, so each is read by a worker process (one more than the cores while cells
are few, at most `MAX_JOBS`). What a worker hands back is pickled in the worker (a cell's result is
one bytes object in flight, not thousands of objects for the pool's machinery to pickle), and the
memory the worker took is then given back to the system (`malloc_trim`), so a worker that waits
while the last cells are read holds nothing. Larger cells start first, so the last cell to finish is
a small one. A worker that dies (killed for memory, a crash in a parser) costs only the cell that
kills it: the others it took down are read again, each on its own.

With one job (or one cell) everything runs in this process: the plain path, which
tests/merge/test_workers.py holds the pool to (the same matrix.json byte for byte).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Final, TypeVar

T = TypeVar("T")

MAX_JOBS: Final = 8
# Workers forked from the merging process start at once with the harness already imported
# (Python 3.14 makes forkserver the default, which imports it again in every worker). Linux
# only: elsewhere the platform's default method is the safe one.
_WORKER_START: Final = multiprocessing.get_context("fork") if sys.platform == "linux" else None


def default_jobs(cells: int) -> int:
    """One more worker than cores while cells are few: a cell is the unit of work, so with 5 cells
    on 2 cores the last one would run alone on one core; an extra worker keeps every core busy to
    the end. With many cells that tail is a small part of the time, and a worker's memory (about
    50 MB for a cell of 50,000 tests) is worth more."""
    cores = os.cpu_count() or 1
    return max(1, min(cores + (1 if cells <= 2 * cores else 0), MAX_JOBS))


def read_cells(
    paths: Sequence[Path], work: Callable[[Path], T], lost: Callable[[Path], T], jobs: int | None = None
) -> Iterator[tuple[int, T]]:
    """(index in `paths`, work(path)) for every path, by up to `jobs` worker processes, handed back
    in the order they were started, so the caller adds one cell while the next are still read.
    `work` must not raise (it turns a bad cell into a value) and must be picklable by reference (a
    module-level function, or a functools.partial of one); `lost(path)` is the value for a cell
    whose reading killed its worker."""
    jobs = default_jobs(len(paths)) if jobs is None else max(1, jobs)
    if jobs == 1 or len(paths) < 2:
        for index, path in enumerate(paths):
            yield index, work(path)
        return
    order = sorted(range(len(paths)), key=lambda i: -cell_size(paths[i]).bit_length())
    dead: list[int] = []
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=_WORKER_START) as pool:
        futures = deque((i, pool.submit(_in_worker, work, paths[i])) for i in order)
        while futures:
            index, future = futures.popleft()  # a future holds its result: let each go once read
            try:
                data = future.result()
            except BrokenProcessPool:
                dead.append(index)
                continue
            del future
            yield index, pickle.loads(data)
            del data
    # A dead worker breaks the whole pool: each cell it took down is read again on its own.
    for index in dead:
        yield index, _alone(paths[index], work, lost)


def _in_worker(work: Callable[[Path], T], path: Path) -> bytes:
    """work(path) in a worker process, pickled here; then the memory it took goes back."""
    data = pickle.dumps(work(path), protocol=pickle.HIGHEST_PROTOCOL)
    gc.collect()
    trim_heap()
    return data


def _alone(path: Path, work: Callable[[Path], T], lost: Callable[[Path], T]) -> T:
    with ProcessPoolExecutor(max_workers=1, mp_context=_WORKER_START) as pool:
        try:
            return pickle.loads(pool.submit(_in_worker, work, path).result())
        except BrokenProcessPool:
            return lost(path)


def trim_heap() -> None:
    """glibc keeps freed memory for reuse; malloc_trim returns it (a no-op elsewhere)."""
    if sys.platform != "linux":
        return
    import ctypes  # here: only worker processes need it

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl)
        return
    trim(0)


def cell_size(path: Path) -> int:
    """The bytes of a cell's files, with the reports `harness import` keeps under junit/."""
    try:
        files = [*path.iterdir(), *((path / "junit").iterdir() if (path / "junit").is_dir() else ())]
        return sum(p.stat().st_size for p in files if p.is_file())
    except OSError:
        return 0
