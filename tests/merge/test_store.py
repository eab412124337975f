"""Where the merge keeps the results (harness/merge/store.py): the spilled path writes the same
matrix.json, byte for byte, as the plain in-memory path on the committed real cells, also with tiny
chunks (many chunks per column, columns whose tests differ, a test two columns put in different
rows, a composite column); the rows read back any number of times; the spill folder is gone once
the matrix is dropped, and when the merge fails."""

from __future__ import annotations

import dataclasses
import gc
import io
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from harness.errors import EXIT_OUTPUT, WriteError
from harness.matrix_json import write_to
from harness.merge import combine, store
from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix, TestResult
from harness.outcomes import Outcome
from harness.outputs import TEMP_PREFIX
from tests.committed import SAMPLES, all_cell_dirs, cell_dirs, stated_features


def _bytes(matrix: Matrix) -> bytes:
    handle = io.BytesIO()
    write_to(dataclasses.replace(matrix, generated_at="fixed"), handle)
    return handle.getvalue()


def _both(cells: list[Path], **kwargs: object) -> tuple[bytes, bytes]:
    plain = _bytes(merge_cell_dirs(cells, jobs=1, spill=False, **kwargs))  # type: ignore[arg-type]
    spilled = _bytes(merge_cell_dirs(cells, jobs=1, spill=True, **kwargs))  # type: ignore[arg-type]
    return plain, spilled


def _spill_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*{store.SPILL_NAME}")}


def test_the_spilled_path_writes_the_plain_paths_matrix_json_on_the_real_cells() -> None:
    plain, spilled = _both(all_cell_dirs(), features=stated_features())
    assert plain == spilled
    assert plain.count(b'\n    {"id":') > 300


@pytest.fixture
def tiny_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "CHUNK", 7)  # many chunks per feature; a missing test shifts every later one


