"""The compact event log of an imported cell (harness/merge/eventlog.py): what the import decided
from the XML is exactly what every later merge reads back from the log, on every real report of
every dialect; a pass line only for a result it says whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.merge import ingest
from harness.merge.eventlog import is_plain_pass, write_event_log
from harness.merge.importjunit import ImportSpec, import_junit
from harness.model import TestResult
from harness.outcomes import Outcome, Scope
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


def test_pass_lines_only_for_results_they_say_whole(tmp_path: Path) -> None:
    plain = TestResult(outcome=Outcome.PASSED, duration=0.5)
    assert is_plain_pass(plain)
    assert not is_plain_pass(TestResult(outcome=Outcome.PASSED))  # no time: a pass line always has one
    assert not is_plain_pass(TestResult(outcome=Outcome.PASSED, duration=0.5, attempts=2))
    assert not is_plain_pass(TestResult(outcome=Outcome.PASSED, duration=0.5, scope=Scope.HOST))
    assert not is_plain_pass(TestResult(outcome=Outcome.FLAKY, duration=0.5, message="m"))
    log = tmp_path / "events.jsonl"
    tests = [("a::t", plain, None), ("a::u", plain, "feat"), ("a::v", TestResult(outcome=Outcome.FAILED), None)]
    assert write_event_log(log, tests, errors=["bad time"], notes=["shared ids"]) == 3
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [e["event"] for e in events] == [
        "session_start", "pass", "result", "result", "read_error", "note", "session_finish",
    ]  # fmt: skip
    assert events[1] == {"event": "pass", "nodeid": "a::t", "duration": 0.5}
    assert events[2]["feature"] == "feat" and events[3]["result"] == {"outcome": "failed"}
