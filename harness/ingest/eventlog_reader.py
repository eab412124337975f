"""The event-log reader: a cell's events.jsonl, streamed, into the plain-pass store (plainstore.py).

The plugin writes a `pass` line for each test that simply passed, `report`/`finish` lines for the
others; `harness import` writes the compact form of the same lines (format 3) or `passes` lines
(format 4), and `result` lines for what is not a plain pass. Lines are read in large blocks; a
line over EVENT_LINE_CAP is skipped without being held whole, a bad or half-written one is
counted and reported.

The speed trick, behind `plain=`: a pass line whose test is not yet known goes straight into the
store's `plain` ids (and the compact ones are read by one regular expression, without json).
`plain=True` reads every line with json and keeps every test as a TestState; tests/ingest/
test_eventlog_reader.py holds both to the same results on the committed cells and real runs' logs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

from harness import jsonio
from harness.ingest import attempts as normalise
from harness.ingest.decide import Said, is_plain_pass
from harness.ingest.plainstore import OUTPUT_CAP, Gather, TestState
from harness.model import TestResult, trim
from harness.regular_file import open_regular

EVENT_LINE_CAP: Final = 8 << 20  # bytes; the plugin's lines stay far below (texts trimmed to 32 KB)
_PHASE_BITS: Final = {"setup": 1, "call": 2, "teardown": 4}
_START_LINE: Final = b'{"event": "start"'  # how the plugin's json.dumps begins a start line


class _BoundedLines:
    """The lines of a binary file, read in large blocks; a line longer than `cap` is skipped
    (counted in `too_long`) without ever being held whole."""

    BLOCK = 1 << 20

    def __init__(self, handle: Any, cap: int, drop: bytes | None = None) -> None:
        self.handle = handle
        self.cap = cap
        self.drop = drop  # lines starting with this are left out
        self.too_long = 0

    def __iter__(self) -> Any:
        rest = b""
        skipping = False  # inside an overlong line: drop bytes up to its end
        while block := self.handle.read(self.BLOCK):
            if skipping:
                end = block.find(b"\n")
                if end < 0:
                    continue
                block, skipping = block[end + 1 :], False
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            if self.drop is not None:
                drop = self.drop
                lines = [line for line in lines if not line.startswith(drop)]
            yield from lines
            if len(rest) > self.cap:
                self.too_long += 1
                rest, skipping = b"", True
        if rest and not skipping:
            yield rest


# The pass lines `harness import` writes (harness/importer/eventlog_writer.py), read without building a dict:
# most lines of an imported cell. One regular expression takes an id without quotes, backslashes or
# control characters and a plain number; compact_pass() returns what json would, or None to take
# the json path; tests/ingest/test_eventlog_reader.py holds it to json on hostile ids and numbers.
COMPACT_PASS: Final = b'{"event":"pass","nodeid":"'
_COMPACT_LINE: Final = re.compile(
    rb'\{"event":"pass","nodeid":"([^"\\\x00-\x1f]*)","duration":(-?(?:0|[1-9][0-9]{0,15})(?:\.([0-9]{1,17}))?)\}'
)


def compact_pass(line: bytes) -> tuple[str, int | float] | None:
    """(id, duration) of a compact pass line, exactly as json reads it; None for any other line."""
    match = _COMPACT_LINE.fullmatch(line)
    if match is None:
        return None
    try:
        nodeid = match[1].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return nodeid, (int(match[2]) if match[3] is None else float(match[2]))


def read_events(
    path: Path,
    gather: Gather,
    errors: list[str],
    *,
    progress: bool = True,
    plain_finish: bool = True,
    plain: bool = False,
) -> None:
    """events.jsonl as it streams by; a bad or half-written line is reported and skipped.

    `progress`: read the start lines. They only matter for a run that did not end normally
    (which test was in flight), so for a completed run they are skipped unparsed. `plain_finish`:
    the cell format's finish lines may hold a plain pass (cellformat). `plain`: the plain path (no
    shortcut into the store's plain passes), for tests.
    """
    if not path.exists():
        return
    gather.events_seen = True
    bad = 0
    loads = jsonio.loads
    tests, passes, plan, unplanned = gather.tests, gather.plain, gather.plan, gather.unplanned
    match = None if plain else _COMPACT_LINE.fullmatch
    shortcut = not plain
    try:
        handle = open_regular(path)
    except OSError as err:  # unreadable: that column's problem, with the reason
        errors.append(f"events.jsonl: cannot read: {err.strerror or err}")
        return
    with handle:
        lines = _BoundedLines(handle, EVENT_LINE_CAP, drop=None if progress else _START_LINE)
        for line in lines:
            if match is not None and (found := match(line)) is not None:
                try:
                    nodeid = found[1].decode("utf-8")
                except UnicodeDecodeError:
                    nodeid = None
                if nodeid is not None and nodeid not in tests and nodeid not in passes:
                    if nodeid not in plan:
                        unplanned[nodeid] = None
                    passes[nodeid] = int(found[2]) if found[3] is None else float(found[2])
                    continue
            try:
                event = loads(line)
                kind = event.get("event")
                nodeid = event.get("nodeid")
            except (ValueError, AttributeError):  # not JSON, or not an object
                bad += bool(line.strip())
                continue
            if kind == "pass" and isinstance(nodeid, str):
                # The hot path (most tests): every phase passed, the call among them, nothing else
                # (the plugin writes a pass line exactly for what passed plainly).
                duration = event.get("duration")
                if not isinstance(duration, int | float):
                    duration = 0.0
                if shortcut and nodeid not in tests and nodeid not in passes:
                    if nodeid not in plan:
                        unplanned[nodeid] = None
                    passes[nodeid] = duration
                    continue
                _finish(gather.test(nodeid), {"call": duration}, event)  # a repeat of a known test
            elif kind == "finish" and isinstance(nodeid, str):
                # Logs written before the plugin wrote `pass` lines carry every test's passed phases here.
                passed = event.get("passed")
                if (
                    shortcut
                    and plain_finish
                    and isinstance(passed, dict)
                    and nodeid not in tests
                    and nodeid not in passes
                    and is_plain_pass(
                        said := Said("call" in passed, _passed_time(passed), properties=event.get("user_properties"))
                    )
                ):
                    # The same as a `pass` line.
                    if nodeid not in plan:
                        unplanned[nodeid] = None
                    passes[nodeid] = said.duration  # type: ignore[assignment]
                    continue
                _finish(gather.test(nodeid), passed, event)
            elif kind == "report" and isinstance(nodeid, str):
                _report(gather.test(nodeid), event)
            elif kind == "start" and isinstance(nodeid, str):
                gather.test(nodeid).started = True
            elif kind == "timeout" and isinstance(nodeid, str):
                gather.timed_out[nodeid] = event.get("seconds")
                gather.test(nodeid)
            elif kind == "passes":
                # An imported cell (format 4): many plain passes in one line, two lists.
                bad += _passes(gather, event.get("nodeids"), event.get("durations"), shortcut)
            elif kind == "result" and isinstance(nodeid, str):
                # An imported cell (formats 3 and 4): the result decided from its JUnit at import time.
                try:
                    decided = TestResult.from_json(event["result"])
                except (KeyError, ValueError, TypeError, AttributeError):
                    bad += 1
                    continue
                test = gather.test(nodeid)
                test.decided, test.reported, test.finished = decided, True, True
            elif kind in ("read_error", "note"):
                # What the import found wrong in its files, or said about them: kept with the cell.
                (errors if kind == "read_error" else gather.notes).append(str(event.get("message")))
            elif kind == "session_finish":
                gather.session_finished = True
            elif kind is None:
                bad += 1
    too_long = lines.too_long
    gather.events_clean = not (bad or too_long)
    if bad:
        errors.append(f"events.jsonl: {bad} unreadable line(s) skipped (a writer died mid-line?)")
    if too_long:
        errors.append(f"events.jsonl: {too_long} line(s) over {EVENT_LINE_CAP >> 20} MB skipped")


_NUMBERS: Final = frozenset({int, float})


def _passed_time(passed: dict[str, Any]) -> float:
    """A finish line's passed phases' time (a phase without a number counts nothing)."""
    try:
        return sum(passed.values())
    except TypeError:
        return sum(v for v in passed.values() if isinstance(v, int | float))


def _passes(gather: Gather, nodeids: Any, durations: Any, shortcut: bool) -> int:
    """A `passes` line (cell format 4): the tests of `nodeids` passed plainly in `durations`, read as
    that many `pass` lines would be. Returns 1 for a line that is not two lists of one length (it
    is skipped), else the number of entries that are not an id and a number (each skipped).

    The speed trick, behind `shortcut` (the reader's `plain=`): a line of new, distinct ids with
    numbers, as `harness import` writes them, goes into the store's plain passes in bulk (dict
    updates in C, no loop per test here): what makes an imported cell's log about a tenth of the
    per-line reading (benchmarks/bench_import.py). Any other line goes id by id, as pass lines."""
    if not isinstance(nodeids, list) or not isinstance(durations, list) or len(nodeids) != len(durations):
        return 1
    tests, passes, plan, unplanned = gather.tests, gather.plain, gather.plan, gather.unplanned
    if (
        shortcut
        and set(map(type, nodeids)) <= {str}
        and set(map(type, durations)) <= _NUMBERS
        and len(set(nodeids)) == len(nodeids)
        and passes.keys().isdisjoint(nodeids)
        and tests.keys().isdisjoint(nodeids)
    ):
        unplanned.update(dict.fromkeys(nodeids if not plan else [n for n in nodeids if n not in plan]))
        passes.update(zip(nodeids, durations, strict=True))
        return 0
    skipped = 0
    for nodeid, duration in zip(nodeids, durations, strict=True):
        if not isinstance(nodeid, str) or type(duration) not in _NUMBERS:
            skipped += 1
            continue
        if shortcut and nodeid not in tests and nodeid not in passes:
            if nodeid not in plan:
                unplanned[nodeid] = None
            passes[nodeid] = duration
            continue
        _finish(gather.test(nodeid), {"call": duration}, {})
    return skipped


def _report(test: TestState, event: dict[str, Any]) -> None:
    """A phase report (every report that did not simply pass; older logs: every report)."""
    test.reported = True
    phase_bit = _PHASE_BITS.get(event.get("when"))
    if event.get("outcome") == "passed" and event.get("wasxfail") is None and phase_bit:
        test.passed |= phase_bit
        duration = event.get("duration")
        if isinstance(duration, int | float):
            test.passed_time += duration
    else:
        attempt = normalise.from_report(event)
        if test.attempts is None:
            test.attempts = [attempt]
        else:
            test.attempts.append(attempt)
    if event.get("user_properties"):
        test.user_properties = event["user_properties"]  # later phases hold all earlier ones
    if event.get("output") and test.output is None:
        test.output = trim(event["output"], OUTPUT_CAP)


def _finish(test: TestState, passed: Any, event: dict[str, Any]) -> None:
    """A test's finish line, with the phases that passed folded into it by the plugin."""
    test.finished = True
    if isinstance(passed, dict) and passed:
        test.reported = True
        for when, duration in passed.items():
            test.passed |= _PHASE_BITS.get(when, 0)
            if isinstance(duration, int | float):
                test.passed_time += duration
    if event.get("user_properties"):
        test.user_properties = event["user_properties"]
