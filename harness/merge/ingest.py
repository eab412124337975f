"""One cell dir -> one record per logical test, in bounded memory.

Sources, in order of trust: events.jsonl (incremental, survives crashes), the JUnit files
(junit.xml, or the imported files under junit/), collected.json (the plan: what never ran is
`not-run`), the faults-*.log files (the signal that killed a process) and the manifest (how
the run ended). Each source is read once, as a stream, and turned into attempts
(harness/merge/attempts.py); merge/decide.py's decide() judges every test from its attempts. Memory grows
with the number of tests, never with the bytes of output in the files: texts are capped as
they are read. Every count is recomputed from these records; suite counters in XML are
never read.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, BinaryIO, Final

from harness import jsonio
from harness.cell import CellDir, CellStatus, FeatureInfo, Manifest, read_manifest
from harness.errors import InputError
from harness.merge import attempts as normalise
from harness.merge import cellformat_v3
from harness.merge.cellformat import CellReader, cell_reader
from harness.merge.decide import Attempt, Phase, Status, decide
from harness.merge.featuremap import FeatureMap, load_feature_map
from harness.merge.identity import IdentityRules, is_pytest
from harness.merge.junit import JUnitCase, JUnitRead, iter_junit
from harness.model import UNASSIGNED, TestResult, trim
from harness.outcomes import Outcome, Scope
from harness.regular_file import open_regular, read_regular

EVENT_LINE_CAP: Final = 8 << 20  # bytes; the plugin's lines stay far below (texts trimmed to 32 KB)
OUTPUT_CAP: Final = 4_000  # characters of captured output kept next to a failure
FEATURE_MAP: Final = "featuremap.toml"
JUNIT_DIR: Final = "junit"
# Properties every test of the suites records for readers of bare JUnit; the matrix has them per column.
BOOKKEEPING: Final = frozenset({"nodeid", "feature", "scope", "backend", "device"})
_FATAL_RE: Final = re.compile(r"^Fatal Python error: (.+?)\s*$")
# faulthandler's watchdog (the plugin's backstop for hangs that hold the GIL) logs this.
_WATCHDOG_RE: Final = re.compile(r"^(Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\))!\s*$")
_SCOPES: Final = {s.value: s for s in Scope}
_PHASE_BITS: Final = {"setup": 1, "call": 2, "teardown": 4}
_START_LINE: Final = b'{"event": "start"'  # how the plugin's json.dumps begins a start line
_PASSED_PHASES: Final = ((1, Phase.SETUP), (2, Phase.CALL), (4, Phase.TEARDOWN))
_FIRST: Final = itemgetter(0)


@dataclass(slots=True)
class TestRecord:
    """One logical test of one cell."""

    __test__ = False

    nodeid: str
    feature: str
    result: TestResult

    def __getattr__(self, name: str) -> Any:  # record.outcome, record.message, ... (tests read these)
        if name.startswith("_") or name == "result":  # pickling looks these up before `result` is set
            raise AttributeError(name)
        return getattr(self.result, name)


@dataclass
class CellResult:
    """One cell's tests, stored by column (ids, features, results): compact to hold and cheap
    to hand from a worker process to the merge (equal results are shared objects)."""

    path: Path
    manifest: Manifest
    nodeids: list[str]
    test_features: list[str]
    results: list[TestResult]
    errors: list[str]
    features: dict[str, FeatureInfo] = field(default_factory=dict)  # row metadata (manifest or feature map)
    notes: list[str] = field(default_factory=list)  # what was read as documented, worth saying (not errors)

    @property
    def cell_id(self) -> str:
        return self.manifest.cell_id

    @property
    def records(self) -> list[TestRecord]:
        return [TestRecord(n, f, r) for n, f, r in zip(self.nodeids, self.test_features, self.results, strict=True)]


@dataclass(slots=True)
class _Test:
    """What the sources said about one test, gathered before it is decided. Kept small: a
    cell has tens of thousands of these and most tests only passed."""

    feature: str | None = None
    scope: Scope | None = None
    reported: bool = False  # the event log has reports for it (then the log decides)
    passed: int = 0  # event log: bit per phase (setup 1, call 2, teardown 4) that reported a pass
    passed_time: float = 0.0  # and the time those passing phases took
    attempts: list[Attempt] | None = None  # event log: every report that is not a plain pass
    runs: list[list[Attempt]] | None = None  # JUnit: the attempts of each <testcase> of the id
    source: int = -1  # JUnit: the index of the file `runs` came from (a later file decides)
    pytest_report: bool = False  # JUnit: `runs` came from pytest's report (attempts.run_attempts)
    decided: TestResult | None = None  # event log of an imported cell: the result decided at import
    user_properties: Any = None  # event log: the latest report's properties, read once at the end
    properties: dict[str, Any] | None = None
    output: str | None = None
    started: bool = False
    finished: bool = False


class Gather:
    """Everything read from a cell's files, keyed by test id.

    `plan` is the collected list (feature, scope); `plain` holds the tests whose every report
    passed, with their time, and nothing else (most tests: no object each); `tests` holds what
    is known of every other test."""

    def __init__(self) -> None:
        self.plan: dict[str, tuple[str | None, Scope | None]] = {}
        self.plain: dict[str, float] = {}
        # JUnit's plain passes (see _junit_plain_pass), with the file each came from; moved into
        # `plain` once every file is read. `recorded`: the feature and scope their properties gave.
        self.junit_plain: dict[str, float] = {}
        self.junit_plain_from: dict[str, int] = {}
        self.recorded: dict[str, tuple[str | None, Scope | None]] = {}
        self.tests: dict[str, _Test] = {}
        self.unplanned: dict[str, None] = {}  # ids met in results but not in the plan, in order
        self.timed_out: dict[str, Any] = {}
        self.session_finished = False
        self.events_seen = False
        self.events_clean = True  # no unreadable or overlong line in events.jsonl
        self.notes: list[str] = []  # event log of an imported cell: what the import said about its files

    def test(self, nodeid: str) -> _Test:
        test = self.tests.get(nodeid)
        if test is None:
            test = self.tests[nodeid] = _Test()
            if nodeid not in self.plan:
                self.unplanned[nodeid] = None
            if nodeid in self.plain:  # it had looked plain; now there is more to know
                test.reported, test.passed, test.passed_time = True, 2, self.plain.pop(nodeid)
        return test

    def order(self) -> list[str]:
        return [*self.plan, *(n for n in self.unplanned if n not in self.plan)]


def _add_properties(test: _Test, pairs: Any) -> None:
    for pair in pairs or ():
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            continue
        key, value = str(pair[0]), pair[1]
        if key == "feature" and value and test.feature is None:
            test.feature = sys.intern(str(value))
        elif key == "scope" and test.scope is None:
            test.scope = _SCOPES.get(str(value))
        elif key not in BOOKKEEPING:
            if test.properties is None:
                test.properties = {}
            test.properties.setdefault(key, value)


# -- sources -------------------------------------------------------------------------------------
def read_collected(path: Path, gather: Gather, errors: list[str], reader: CellReader) -> None:
    """The plan: every collected test with its feature and scope (each cell format says how it
    lists them: harness/merge/cellformat_v1.py, cellformat_v2.py), and the modules that failed to
    import (each an error row of its own)."""
    if not path.exists():
        return
    try:
        data = jsonio.loads(read_regular(path))
        if not isinstance(data, dict):
            raise TypeError(f"a {type(data).__name__}, not an object")
        reader.read_plan(data, gather.plan)
        collect_errors = [e for e in data.get("collect_errors") or [] if isinstance(e, dict)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        errors.append(f"collected.json: unreadable ({err}); the planned test list is unknown")
        return
    for err in collect_errors:
        # A module that failed to import loses all its tests: it is an error row of its own.
        nodeid = str(err.get("nodeid") or "(collection)")
        message = str(err.get("message") or "collection failed")
        errors.append(f"collection error in {nodeid}: {trim(message, 300)}")
        test = gather.test(nodeid)
        test.reported = True
        last = message.strip().splitlines()[-1] if message.strip() else "collection failed"
        test.attempts = [Attempt(Phase.SETUP, Status.FAILED, message=f"collection failed: {last}", text=message)]


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


# The pass lines `harness import` writes (harness/merge/eventlog.py), read without building a dict:
# most lines of an imported cell. compact_pass() returns what json would, or None to take the json
# path; tests/merge/test_ingest.py holds it to json on hostile ids and numbers.
COMPACT_PASS: Final = b'{"event":"pass","nodeid":"'
_DURATION_KEY: Final = b',"duration":'
_ESCAPED: Final = re.compile(rb'[\x00-\x1f"\\]')  # an id with any of these takes the json path
_PLAIN_NUMBER: Final = re.compile(rb"-?(?:0|[1-9][0-9]{0,15})(?:\.[0-9]{1,17})?")


def compact_pass(line: bytes) -> tuple[str, int | float] | None:
    """(id, duration) of a compact pass line, exactly as json reads it; None for any other line."""
    cut = line.rfind(_DURATION_KEY)  # the last one: after it only a number follows, never a quote
    if cut < len(COMPACT_PASS) or not line.startswith(COMPACT_PASS) or line[-1:] != b"}" or line[cut - 1 : cut] != b'"':
        return None
    body = line[len(COMPACT_PASS) : cut - 1]
    number = line[cut + len(_DURATION_KEY) : -1]
    if _ESCAPED.search(body) or not _PLAIN_NUMBER.fullmatch(number):
        return None
    try:
        nodeid = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return nodeid, (float(number) if b"." in number else int(number))


def read_events(
    path: Path, gather: Gather, errors: list[str], *, progress: bool = True, plain_finish: bool = True
) -> None:
    """events.jsonl as it streams by; a bad or half-written line is reported and skipped.

    `progress`: read the start lines. They only matter for a run that did not end normally
    (which test was in flight), so for a completed run they are skipped unparsed.
    """
    if not path.exists():
        return
    gather.events_seen = True
    bad = 0
    loads = jsonio.loads
    tests, plain, plan, unplanned = gather.tests, gather.plain, gather.plan, gather.unplanned
    try:
        handle = open_regular(path)
    except OSError as err:  # unreadable: that column's problem, with the reason
        errors.append(f"events.jsonl: cannot read: {err.strerror or err}")
        return
    with handle:
        lines = _BoundedLines(handle, EVENT_LINE_CAP, drop=None if progress else _START_LINE)
        for line in lines:
            if line[:26] == COMPACT_PASS:
                fast = compact_pass(line)
                if fast is not None and fast[0] not in tests and fast[0] not in plain:
                    nodeid, duration = fast
                    if nodeid not in plan:
                        unplanned[nodeid] = None
                    plain[nodeid] = duration
                    continue
            try:
                event = loads(line)
                kind = event.get("event")
                nodeid = event.get("nodeid")
            except (ValueError, AttributeError):  # not JSON, or not an object
                bad += bool(line.strip())
                continue
            if kind == "pass" and isinstance(nodeid, str):
                # The hot path (most tests): every phase passed, the call among them, nothing else.
                duration = event.get("duration")
                if not isinstance(duration, int | float):
                    duration = 0.0
                if nodeid not in tests and nodeid not in plain:
                    if nodeid not in plan:
                        unplanned[nodeid] = None
                    plain[nodeid] = duration
                    continue
                _finish(gather.test(nodeid), {"call": duration}, event)  # a repeat of a known test
            elif kind == "finish" and isinstance(nodeid, str):
                # Logs written before the plugin wrote `pass` lines carry every test's passed phases here.
                passed = event.get("passed")
                if (
                    plain_finish
                    and passed
                    and "call" in passed
                    and nodeid not in tests
                    and nodeid not in plain
                    and not event.get("user_properties")
                ):
                    # The same as a `pass` line.
                    if nodeid not in plan:
                        unplanned[nodeid] = None
                    try:
                        plain[nodeid] = sum(passed.values())
                    except TypeError:
                        plain[nodeid] = sum(v for v in passed.values() if isinstance(v, int | float))
                    continue
                _finish(gather.test(nodeid), passed, event)
            elif kind == "report" and isinstance(nodeid, str):
                _report(gather.test(nodeid), event)
            elif kind == "start" and isinstance(nodeid, str):
                gather.test(nodeid).started = True
            elif kind == "timeout" and isinstance(nodeid, str):
                gather.timed_out[nodeid] = event.get("seconds")
                gather.test(nodeid)
            elif kind == "result" and isinstance(nodeid, str):
                # An imported cell (format 3): the result decided from its JUnit at import time.
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


def _report(test: _Test, event: dict[str, Any]) -> None:
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


def _finish(test: _Test, passed: Any, event: dict[str, Any]) -> None:
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


def junit_files(cell: Path) -> list[Path]:
    """junit.xml, and the files `harness import` put under junit/ (in name order)."""
    files = [cell / "junit.xml"] if (cell / "junit.xml").exists() else []
    folder = cell / JUNIT_DIR
    if folder.is_dir():
        files += sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ".xml")
    return files


# The JUnit fast path. What it buys: a testcase that simply passed is most of any report, and
# keeping it as a plain pass (an id and a time, like the event log's `pass` lines, decided in bulk
# by _plain_results) instead of attempts, a _Test and decide() per testcase takes about a third
# off the merge of imported JUnit (benchmarks/bench_import.py). It takes only what decide() would
# call a simple pass with nothing else to keep; tests/merge/test_importjunit.py holds it to the
# plain path (JUNIT_FAST_PATH off) on real reports of every dialect.
JUNIT_FAST_PATH = True


def _junit_plain_pass(case: JUnitCase) -> bool:
    """The testcase passed and says nothing else a result would keep: no result or retried
    element, no status (CTest's `run` aside), a time, and only bookkeeping properties."""
    if case.results or case.reruns or case.time is None:
        return False
    status = case.attrs.get("status")
    if status is not None and status != "run":
        return False
    return not case.properties or BOOKKEEPING.issuperset(map(_FIRST, case.properties))


def _recorded(case: JUnitCase, planned: tuple[str | None, Scope | None] | None) -> tuple[str | None, Scope | None]:
    """The feature and scope a plain pass's properties give (over the plan's)."""
    feature, scope = planned or (None, None)
    for key, value in case.properties:
        if key == "feature" and value:
            feature = sys.intern(value)
        elif key == "scope":
            scope = _SCOPES.get(value, scope)
    return feature, scope


def read_junit_files(
    files: list[Path],
    gather: Gather,
    errors: list[str],
    notes: list[str] | None = None,
    *,
    opener: Callable[[Path], BinaryIO] | None = None,
    reads: list[JUnitRead] | None = None,
    label: Callable[[Path], str] = lambda path: path.name,
) -> int:
    """Every testcase of every file; tests the event log already decided only lend their output.

    Ids are unique within a file (identity.IdentityRules); an id that an earlier file also has
    is a second report of that test, and the later file decides (docs/outcomes.md, "Repeats"):
    the earlier file's runs of it are dropped, never read as attempts. `notes` gets one line per
    file that shared ids with an earlier one. `opener`: how to open each file (harness import
    reads its inputs as it copies them); `reads` gets each file's JUnitRead (its counts); `label`
    names a file in the notes."""
    count = 0
    tests, plain = gather.tests, gather.plain
    junit_plain, plain_from, recorded = gather.junit_plain, gather.junit_plain_from, gather.recorded
    fast = JUNIT_FAST_PATH
    for index, path in enumerate(files):
        read = JUnitRead(path=path)
        rules = IdentityRules()
        replaced: dict[int, int] = {}  # earlier file -> how many of its tests this file decides
        pytest_phases: bool | None = None
        if reads is not None:
            reads.append(read)
        for case in iter_junit(path, read, opener(path) if opener is not None else None):
            count += 1
            if fast and _junit_plain_pass(case):
                nodeid, copy = rules.test_id(case, read)
                if nodeid in plain or copy:
                    continue  # the event log decided it; or a copy of the previous testcase
                earlier = plain_from.get(nodeid)
                if nodeid not in tests and (earlier is None or earlier != index):
                    if earlier is not None:  # an earlier file reported it too: this one decides
                        replaced[earlier] = replaced.get(earlier, 0) + 1
                    junit_plain[nodeid] = case.time  # type: ignore[assignment]
                    plain_from[nodeid] = index
                    if case.properties:
                        recorded[nodeid] = _recorded(case, gather.plan.get(nodeid))
                    continue
                runs = [Attempt(Phase.TEST, Status.PASSED, duration=case.time)]
            else:
                if pytest_phases is None:
                    pytest_phases = is_pytest(read)
                runs = normalise.case_attempts(case, pytest_phases=pytest_phases)
                nodeid, copy = rules.test_id(case, read)
                if nodeid in plain:
                    continue  # the event log decided it: it passed
            test = tests.get(nodeid)
            if test is None:
                test = gather.test(nodeid)
                earlier = plain_from.pop(nodeid, None)
                if earlier is not None:  # it looked plain so far: its pass is its first run
                    test.runs = [[Attempt(Phase.TEST, Status.PASSED, duration=junit_plain.pop(nodeid))]]
                    test.source = earlier
                    test.feature, test.scope = recorded.pop(nodeid, (None, None))
            if (case.system_out or case.system_err) and test.output is None:
                test.output = trim("\n".join(t for t in (case.system_out, case.system_err) if t), OUTPUT_CAP)
            if test.reported or copy:
                continue  # the event log decides and has the properties; JUnit adds only output
            if test.source != index:
                if test.source >= 0:  # an earlier file reported it too: this one decides
                    replaced[test.source] = replaced.get(test.source, 0) + 1
                    test.properties = None
                test.source, test.runs = index, [runs]
            else:
                test.runs.append(runs)  # type: ignore[union-attr]
                test.pytest_report = is_pytest(read)  # a repeat: how to read it depends on the report
            if case.properties:
                _add_properties(test, case.properties)
        errors.extend(e for e in read.errors if not e.endswith(": missing"))
        if notes is not None:
            for earlier, shared in replaced.items():
                notes.append(
                    f"{label(path)}: {shared} test id(s) also in {label(files[earlier])} (given before it):"
                    f" read as two runs of each test; the later file decides, the earlier file's results"
                    f" of them are left out"
                )
    # The plain passes join the event log's (never the same ids: those were skipped above).
    plain.update(junit_plain)
    junit_plain.clear()
    plain_from.clear()
    return count


def junit_ends_well(path: Path) -> bool:
    """Does the file end with the closing tag of its root (not cut off mid-write)?"""
    try:
        with open_regular(path) as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - 4096))
            tail = handle.read().rstrip()
    except OSError:
        return False
    return tail.endswith((b"</testsuites>", b"</testsuite>"))


