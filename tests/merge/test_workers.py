"""The merge's worker pool (harness/merge/workers.py): merging the committed real cells with one job
(everything in this process) and with several (forked workers) writes the same matrix.json byte for
byte, spilled or not; every cell comes back, under its index, larger cells started first; a worker
that dies costs only the cell that killed it."""

from __future__ import annotations

import dataclasses
import io
import os
import sys
from pathlib import Path

import pytest

from harness.matrix_json import write_to
from harness.merge import workers
from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix
from tests.committed import all_cell_dirs, stated_features

needs_fork = pytest.mark.skipif(sys.platform != "linux", reason="the pool forks its workers on Linux only")


def _bytes(matrix: Matrix) -> bytes:
    handle = io.BytesIO()
    write_to(dataclasses.replace(matrix, generated_at="fixed"), handle)
    return handle.getvalue()


@needs_fork
@pytest.mark.parametrize("spill", [True, False], ids=["spilled", "in-memory"])
def test_one_job_and_many_jobs_write_the_same_matrix_json(spill: bool) -> None:
    cells = all_cell_dirs()
    one = _bytes(merge_cell_dirs(cells, jobs=1, features=stated_features(), spill=spill))
    many = _bytes(merge_cell_dirs(cells, jobs=4, features=stated_features(), spill=spill))
    assert one == many
    assert one.count(b'\n    {"id":') > 300, "the real cells' tests are all there"


def _size_of_name(path: Path) -> tuple[str, int]:
    return path.name, os.getpid()


def _lost(path: Path) -> tuple[str, int]:
    return f"lost {path.name}", -1


def _dies_on_b(path: Path) -> tuple[str, int]:
    if path.name == "b":
        os._exit(9)
    return path.name, os.getpid()


def _cells(tmp_path: Path, sizes: dict[str, int]) -> list[Path]:
    paths = []
    for name, size in sizes.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "junit.xml").write_bytes(b"x" * size)
        paths.append(tmp_path / name)
    return paths


@needs_fork
def test_every_cell_comes_back_under_its_index_larger_cells_first(tmp_path: Path) -> None:
    paths = _cells(tmp_path, {"small": 10, "large": 100_000, "middle": 1_000})
    got = list(workers.read_cells(paths, _size_of_name, _lost, jobs=2))
    assert [index for index, _ in got] == [1, 2, 0], "handed back in start order: the largest size class first"
    assert {paths[index].name: value[0] for index, value in got} == {
        "small": "small",
        "large": "large",
        "middle": "middle",
    }
    assert all(pid != os.getpid() for _, (_, pid) in got), "read in worker processes"


def test_one_job_reads_in_this_process_in_the_given_order(tmp_path: Path) -> None:
    paths = _cells(tmp_path, {"small": 10, "large": 100_000})
    got = list(workers.read_cells(paths, _size_of_name, _lost, jobs=1))
    assert got == [(0, ("small", os.getpid())), (1, ("large", os.getpid()))]


@needs_fork
def test_a_dead_worker_costs_only_the_cell_that_killed_it(tmp_path: Path) -> None:
    paths = _cells(tmp_path, {"a": 10, "b": 10, "c": 10})
    got = dict(workers.read_cells(paths, _dies_on_b, _lost, jobs=3))
    assert sorted(got) == [0, 1, 2]
    assert got[1] == ("lost b", -1)
    assert got[0][0] == "a" and got[2][0] == "c", "the cells the dead worker took down are read again"


def test_jobs_follow_the_cores_and_stay_within_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert workers.default_jobs(3) == 3, "few cells: one more worker than cores"
    assert workers.default_jobs(100) == 2, "many cells: one per core, memory before the tail"
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert workers.default_jobs(100) == workers.MAX_JOBS


def test_cell_size_counts_imported_reports_and_is_zero_for_a_missing_cell(tmp_path: Path) -> None:
    [cell] = _cells(tmp_path, {"cell": 100})
    (cell / "junit").mkdir()
    (cell / "junit" / "report.xml").write_bytes(b"y" * 50)
    assert workers.cell_size(cell) == 150
    assert workers.cell_size(tmp_path / "absent") == 0
