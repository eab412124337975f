"""write_merged: the merge's one write sequence (lock, sweep, merge, write). Killed and failing at every
file operation through `harness merge`: tests/faults/test_output_faults.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import outputs
from harness.errors import OutputLockedError
from harness.matrix_json import load_matrix
from harness.merge.matrix_file import write_merged
from harness.model import Matrix
from tests.committed import sample_matrices


def test_the_matrix_and_the_files_beside_it_are_written_under_the_folders_lock(tmp_path: Path) -> None:
    matrix = sample_matrices()[0]
    held: list[bool] = []

    def merge() -> Matrix:
        held.append(Path(os.path.abspath(tmp_path)) in outputs._held)  # the merge runs under the lock
        return matrix

    written = write_merged(tmp_path / "matrix.json", merge, beside=lambda m: {"summary.md": f"{len(m.columns)}\n"})
    assert written is matrix and held == [True]
    assert [c.id for c in load_matrix(tmp_path / "matrix.json").columns] == [c.id for c in matrix.columns]
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == f"{len(matrix.columns)}\n"
    assert Path(os.path.abspath(tmp_path)) not in outputs._held


def test_a_killed_writers_leftovers_are_swept_first(tmp_path: Path) -> None:
    leftover = tmp_path / f"{outputs.TEMP_PREFIX}999999999-0000-matrix.json"
    leftover.write_bytes(b"half a matrix")
    write_merged(tmp_path / "matrix.json", lambda: sample_matrices()[0])
    assert not leftover.exists()


def test_another_writer_holding_the_folder_is_waited_for_then_refused(tmp_path: Path) -> None:
    """Another process holds the lock (a child, since the lock is re-entrant within one process)."""
    import multiprocessing

    ready, done = multiprocessing.Event(), multiprocessing.Event()
    child = multiprocessing.get_context("fork").Process(target=_hold, args=(tmp_path, ready, done))
    child.start()
    try:
        assert ready.wait(30)
        called: list[int] = []
        with pytest.raises(OutputLockedError):
            write_merged(tmp_path / "matrix.json", lambda: called.append(1) or sample_matrices()[0], timeout=0.2)
        assert not called and not (tmp_path / "matrix.json").exists(), "nothing merged or written without the lock"
    finally:
        done.set()
        child.join(30)


def _hold(folder: Path, ready: object, done: object) -> None:
    with outputs.locked(folder):
        ready.set()  # type: ignore[attr-defined]
        done.wait(30)  # type: ignore[attr-defined]
