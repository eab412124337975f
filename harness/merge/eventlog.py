"""Writes a cell's compact event log from decided results (cell format 3: `harness import`).

The run wing's plugin writes the same `pass` lines as tests finish; an import decides its tests
from JUnit once and writes them here, so every later merge reads an event log, never the XML
again (harness/merge/cellformat_v3.py says what each line holds). Lines are written in large
blocks; the cell is built in a hidden folder and renamed into place whole, so a half-written
log is never seen.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

from harness import jsonio
from harness.model import TestResult
from harness.outcomes import Outcome, Scope

BLOCK: Final = 1 << 20  # bytes gathered before each write


def is_plain_pass(result: TestResult) -> bool:
    """A result a `pass` line says whole: passed, once, with nothing else to keep."""
    if result.duration is None:  # a pass line always carries a time
        return False
    return result == TestResult(outcome=Outcome.PASSED, duration=result.duration, scope=Scope.BACKEND)


def write_event_log(
    path: Path,
    tests: Iterable[tuple[str, TestResult, str | None]],
    *,
    errors: Iterable[str] = (),
    notes: Iterable[str] = (),
) -> int:
    """events.jsonl for `tests`: (id, result, the feature the report itself named or None).
    Returns the number of tests written."""
    dumps = jsonio.dumps
    count = 0
    with path.open("xb") as out:
        block = [dumps({"event": "session_start", "source": "harness import"})]
        size = 0
        for nodeid, result, feature in tests:
            count += 1
            if feature is None and is_plain_pass(result):
                line = dumps({"event": "pass", "nodeid": nodeid, "duration": result.duration})
            else:
                event = {"event": "result", "nodeid": nodeid, "result": result.to_json()}
                if feature is not None:
                    event["feature"] = feature
                line = dumps(event)
            block.append(line)
            size += len(line)
            if size > BLOCK:
                out.write(b"\n".join(block) + b"\n")
                block, size = [], 0
        block.extend(dumps({"event": "read_error", "message": e}) for e in errors)
        block.extend(dumps({"event": "note", "message": n}) for n in notes)
        block.append(dumps({"event": "session_finish"}))
        out.write(b"\n".join(block) + b"\n")
    return count
