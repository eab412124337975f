"""Progress of a running cell (harness/run/progress.py), read from events.jsonl as it grows: a
committed cell's real event log replayed in pieces (lines cut anywhere) gives its planned count,
its finished tests and its outcomes; CI logs get a line per 10% (or per interval), a terminal one
line rewritten in place; disabled, it writes nothing."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

from harness.outcomes import Outcome
from harness.run.progress import ProgressReporter
from tests.committed import CELLS, releases_matrix

CELL = "cu130-2.14.1-cpu-only"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _reporter(tmp_path: Path, stream: io.StringIO, **kwargs: object) -> ProgressReporter:
    return ProgressReporter(tmp_path / "events.jsonl", tmp_path / "collected.json", stream=stream, **kwargs)  # type: ignore[arg-type]


def _replay(tmp_path: Path, reporter: ProgressReporter, pieces: int = 7) -> None:
    """The cell's events written in `pieces` chunks cut at arbitrary bytes, polled after each."""
    data = (CELLS / CELL / "events.jsonl").read_bytes()
    (tmp_path / "collected.json").write_bytes((CELLS / CELL / "collected.json").read_bytes())
    events = tmp_path / "events.jsonl"
    events.write_bytes(b"")
    step = len(data) // pieces + 1
    for start in range(0, len(data), step):
        with events.open("ab") as handle:
            handle.write(data[start : start + step])
        reporter.poll()


def _outcomes() -> Counter:
    column = releases_matrix().column(CELL)
    assert column is not None
    return Counter(result.outcome for _, result in releases_matrix().results(CELL))


def test_a_real_event_log_replayed_in_pieces(tmp_path: Path) -> None:
    stream = io.StringIO()
    reporter = _reporter(tmp_path, stream, interval=3600)
    _replay(tmp_path, reporter)
    planned = json.loads((CELLS / CELL / "collected.json").read_text(encoding="utf-8"))["count"]
    assert reporter.planned == planned and reporter.finished == planned and reporter.partial == b""
    outcomes = _outcomes()
    assert reporter.counts["skipped"] == outcomes[Outcome.SKIPPED]
    assert reporter.counts["xfailed"] == outcomes[Outcome.XFAILED]
    reporter.done()
    last = stream.getvalue().splitlines()[-1]
    assert last.startswith(f"[ {planned}/{planned}] ")
    assert f"{outcomes[Outcome.SKIPPED]} skipped" in last


def test_passed_tests_are_counted(tmp_path: Path) -> None:
    reporter = _reporter(tmp_path, io.StringIO(), interval=3600)
    _replay(tmp_path, reporter)
    assert reporter.counts["passed"] >= _outcomes()[Outcome.PASSED]


def test_ci_logs_get_a_line_per_tenth(tmp_path: Path) -> None:
    (tmp_path / "collected.json").write_text(json.dumps({"count": 20}), encoding="utf-8")
    stream = io.StringIO()
    reporter = _reporter(tmp_path, stream, interval=3600)
    with (tmp_path / "events.jsonl").open("w", encoding="utf-8") as events:
        for n in range(20):
            events.write(json.dumps({"event": "start", "nodeid": f"a::t{n}"}) + "\n")
            events.write(json.dumps({"event": "pass", "nodeid": f"a::t{n}", "duration": 0.1}) + "\n")
            events.flush()
            reporter.poll()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 11, lines  # 1/20 (the first), then every 2 tests: 10%, 20%, ... 100%
    assert lines[-1].startswith("[  20/20]")
    assert "\r" not in stream.getvalue()


def test_an_unknown_plan_reads_as_a_question_mark(tmp_path: Path) -> None:
    (tmp_path / "collected.json").write_text("{broken", encoding="utf-8")
    (tmp_path / "events.jsonl").write_text(
        '{"event": "start", "nodeid": "a::t"}\nnot json\n'
        '{"event": "report", "nodeid": "a::t", "when": "setup", "outcome": "failed"}\n'
        '{"event": "finish", "nodeid": "a::t"}\n',
        encoding="utf-8",
    )
    stream = io.StringIO()
    reporter = _reporter(tmp_path, stream, interval=0)
    reporter.poll()
    assert stream.getvalue() == "[   1/?] 1 failed\n"


def test_a_terminal_gets_one_line_rewritten(tmp_path: Path) -> None:
    stream = _Terminal()
    reporter = _reporter(tmp_path, stream)
    _replay(tmp_path, reporter, pieces=3)
    reporter.done()
    text = stream.getvalue()
    assert text.count("\r") == 4 and text.endswith("\n") and text.count("\n") == 1  # 3 polls and done()
    widths = {len(part) for part in text.rstrip("\n").split("\r")[1:]}
    assert len(widths) == 1 and widths.pop() < 120, "padded to one width: a shorter line hides a longer one"


def test_disabled_it_writes_nothing(tmp_path: Path) -> None:
    stream = io.StringIO()
    reporter = _reporter(tmp_path, stream, enabled=False)
    _replay(tmp_path, reporter)
    reporter.done()
    assert stream.getvalue() == "" and reporter.finished == 0


def test_no_event_log_yet_is_no_output(tmp_path: Path) -> None:
    stream = io.StringIO()
    reporter = _reporter(tmp_path, stream, interval=0)
    reporter.poll()
    assert stream.getvalue() == ""


def test_the_closing_line_is_printed_once(tmp_path: Path) -> None:
    """Issue 42: the last progress line came twice (the poll's 100 % line, then done()'s)."""
    stream = io.StringIO()
    reporter = _reporter(tmp_path, stream, interval=3600)
    _replay(tmp_path, reporter)
    reporter.done()
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("[ ") and lines.count(lines[-1]) == 1, lines[-3:]
    empty = io.StringIO()
    idle = ProgressReporter(tmp_path / "none.jsonl", tmp_path / "none.json", stream=empty, interval=3600)
    idle.done()
    assert empty.getvalue().splitlines() == ["[   0/?] starting"], "a run with no event yet still ends with its line"