def read_fault_logs(cell: Path, errors: list[str] | None = None) -> tuple[dict[str, str], set[str]]:
    """From the test processes' own logs: nodeid -> fatal signal ('Fatal Python error:
    Aborted'), and the last test each process started (it may have died in it before the
    controller could log its start)."""
    signals: dict[str, str] = {}
    last_started: set[str] = set()
    for path in sorted(cell.glob("faults-*.log")):
        current = None
        try:
            handle = io.TextIOWrapper(open_regular(path), encoding="utf-8", errors="replace")
        except OSError as err:
            if errors is not None:
                errors.append(f"{path.name}: cannot read: {err.strerror or err}")
            continue
        with handle:
            for line in handle:
                if line.startswith("compat-test-start: "):
                    current = line[len("compat-test-start: ") :].strip()
                    continue
                match = _FATAL_RE.match(line) or _WATCHDOG_RE.match(line)
                if match and current:
                    signals[current] = match.group(1)
        if current:
            last_started.add(current)
    return signals, last_started


# -- features ----------------------------------------------------------------------------------
class CellFeatures:
    """Which row a test belongs to: its recorded feature, the suites' folder rule for the
    project's own cells, the feature map for imported ones, else `unassigned`."""

    def __init__(self, manifest: Manifest, cell: Path, errors: list[str]) -> None:
        self.meta: dict[str, FeatureInfo] = dict(manifest.features)
        self.map: FeatureMap | None = None
        map_path = cell / FEATURE_MAP
        if map_path.exists():
            try:
                self.map = load_feature_map(map_path)
                for fid, info in self.map.features.items():
                    self.meta.setdefault(fid, FeatureInfo.from_json(info))
            except InputError as err:
                errors.append(f"{FEATURE_MAP}: {err}; every test goes to `{UNASSIGNED}`")
        self.own_suites = manifest.own_suites

    def of(self, nodeid: str, recorded: str | None) -> str:
        if recorded:
            return recorded
        if self.map is not None:
            return self.map.feature_of(nodeid)
        if self.own_suites:
            first, sep, _ = nodeid.partition("::")[0].partition("/")
            if sep and first in self.meta:
                return first
        return UNASSIGNED


