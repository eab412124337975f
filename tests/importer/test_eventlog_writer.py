"""The compact event log of an imported cell (harness/importer/eventlog_writer.py): what the import decided
from the XML is exactly what every later merge reads back from the log, on every real report of
every dialect; a pass line only for a result it says whole."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.importer import eventlog_writer as eventlog
from harness.importer.eventlog_writer import write_cell_log
from harness.importer.junit_import import ImportSpec, import_junit
from harness.ingest import cell_reader as ingest
from harness.ingest.decide import is_plain_pass, said_of
from harness.ingest.eventlog_reader import read_events
from harness.ingest.plainstore import Gather
from harness.model import TestResult
from harness.outcomes import Outcome, Scope, SkipClass
from tests.conftest import REPO

DIALECTS = REPO / "tests" / "dialects"
REPORTS = sorted(
    {
        expected.parent / name
        for expected in DIALECTS.glob("*/expected*.json")
        for name in json.loads(expected.read_text(encoding="utf-8"))["junit_files"]
    }
)


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: str(p.relative_to(DIALECTS)))
def test_the_log_gives_back_what_the_import_decided(tmp_path: Path, report: Path) -> None:
    done = import_junit(ImportSpec(files=(report,), backend="cpu", cell_id="c", results_dir=tmp_path))
    read_back = ingest.ingest_cell(done.cell_dir)
    decided = done.cell
    assert decided is not None
    assert sorted(zip(read_back.nodeids, read_back.test_features, read_back.results, strict=True)) == sorted(
        zip(decided.nodeids, decided.test_features, decided.results, strict=True)
    )
    assert (read_back.errors, read_back.notes) == (decided.errors, decided.notes)


def plain_pass(result: TestResult) -> bool:
    """What the writer asks of a decided result."""
    return is_plain_pass(said_of(result))


OTHER_THAN_A_PLAIN_PASS = {
    "outcome": Outcome.FLAKY, "skip_class": SkipClass.UNCLASSIFIED, "link": "l", "message": "m", "trace": "t",
    "output": "o", "duration": None, "attempts": 2, "properties": {"k": "v"}, "strict": False, "signal": "s",
    "extra_messages": ("e",), "run": "r-partial", "at": "2026-12-02T00:00:00Z",
}  # fmt: skip


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(TestResult) if f.name != "scope"])
def test_every_field_of_a_result_but_its_scope_keeps_it_off_a_pass_line(name: str) -> None:
    """A field TestResult gains must be named here, or a result holding it would be written as a
    bare pass line and lose it."""
    assert not plain_pass(dataclasses.replace(TestResult(outcome=Outcome.PASSED, duration=0.5),
                                                 **{name: OTHER_THAN_A_PLAIN_PASS[name]}))  # fmt: skip


def test_pass_lines_only_for_results_they_say_whole(tmp_path: Path) -> None:
    plain = TestResult(outcome=Outcome.PASSED, duration=0.5)
    assert plain_pass(plain)
    assert plain_pass(TestResult(outcome=Outcome.PASSED, duration=0.5, scope=Scope.HOST)), "the plan has the scope"
    assert not plain_pass(TestResult(outcome=Outcome.PASSED))  # no time: a pass line always has one
    assert not plain_pass(TestResult(outcome=Outcome.PASSED, duration=0.5, attempts=2))
    assert not plain_pass(TestResult(outcome=Outcome.FLAKY, duration=0.5, message="m"))
    host = TestResult(outcome=Outcome.PASSED, duration=0.5, scope=Scope.HOST)
    tests = [
        ("a::t", plain, None), ("a::u", plain, "feat"), ("a::h", host, None),
        ("a::v", TestResult(outcome=Outcome.FAILED), None),
    ]  # fmt: skip
    assert write_cell_log(tmp_path, tests, errors=["bad time"], notes=["shared ids"]) == 4
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [e["event"] for e in events] == [
        "session_start", "result", "passes", "read_error", "note", "session_finish",
    ]  # fmt: skip
    assert events[2] == {"event": "passes", "nodeids": ["a::t", "a::u", "a::h"], "durations": [0.5, 0.5, 0.5]}
    assert events[1] == {"event": "result", "nodeid": "a::v", "result": {"outcome": "failed"}}
    collected = json.loads((tmp_path / "collected.json").read_text(encoding="utf-8"))
    assert collected["groups"] == [
        {"feature": "feat", "scope": "backend", "tests": ["a::u"]},
        {"feature": None, "scope": "host", "tests": ["a::h"]},
    ]


def test_plain_passes_are_batched_by_count_and_by_the_size_of_their_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PASSES_BATCH tests to a line, fewer where their ids are long; every test once, in order, and
    read back as the plain passes they are."""
    monkeypatch.setattr(eventlog, "PASSES_BATCH", 3)
    monkeypatch.setattr(eventlog, "PASSES_BYTES", 100)
    ids = ["t0", "t1", "t2", "x" * 60, "y" * 60, "z"]
    tests = [(nodeid, TestResult(outcome=Outcome.PASSED, duration=float(n)), None) for n, nodeid in enumerate(ids)]
    assert write_cell_log(tmp_path, tests) == len(ids)
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    batches = [(e["nodeids"], e["durations"]) for e in events if e["event"] == "passes"]
    assert batches == [(ids[:3], [0.0, 1.0, 2.0]), (ids[3:5], [3.0, 4.0]), (ids[5:], [5.0])]
    gather = Gather()
    read_events(tmp_path / "events.jsonl", gather, errors := [])
    assert gather.plain == {nodeid: float(n) for n, nodeid in enumerate(ids)} and errors == []