def _copy(cell: Path, dest: Path, cell_id: str) -> Path:
    shutil.copytree(cell, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["cell_id"] = cell_id
    manifest["run_id"] = f"{manifest['run_id']}-{cell_id}"
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


def _collected(cell: Path) -> dict:
    return json.loads((cell / "collected.json").read_text())


def test_columns_with_the_same_and_with_other_tests_agree_in_tiny_chunks(
    tiny_chunks: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Columns with the same tests are zipped chunk by chunk; where their chunks differ (other
    releases' suites, another suite), the rest is merged by test id: both give the plain rows."""
    same = _copy(cell_dirs()[0], tmp_path / "same", "cpu-same")
    cells = [*all_cell_dirs(), same]
    plain, spilled = _both(cells, features=stated_features())
    assert plain == spilled
    merged = []
    rows_of = store._rows

    def counted(*args: object) -> object:
        for row in rows_of(*args):  # type: ignore[arg-type]
            merged.append(row.id)
            yield row

    monkeypatch.setattr(store, "_rows", counted)
    matrix = merge_cell_dirs(cells, jobs=1)
    rows = list(matrix.tests)  # made now, as they are iterated
    assert 0 < len(merged) < len(rows) == len(matrix.tests), "both paths ran"


def test_a_test_two_columns_put_in_different_rows_agrees(tiny_chunks: None, tmp_path: Path) -> None:
    """The row of its first column holds all its results, also those spilled under the other row."""
    moved = _copy(cell_dirs()[0], tmp_path / "moved", "cpu-moved")
    collected = _collected(moved)
    moving = collected["groups"][1]["tests"].pop()
    collected["groups"][0]["tests"].append(moving)
    (moved / "collected.json").write_text(json.dumps(collected))
    cells = [*cell_dirs(), moved]
    plain, spilled = _both(cells, features=stated_features())
    assert plain == spilled
    rows = {row.id: row for row in merge_cell_dirs(cells, jobs=1).tests}
    assert {"cpu-2.13.0", "cpu-moved"} <= set(rows[moving].results)
    assert rows[moving].feature == collected["groups"][1]["feature"], "cpu-2.13.0 comes first"


def test_a_composite_column_agrees(tiny_chunks: None, tmp_path: Path) -> None:
    """A later partial run laid over its column (merged in this process, then spilled): a real
    sample run restated as a partial run of cpu-2.13.0, as tests/merge/test_partial_runs.py does."""
    later = _copy(SAMPLES / "publishing-new", tmp_path / "later", "cpu-2.13.0")
    manifest = json.loads((later / "manifest.json").read_text())
    manifest.update(started_at="2026-12-02T00:00:00Z", selection={"keyword": "sample"})
    (later / "manifest.json").write_text(json.dumps(manifest))
    plain, spilled = _both([*cell_dirs(), later])
    assert plain == spilled
    assert b'"runs": [' in plain, "a composite column"


def test_the_rows_read_back_the_same_each_time_with_a_length() -> None:
    matrix = merge_cell_dirs(cell_dirs(), jobs=1, spill=True)
    assert isinstance(matrix.tests, store.SpilledRows)
    first, second = list(matrix.tests), list(matrix.tests)
    assert first == second and len(first) == len(matrix.tests) > 300
    assert matrix.tests == tuple(first) and tuple(first) == matrix.tests
    plain = merge_cell_dirs(cell_dirs(), jobs=1, spill=False)
    assert dataclasses.replace(matrix, generated_at=plain.generated_at) == plain
    assert matrix.tests != tuple(first[1:]), "a row less is another matrix"


def test_equal_results_without_text_are_one_object_across_chunks(tiny_chunks: None) -> None:
    """What lets a writer turn each distinct plain result into JSON once (by its id)."""
    matrix = merge_cell_dirs(cell_dirs(), jobs=1, spill=True)
    plain: dict[tuple, set[int]] = {}
    kept = []  # alive, so no two results share an id by reuse
    for row in matrix.tests:
        for result in row.results.values():
            kept.append(result)
            data = result.to_json()
            if data.keys() <= {"outcome", "duration", "scope"}:
                plain.setdefault(tuple(sorted(data.items())), set()).add(id(result))
    assert any(len(ids) == 1 for ids in plain.values())
    assert all(len(ids) == 1 for ids in plain.values())


def test_a_message_keeps_a_result_apart_from_a_plain_one() -> None:
    bare = TestResult(outcome=Outcome.PASSED, duration=1.0)
    assert store._plain_key(bare) == store._plain_key(TestResult(outcome=Outcome.PASSED, duration=1.0))
    assert store._plain_key(dataclasses.replace(bare, message="")) is None, "an empty message is still written"
    assert store._plain_key(bare) != store._plain_key(dataclasses.replace(bare, duration=1)), "1 and 1.0 differ in JSON"


def test_the_spill_folder_goes_with_the_matrix() -> None:
    before = _spill_folders()
    matrix = merge_cell_dirs(cell_dirs(), jobs=1, spill=True)
    held = _spill_folders() - before
    assert len(held) == 1, "the runs wait in one folder while the matrix lives"
    folder = Path(tempfile.gettempdir()) / held.pop()
    assert list(folder.glob("*.run"))
    del matrix
    gc.collect()
    assert not folder.exists()


def test_the_spill_folder_goes_when_the_merge_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _spill_folders()

    def fails(*args: object) -> Matrix:
        raise OSError("disk gone")

    monkeypatch.setattr(combine._Builder, "build", fails)
    with pytest.raises(OSError, match="disk gone"):
        merge_cell_dirs(cell_dirs(), jobs=1, spill=True)
    gc.collect()
    assert _spill_folders() == before


def test_a_killed_merges_spill_folder_is_swept_by_the_next(tmp_path: Path) -> None:
    dead = Path(tempfile.gettempdir()) / f"{TEMP_PREFIX}999999999-0000-{store.SPILL_NAME}"
    dead.mkdir()
    (dead / "1-2.run").write_bytes(b"x")
    try:
        folder = store.new_spill_folder()
        assert not dead.exists(), "its writer's pid is gone: a leftover"
        shutil.rmtree(folder)
    finally:
        shutil.rmtree(dead, ignore_errors=True)


@pytest.mark.parametrize("jobs", [1, 3])
def test_a_spill_that_cannot_be_written_fails_the_merge_naming_it(
    jobs: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full or vanished temp folder is the merge's write error (exit 6), never columns quietly lost."""
    gone = tmp_path / "gone"
    monkeypatch.setattr(store, "new_spill_folder", lambda: gone)
    with pytest.raises(WriteError, match=f"cannot write the merge's spilled results to {tmp_path}: ") as caught:
        merge_cell_dirs(cell_dirs(), jobs=jobs, spill=True)
    assert caught.value.exit_code == EXIT_OUTPUT