# -- the cell ----------------------------------------------------------------------------------
def _parse_properties(properties: dict[str, Any] | None) -> dict[str, Any]:
    """Decode the suites' JSON perf figures (`perf.<name>`)."""
    if not properties:
        return {}
    for key, value in properties.items():
        if key.startswith("perf.") and isinstance(value, str):
            with contextlib.suppress(ValueError):
                properties[key] = jsonio.loads(value)
    return properties


def _event_attempts(test: _Test) -> list[Attempt]:
    """The event log's attempts: one passing attempt per phase that passed (carrying their
    time), then every other report in the order it came."""
    reported = {a.phase for a in test.attempts or () if a.status is not Status.RERUN}
    attempts = [
        Attempt(phase, Status.PASSED)
        for bit, phase in _PASSED_PHASES
        if test.passed & bit and phase not in reported  # a later failure of the phase replaces its pass
    ]
    if attempts:
        attempts[0].duration = round(test.passed_time, 6)
    return attempts + (test.attempts or [])


def _shared(cache: dict[tuple, TestResult], outcome: Outcome, duration: float | None, scope: Scope) -> TestResult:
    """Results that say only "<outcome>, in t seconds" are one shared (frozen) object per value:
    it saves their memory and makes them cheap to hand between processes."""
    key = (outcome, duration, scope)
    shared = cache.get(key)
    if shared is None:
        shared = cache[key] = TestResult(outcome=outcome, duration=duration, scope=scope)
    return shared


