"""Which reader reads a cell (harness/ingest/cellformat.py): one per cell format, chosen by the
manifest's `cell_format`; an unknown format is refused by name. A committed real cell (format 2)
rewritten as format 1 wrote it reads to the same results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cell import CELL_FORMATS
from harness.errors import InputError
from harness.ingest import cellformat_v1, cellformat_v2
from harness.ingest.cell_reader import ingest_cell
from harness.ingest.cellformat import READERS, cell_reader
from tests.committed import CELLS, as_finish_lines, as_tests


def test_one_reader_per_format() -> None:
    assert tuple(READERS) == CELL_FORMATS
    assert cell_reader(1) is cellformat_v1 and cell_reader(2) is cellformat_v2
    assert all(f == cell_reader(f).FORMAT for f in CELL_FORMATS)
    assert cellformat_v1.PLAIN_FINISH and not cellformat_v2.PLAIN_FINISH


@pytest.mark.parametrize("unknown", [0, 5, 99])
def test_an_unknown_format_is_refused_by_name(unknown: int) -> None:
    with pytest.raises(InputError, match=rf"cell format {unknown} has no reader here \(known: \[1, 2, 3, 4\]\)"):
        cell_reader(unknown)


def _as_format_1(source: Path, dest: Path) -> Path:
    """The cell as the unversioned writer left it: no cell_format, one object per test, finish lines."""
    shutil.copytree(source, dest)
    manifest = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    del manifest["cell_format"]
    (dest / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    collected = json.loads((dest / "collected.json").read_text(encoding="utf-8"))
    (dest / "collected.json").write_text(json.dumps(as_tests(collected)), encoding="utf-8")
    events = (dest / "events.jsonl").read_text(encoding="utf-8")
    (dest / "events.jsonl").write_text(as_finish_lines(events), encoding="utf-8")
    return dest


def test_a_cell_in_either_format_reads_to_the_same_results(tmp_path: Path) -> None:
    original = ingest_cell(CELLS / "cpu-2.13.0")
    rewritten = ingest_cell(_as_format_1(CELLS / "cpu-2.13.0", tmp_path / "cell"))
    assert original.manifest.cell_format == 2 and rewritten.manifest.cell_format == 1
    assert original.errors == rewritten.errors == []
    assert dict(zip(original.nodeids, original.results, strict=True)) == dict(
        zip(rewritten.nodeids, rewritten.results, strict=True)
    )
    assert dict(zip(original.nodeids, original.test_features, strict=True)) == dict(
        zip(rewritten.nodeids, rewritten.test_features, strict=True)
    )


def test_a_format_2_cell_with_a_format_1_plan_says_its_plan_is_unknown(tmp_path: Path) -> None:
    cell = Path(shutil.copytree(CELLS / "cpu-2.13.0", tmp_path / "cell"))
    collected = json.loads((cell / "collected.json").read_text(encoding="utf-8"))
    (cell / "collected.json").write_text(json.dumps(as_tests(collected)), encoding="utf-8")
    read = ingest_cell(cell)
    assert any(e.startswith("collected.json: unreadable (") and "groups" in e for e in read.errors), read.errors
    assert read.results, "the results are still read from the event log"
