"""The event-log reader (harness/ingest/eventlog_reader.py): its compact pass lines read exactly as json
reads them, and its shortcut (pass lines kept as plain passes) held to its plain path on the
committed real cells and on imported ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import jsonio
from harness.importer.junit_import import ImportSpec, import_junit
from harness.ingest.cell_reader import ingest_cell
from harness.ingest.eventlog_reader import compact_pass, read_events
from harness.ingest.plainstore import Gather
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
    """Passes lines and result lines (cell format 4), from real reports of two dialects."""
    files = (DIALECTS / "pytest" / "junit-xunit1.xml", DIALECTS / "pytorch-ci" / "junit-reruns.xml")
    done = import_junit(ImportSpec(files=files, backend="cpu", cell_id="c", results_dir=tmp_path))
    assert b'{"event":"passes","nodeids":["' in (done.cell_dir / "events.jsonl").read_bytes()
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


# -- the passes lines of imported cells (format 4) ----------------------------------------------------
def _as_pass_lines(nodeids: object, durations: object) -> bytes:
    pairs = zip(nodeids, durations, strict=True)  # type: ignore[call-overload]
    return b"".join(jsonio.dumps({"event": "pass", "nodeid": n, "duration": d}) + b"\n" for n, d in pairs)


KNOWN = b'{"event":"result","nodeid":"k","result":{"outcome":"failed"}}\n{"event":"pass","nodeid":"p","duration":1}\n'


@pytest.mark.parametrize(
    ("nodeids", "durations"),
    [
        (["a", "b", "c"], [0.5, 2, 0.0]),  # the bulk path
        (["a", "b", "a"], [0.5, 2, 3.0]),  # an id twice in the line: the later one is a repeat
        (["a", "k", "p"], [0.5, 2, 3.0]),  # ids the log knew already: a result and a pass
        (["a", "p"], [0.5, 3.0]),  # a pass the log knew already
        (["a", "k"], [0.5, 3.0]),  # a result the log knew already
        (["a", "b"], [0.5, True]),  # not a number: skipped, counted
        (["a", 5, None], [0.5, 1, 2]),  # not ids: skipped, counted
        (["a", "b"], [0.5, "1"]),
        ([], []),
    ],
)
@pytest.mark.parametrize("plain", [False, True], ids=["shortcut", "plain path"])
def test_a_passes_line_reads_as_the_pass_lines_it_stands_for(
    tmp_path: Path, nodeids: list, durations: list, plain: bool
) -> None:
    batched, single = tmp_path / "batched.jsonl", tmp_path / "single.jsonl"
    batched.write_bytes(KNOWN + jsonio.dumps({"event": "passes", "nodeids": nodeids, "durations": durations}) + b"\n")
    valid = [(n, d) for n, d in zip(nodeids, durations, strict=True) if isinstance(n, str) and type(d) in (int, float)]
    single.write_bytes(KNOWN + _as_pass_lines([n for n, _ in valid], [d for _, d in valid]))
    got, want = Gather(), Gather()
    got_errors: list[str] = []
    read_events(batched, got, got_errors, plain=plain)
    read_events(single, want, [], plain=plain)
    assert (got.plain, got.unplanned) == (want.plain, want.unplanned)
    assert got.tests == want.tests  # TestState: a dataclass, compared field by field
    skipped = len(nodeids) - len(valid)
    assert bool(got_errors) == bool(skipped) and got.events_clean == (not skipped)
    if skipped:
        assert got_errors == [f"events.jsonl: {skipped} unreadable line(s) skipped (a writer died mid-line?)"]


@pytest.mark.parametrize(
    "line",
    [
        b'{"event":"passes","nodeids":["a","b"],"durations":[1]}',
        b'{"event":"passes","nodeids":"ab","durations":"12"}',
        b'{"event":"passes","nodeids":["a"]}',
        b'{"event":"passes"}',
    ],
)
def test_a_passes_line_that_is_not_two_lists_of_one_length_is_skipped_and_said(tmp_path: Path, line: bytes) -> None:
    log = tmp_path / "events.jsonl"
    log.write_bytes(line + b"\n")
    gather, errors = Gather(), []
    read_events(log, gather, errors)
    assert not gather.plain and not gather.tests and not gather.events_clean
    assert errors == ["events.jsonl: 1 unreadable line(s) skipped (a writer died mid-line?)"]


def test_a_passes_line_takes_the_plan_into_account(tmp_path: Path) -> None:
    """RunRequest ids are not `unplanned`; the others are, in the bulk path as id by id."""
    log = tmp_path / "events.jsonl"
    log.write_bytes(b'{"event":"passes","nodeids":["a","b","c"],"durations":[1,2,3]}\n')
    gather = Gather()
    gather.plan["b"] = ("f", None)
    read_events(log, gather, [])
    assert gather.plain == {"a": 1, "b": 2, "c": 3} and list(gather.unplanned) == ["a", "c"]