def _round_duration(seconds: float | None) -> float | None:
    """To 0.1 ms: what a reader needs, and equal results can then be shared."""
    return None if seconds is None else round(seconds, 4)


def _result(test: _Test, extra: list[Attempt], signal: str | None, cache: dict[tuple, TestResult]) -> TestResult:
    if test.decided is not None and not extra:
        decided = test.decided
        if decided.outcome is Outcome.PASSED and decided == TestResult(
            outcome=Outcome.PASSED, duration=decided.duration, scope=decided.scope
        ):
            return _shared(cache, Outcome.PASSED, decided.duration, decided.scope)
        return decided
    if (
        test.attempts is None
        and test.passed & 2
        and not extra
        and signal is None
        and test.user_properties is None
        and test.output is None
    ):
        # Every phase the log reported passed, the call among them, and nothing else is known:
        # decide() says PASSED for that (tests/merge/test_decide.py holds it to it); most tests take
        # this way, which skips building their attempts and shares equal results.
        return _shared(cache, Outcome.PASSED, _round_duration(test.passed_time), test.scope or Scope.BACKEND)
    if test.reported and not test.attempts and test.passed & 2:
        # Every report a pass, the call's among them: that pass says all there is to say.
        attempts = [Attempt(Phase.CALL, Status.PASSED, duration=round(test.passed_time, 6)), *extra]
    elif test.reported:
        attempts = _event_attempts(test) + extra
    elif test.runs is not None:
        # Each <testcase> of the id in its file is a run or a phase (identity decides which are).
        attempts = normalise.run_attempts(test.runs, pytest_reruns=test.pytest_report) + extra
    else:
        attempts = extra
    result = decide(attempts, signal=signal)
    outcome = result.outcome
    if test.user_properties:
        _add_properties(test, test.user_properties)
    duration = _round_duration(result.duration)
    scope = test.scope or Scope.BACKEND
    plain = (
        result.message is None
        and result.trace is None
        and result.skip_class is None
        and result.attempts == 1
        and not result.extra_messages
        and result.signal is None
        and result.strict is None
        and not test.properties
    )
    if plain:
        return _shared(cache, outcome, duration, scope)
    return replace(
        result,
        output=test.output if outcome not in (Outcome.PASSED, Outcome.SKIPPED, Outcome.NOT_RUN) else None,
        duration=duration,
        properties=_parse_properties(test.properties),
        scope=scope,
    )


