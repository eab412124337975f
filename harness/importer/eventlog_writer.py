"""Writes a cell's compact event log from decided results (cell format 4: `harness import`).

The run wing's plugin writes a `pass` line as each test finishes; an import decides its tests
from JUnit once and writes them here, the plain passes many to a `passes` line, so every later
merge reads an event log, never the XML again (harness/ingest/cellformat_v4.py says what each
line holds). Lines are written in large blocks; the cell is built in a hidden folder and renamed
into place whole, so a half-written log is never seen.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

from harness import jsonio
from harness.cell import COLLECTED, EVENTS
from harness.ingest.decide import is_plain_pass, said_of
from harness.model import TestResult
from harness.outcomes import Scope

BLOCK: Final = 1 << 20  # bytes gathered before each write
# Plain passes per `passes` line, and the characters of their ids after which a line ends sooner:
# lines stay far below the reader's cap on one line (eventlog_reader.EVENT_LINE_CAP, 8 MB).
PASSES_BATCH: Final = 1000
PASSES_BYTES: Final = 256 * 1024
_UNSEEN: Final = object()


def write_cell_log(
    cell: Path,
    tests: Iterable[tuple[str, TestResult, str | None]],
    *,
    errors: Iterable[str] = (),
    notes: Iterable[str] = (),
) -> int:
    """events.jsonl for `tests`: (id, result, the feature the report itself named or None), and
    collected.json's groups for the tests whose report named a feature or a scope (the feature map
    places the others when the cell is merged). Returns the number of tests written.

    The plain passes go PASSES_BATCH to a `passes` line (their ids and their times, two lists:
    cell format 4), every other test to a `result` line of its own."""
    dumps = jsonio.dumps
    count = 0
    groups: dict[tuple[str | None, str], list[str]] = {}
    # Most results are a few shared objects (a pass in t seconds): whether each is a plain pass is
    # worked out once (id -> its duration, or None for a result that needs a result line: a plain
    # pass always has a time).
    plain_time: dict[int, float | None] = {}
    keep_alive: list[TestResult] = []  # the ids above stay those of these objects
    ids: list[str] = []
    times: list[float] = []
    id_bytes = 0
    with (cell / EVENTS).open("xb") as out:
        block = [dumps({"event": "session_start", "source": "harness import"})]
        size = 0
        for nodeid, result, feature in tests:
            count += 1
            if feature is not None or result.scope is not Scope.BACKEND:
                groups.setdefault((feature, result.scope.value), []).append(nodeid)
            key = id(result)
            duration = plain_time.get(key, _UNSEEN)
            if duration is _UNSEEN:
                duration = plain_time[key] = result.duration if is_plain_pass(said_of(result)) else None
                keep_alive.append(result)
            if duration is not None:
                ids.append(nodeid)
                times.append(duration)
                id_bytes += len(nodeid)
                if len(ids) < PASSES_BATCH and id_bytes < PASSES_BYTES:
                    continue
                line = _passes_line(ids, times)
                ids, times, id_bytes = [], [], 0
            else:
                line = dumps({"event": "result", "nodeid": nodeid, "result": result.to_json()})
            block.append(line)
            size += len(line)
            if size > BLOCK:
                out.write(b"\n".join(block) + b"\n")
                block, size = [], 0
        if ids:
            block.append(_passes_line(ids, times))
        block.extend(dumps({"event": "read_error", "message": e}) for e in errors)
        block.extend(dumps({"event": "note", "message": n}) for n in notes)
        block.append(dumps({"event": "session_finish"}))
        out.write(b"\n".join(block) + b"\n")
    if groups:
        planned = [{"feature": f, "scope": s, "tests": ids} for (f, s), ids in groups.items()]
        (cell / COLLECTED).write_bytes(dumps({"count": sum(map(len, groups.values())), "groups": planned}))
    return count


def _passes_line(nodeids: list[str], durations: list[float]) -> bytes:
    return jsonio.dumps({"event": "passes", "nodeids": nodeids, "durations": durations})
