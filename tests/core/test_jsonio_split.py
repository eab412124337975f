"""matrix.json's rows encoded by two processes (jsonio.write_json_lines_object_split) agree with
the plain path: the same bytes from a spilled merge (split between features) and from rows in memory (split in
the middle), with a disputed row and a composite column among them; a child that fails or is
killed costs nothing but time; and the split is really taken where it should be (not a test
that passes because the trick never ran)."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from harness import jsonio
from harness.matrix_json import write_matrix, write_to
from harness.merge import store
from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix
from tests.committed import SAMPLES, all_cell_dirs, stated_features


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Any matrix is split (the committed cells hold a few hundred tests), whatever threads pytest's
    plugins run (a merge's process runs none when it writes); the list collects the children
    started."""
    monkeypatch.setattr(jsonio, "MIN_ROWS", 2)
    monkeypatch.setattr(jsonio, "can_fork", lambda: True)
    forks: list[int] = []
    fork = os.fork

    def counted() -> int:
        pid = fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(jsonio.os, "fork", counted)
    return forks


def _bytes(matrix: Matrix, *, plain: bool) -> bytes:
    handle = io.BytesIO()
    write_to(dataclasses.replace(matrix, generated_at="fixed"), handle, plain=plain)
    return handle.getvalue()


def _disputed_and_composite(tmp_path: Path) -> list[Path]:
    """The committed cells, one more whose collected.json puts a test in another row, and a later
    partial run of a column (merged in this process: a composite column)."""
    cells = all_cell_dirs()
    moved = shutil.copytree(cells[0], tmp_path / "moved")
    manifest = json.loads((moved / "manifest.json").read_text())
    manifest.update(cell_id="cpu-moved", run_id=f"{manifest['run_id']}-moved")
    (moved / "manifest.json").write_text(json.dumps(manifest))
    collected = json.loads((moved / "collected.json").read_text())
    collected["groups"][0]["tests"].append(collected["groups"][1]["tests"].pop())
    (moved / "collected.json").write_text(json.dumps(collected))
    later = shutil.copytree(SAMPLES / "publishing-new", tmp_path / "later")
    manifest = json.loads((later / "manifest.json").read_text())
    manifest.update(cell_id="cpu-2.13.0", started_at="2026-12-02T00:00:00Z", selection={"keyword": "sample"})
    (later / "manifest.json").write_text(json.dumps(manifest))
    return [*cells, moved, later]


@pytest.mark.parametrize("spill", [True, False], ids=["spilled rows", "rows in memory"])
def test_two_processes_write_the_plain_paths_bytes(split_small: list[int], tmp_path: Path, spill: bool) -> None:
    matrix = merge_cell_dirs(_disputed_and_composite(tmp_path), jobs=1, spill=spill, features=stated_features())
    assert isinstance(matrix.tests, store.SpilledRows) == spill
    plain = _bytes(matrix, plain=True)
    assert not split_small, "the plain path forks nothing"
    assert _bytes(matrix, plain=False) == plain
    assert len(split_small) == 1, "the second half was encoded by a child"
    assert plain.count(b'\n    {"id":') == len(matrix.tests) > 300
    assert b'"runs": [' in plain, "a composite column"


def test_the_halves_are_the_rows_in_order(split_small: list[int]) -> None:
    matrix = merge_cell_dirs(all_cell_dirs(), jobs=1, spill=True, features=stated_features())
    parts = jsonio.halves(matrix.tests)
    assert parts is not None
    first, second = parts
    assert [*first, *second] == list(matrix.tests)
    assert len(first) + len(second) == len(matrix.tests)
    assert {row.feature for row in first}.isdisjoint({row.feature for row in second}), "split between features"
    assert abs(len(first) - len(second)) < len(matrix.tests), "both halves hold rows"


def test_small_or_unsplittable_rows_stay_in_one_process() -> None:
    assert jsonio.halves(tuple(range(jsonio.MIN_ROWS - 1))) is None
    assert jsonio.halves(tuple(range(jsonio.MIN_ROWS))) is not None
    assert jsonio.halves(set(range(jsonio.MIN_ROWS))) is None, "no order to split by"


def test_a_failing_child_costs_only_time(split_small: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """The child dies before writing anything (its encoder raises, as a full temp disk would):
    this process encodes the second half itself."""
    matrix = merge_cell_dirs(all_cell_dirs(), jobs=1, spill=True, features=stated_features())
    plain = _bytes(matrix, plain=True)
    parent = os.getpid()
    item_lines = jsonio.item_lines

    def fails_in_the_child(*args: object, **kwargs: object) -> object:
        if os.getpid() != parent:
            raise OSError(28, "No space left on device")
        return item_lines(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jsonio, "item_lines", fails_in_the_child)
    assert _bytes(matrix, plain=False) == plain
    assert len(split_small) == 1


def test_a_killed_child_costs_only_time(split_small: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed mid-write (SIGKILL: the OOM killer), whatever it wrote is not used."""
    matrix = merge_cell_dirs(all_cell_dirs(), jobs=1, spill=True, features=stated_features())
    plain = _bytes(matrix, plain=True)
    parent = os.getpid()
    item_lines = jsonio.item_lines

    def killed_in_the_child(*args: object, **kwargs: object) -> object:
        for block in item_lines(*args, **kwargs):  # type: ignore[arg-type]
            if os.getpid() == parent:
                yield block
                continue
            yield block[: len(block) // 2]  # written: half a row, then the end
            os.kill(os.getpid(), 9)

    monkeypatch.setattr(jsonio, "item_lines", killed_in_the_child)
    assert _bytes(matrix, plain=False) == plain


def test_an_error_in_this_process_stops_and_reaps_the_child(
    split_small: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The first half fails (a full disk under matrix.json): the error is the caller's, the child is
    gone (killed and reaped, no zombie), and the old matrix.json stays."""
    matrix = merge_cell_dirs(all_cell_dirs(), jobs=1, spill=True, features=stated_features())
    target = tmp_path / "matrix.json"
    target.write_bytes(b"old")
    parent = os.getpid()
    item_lines = jsonio.item_lines

    def fails_here(*args: object, **kwargs: object) -> object:
        if os.getpid() == parent:
            raise OSError(28, "No space left on device")
        return item_lines(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jsonio, "item_lines", fails_here)
    with pytest.raises(Exception, match="No space left"):
        write_matrix(matrix, target)
    assert len(split_small) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(split_small[0], os.WNOHANG)  # reaped already
    assert target.read_bytes() == b"old"
    assert not [p for p in tmp_path.iterdir() if p.name != "matrix.json"], "no temp file left"


def test_with_another_thread_running_one_process_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork beside a running thread could leave a lock held in the child: not taken then."""
    monkeypatch.setattr(jsonio, "MIN_ROWS", 2)
    forks: list[int] = []
    fork = os.fork
    monkeypatch.setattr(jsonio.os, "fork", lambda: forks.append(1) or fork())
    matrix = merge_cell_dirs(all_cell_dirs(), jobs=1, spill=True, features=stated_features())
    plain = _bytes(matrix, plain=True)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not jsonio.can_fork()
        assert _bytes(matrix, plain=False) == plain
        assert not forks, "no child while another thread runs"
    finally:
        release.set()
        other.join()
    monkeypatch.setattr(jsonio.threading, "active_count", lambda: 1)
    assert jsonio.can_fork(), "this process alone: the split is taken"