def _plain_results(
    ids: list[str],
    plain: dict[str, float],
    plan: dict[str, tuple[str | None, Scope | None]],
    features: CellFeatures,
    cache: dict[tuple, TestResult],
    recorded: dict[str, tuple[str | None, Scope | None]] | None = None,
) -> tuple[list[TestResult], list[str]]:
    """The results and rows of the tests that only passed (most of a cell), in `plain`'s order.
    Built with map() over whole lists, not a loop per test: one shared result per duration.
    `ids`: list(plain), which the caller keeps too."""
    if not ids:
        return [], []
    planned = list(map(plan.get, ids, repeat((None, None))))
    if recorded:  # JUnit plain passes whose properties named their feature or scope
        planned = [recorded.get(n, p) for n, p in zip(ids, planned, strict=True)]
    planned_features, scopes = list(map(itemgetter(0), planned)), list(map(itemgetter(1), planned))
    durations = list(map(round, plain.values(), repeat(4)))  # to 0.1 ms, so equal results are shared
    passed, backend = Outcome.PASSED, Scope.BACKEND
    if scopes.count(None) + scopes.count(backend) == len(scopes):
        by_duration = {d: _shared(cache, passed, d, backend) for d in dict.fromkeys(durations)}
        results = list(map(by_duration.__getitem__, durations))
    else:  # some host or measurement tests among them
        results = [_shared(cache, passed, d, s or backend) for d, s in zip(durations, scopes, strict=True)]
    if None in planned_features:  # not in the plan, or planned without a feature
        planned_features = [f or features.of(n, None) for n, f in zip(ids, planned_features, strict=True)]
    return results, planned_features


