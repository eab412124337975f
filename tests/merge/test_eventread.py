"""The event-log reader (harness/merge/eventread.py): its compact pass lines read exactly as json
reads them, and its shortcut (pass lines kept as plain passes) held to its plain path on the
committed real cells and on imported ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import jsonio
from harness.merge.eventread import compact_pass, read_events
from harness.merge.importjunit import ImportSpec, import_junit
from harness.merge.ingest import ingest_cell
from harness.merge.plainstore import Gather
from tests.committed import all_cell_dirs
from tests.conftest import REPO

DIALECTS = REPO / "tests" / "dialects"


def _decided(cell: Path, *, plain: bool) -> list[tuple]:
    read = ingest_cell(cell, plain=plain)
    return [*sorted(zip(read.nodeids, read.test_features, read.results, strict=True)), (read.errors, read.notes)]


@pytest.mark.parametrize("cell", all_cell_dirs(), ids=lambda p: p.name)
def test_the_shortcut_and_the_plain_path_agree_on_the_committed_cells(cell: Path) -> None:
    assert _decided(cell, plain=False) == _decided(cell, plain=True)


def test_the_shortcut_and_the_plain_path_agree_on_an_imported_cell(tmp_path: Path) -> None:
    """Compact pass lines and result lines (cell format 3), from real reports of two dialects."""
    files = (DIALECTS / "pytest" / "junit-xunit1.xml", DIALECTS / "pytorch-ci" / "junit-reruns.xml")
    done = import_junit(ImportSpec(files=files, backend="cpu", cell_id="c", results_dir=tmp_path))
    assert b'{"event":"pass","nodeid":"' in (done.cell_dir / "events.jsonl").read_bytes()
    assert _decided(done.cell_dir, plain=False) == _decided(done.cell_dir, plain=True)


def test_the_shortcut_keeps_pass_lines_as_plain_passes(tmp_path: Path) -> None:
    """What the shortcut is: a pass line of a test not known yet is an id and a time in the store."""
    log = tmp_path / "events.jsonl"
    log.write_bytes(
        b'{"event":"pass","nodeid":"a::t","duration":0.5}\n{"event": "pass", "nodeid": "b::t", "duration": 2}\n'
    )
    fast, plain = Gather(), Gather()
    read_events(log, fast, [])
    read_events(log, plain, [], plain=True)
    assert fast.plain == {"a::t": 0.5, "b::t": 2} and not fast.tests
    assert not plain.plain and set(plain.tests) == {"a::t", "b::t"}


# -- the compact pass lines of imported cells (compact_pass) -----------------------------------------
@pytest.mark.parametrize(
    "nodeid",
    ["a/test_x.py::T::t[1]", "", "ünïcödé ✓ 日本語", 'q"uote', "back\\slash", "tab\there", 'a","duration":1}',
     "a::b", "x" * 5000],
)  # fmt: skip
@pytest.mark.parametrize("duration", [0.037, 0, 12, 1.0, 1e-05, 123456.789, -0.0, 3.14159265358979])
def test_compact_pass_lines_read_as_json_reads_them(nodeid: str, duration: float) -> None:
    line = jsonio.dumps({"event": "pass", "nodeid": nodeid, "duration": duration})
    event = jsonio.loads(line)
    fast = compact_pass(line)
    if fast is not None:
        assert fast == (event["nodeid"], event["duration"])
        assert type(fast[1]) is type(event["duration"])
    plain = all(c not in nodeid for c in '"\\\t') and b"e" not in line.rsplit(b":", 1)[1]
    assert (fast is not None) == plain, "the fast path takes every plain line and nothing else"


@pytest.mark.parametrize(
    "line",
    [
        b'{"event":"pass","nodeid":"a","duration":0.1} ',
        b'{"event":"pass","nodeid":"a","duration":nan}',
        b'{"event":"pass","nodeid":"a","duration":"0.1"}',
        b'{"event":"pass","nodeid":"a","duration":01}',
        b'{"event":"pass","nodeid":"a\xff","duration":0.1}',
        b'{"event":"pass","nodeid":"a","duration":0.1,"x":1}',
        b'{"event":"pass","nodeid":5,"duration":0.1}',
        b'{"event":"pass","nodeid":"a,"duration":0.1}',
    ],
)
def test_compact_pass_leaves_anything_else_to_json(line: bytes) -> None:
    assert compact_pass(line) is None