def read_cell(path: Path, manifest: Manifest, errors: list[str], features: CellFeatures) -> CellResult:
    """The cell's tests, decided, in plan order (then any test only the results know)."""
    cell = CellDir(path)
    gather = Gather()
    completed = manifest.completed
    reader = cell_reader(manifest.cell_format)
    read_collected(cell.collected, gather, errors, reader)
    notes: list[str] = []
    read_events(cell.events, gather, errors, progress=not completed, plain_finish=reader.PLAIN_FINISH)
    files = junit_files(path)
    if not files:
        # An imported cell (format 3) keeps its JUnit only gzipped, for provenance: its log decides.
        if completed and manifest.cell_format != cellformat_v3.FORMAT:
            errors.append("junit.xml: missing although the run completed")
    elif not (gather.session_finished and gather.events_clean and all(junit_ends_well(f) for f in files)):
        read_junit_files(files, gather, errors, notes)
    # Otherwise the event log saw the whole session and holds every report (messages, traces,
    # properties, output): pytest wrote junit.xml from the same reports, so it adds nothing,
    # and its intact ending is all that is checked. A damaged file is read to say what is wrong.
    signals, last_started = read_fault_logs(path, errors)
    return decide_cell(path, manifest, gather, errors, features, gather.notes + notes, signals, last_started)


def decide_cell(
    path: Path,
    manifest: Manifest,
    gather: Gather,
    errors: list[str],
    features: CellFeatures,
    notes: list[str],
    signals: dict[str, str] | None = None,
    last_started: set[str] | None = None,
) -> CellResult:
    """Every test of what was gathered, decided: the plain passes in bulk, then the others."""
    status = manifest.status
    completed = manifest.completed
    signals = signals or {}
    if not completed:
        # Only a run that did not end normally has tests in flight; after a completed run a
        # process's last test finished (its events may just be lost).
        for nodeid in last_started or ():
            gather.test(nodeid).started = True
    exit_signal = manifest.exit.signal if manifest.exit else None
    cell_timed_out = status is CellStatus.TIMEOUT
    cache: dict[tuple, TestResult] = {}
    plan, plain, tests, no_plan = gather.plan, gather.plain, gather.tests, (None, None)
    # Plain passes first, all at once (the order of a cell's tests is free: the matrix sorts
    # them); `plain` and `tests` never share an id (gather.test() moves it out of plain).
    plain_ids = list(plain)
    results, test_features = _plain_results(plain_ids, plain, plan, features, cache, gather.recorded)
    others = [n for n in gather.order() if n not in plain]
    for nodeid in others:
        planned_feature, planned_scope = plan.get(nodeid, no_plan)
        test = tests.get(nodeid) or _Test()
        test.feature = test.feature or planned_feature
        test.scope = test.scope or planned_scope
        extra: list[Attempt] = []
        if nodeid in gather.timed_out:
            extra.append(normalise.hard_timeout(gather.timed_out[nodeid]))
        elif test.started and not test.finished:
            extra.append(normalise.in_flight(cell_timed_out=cell_timed_out, signal=signals.get(nodeid) or exit_signal))
        result = _result(test, extra, signals.get(nodeid), cache)
        test_features.append(features.of(nodeid, test.feature))
        results.append(result)
    nodeids = plain_ids + others
    if gather.events_seen and not gather.session_finished and completed:
        errors.append("events.jsonl: the session never finished; results may be incomplete")
    never_ran = sum(1 for r in results[len(plain_ids) :] if r.outcome is Outcome.NOT_RUN)  # plain ones passed
    if gather.events_seen and never_ran and completed:
        # e.g. pytest-xdist stops replacing crashed workers after 4 per worker; see output.log.
        errors.append(f"{never_ran} planned test(s) never ran although pytest finished (see output.log)")
    return CellResult(
        path=path,
        manifest=manifest,
        nodeids=nodeids,
        test_features=test_features,
        results=results,
        errors=errors,
        features=features.meta,
        notes=notes,
    )


def ingest_cell(path: Path) -> CellResult:
    """Read one cell dir into records. Raises InputError only when the dir has no manifest."""
    if not path.is_dir():
        raise InputError(f"{path}: not a directory", hint="pass cell dirs written by `harness run` or `harness import`")
    manifest = read_manifest(CellDir(path).manifest)
    errors: list[str] = []
    return read_cell(path, manifest, errors, CellFeatures(manifest, path, errors))
