"""One cell dir -> normalized test records (one per logical test).

Sources, in order of trust: events.jsonl (incremental, survives crashes), junit.xml (full
messages, properties), collected.json (the plan: what never ran is `not-run`), the
faults-*.log files (the signal that killed a process) and the manifest (how the run ended).
Every count is recomputed from these records; suite counters in XML are never read.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from harness.cell import CellDir, CellStatus, read_manifest
from harness.errors import InputError
from harness.junit import JUnitCase, read_junit
from harness.outcomes import Outcome, SkipClass, classify_reason, is_timeout_message

MESSAGE_CAP: Final = 2_000
TRACE_CAP: Final = 8_000
EVENT_LINE_CAP: Final = 8 << 20  # characters; the plugin's lines stay far below (texts trimmed to 32 KB)
_XDIST_CRASH_RE: Final = re.compile(r"worker '(gw\d+)' crashed while running '([^']+)'")
_FATAL_RE: Final = re.compile(r"^Fatal Python error: (.+?)\s*$")
# faulthandler's watchdog (the plugin's backstop for hangs that hold the GIL) logs this.
_WATCHDOG_RE: Final = re.compile(r"^(Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\))!\s*$")
_STRICT_XPASS: Final = "[XPASS(strict)]"


@dataclass
class TestRecord:
    nodeid: str
    feature: str
    outcome: Outcome
    skip_class: SkipClass | None = None
    link: str | None = None
    message: str | None = None
    trace: str | None = None
    duration: float | None = None
    attempts: int = 1
    properties: dict[str, Any] = field(default_factory=dict)
    scope: str = "backend"  # "host": host-side logic that does not speak for the backend's device
    strict: bool | None = None  # for xpassed: did pytest count it as a failure
    signal: str | None = None  # for crashed: the fatal signal, when known
    extra_messages: list[str] = field(default_factory=list)  # teardown errors, earlier attempts

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["outcome"] = self.outcome.value
        data["skip_class"] = self.skip_class.value if self.skip_class else None
        if self.scope == "backend":
            data.pop("scope")  # the default; only host-scope results carry it
        return {k: v for k, v in data.items() if v not in (None, [], {})}


@dataclass
class CellResult:
    path: Path
    manifest: dict[str, Any]
    records: list[TestRecord]
    errors: list[str]

    @property
    def cell_id(self) -> str:
        return self.manifest["cell_id"]


def trim(text: str | None, cap: int) -> str | None:
    if text is None or len(text) <= cap:
        return text
    head = cap // 4
    tail = cap - head
    return (
        f"{text[:head]}\n... [{len(text) - cap} characters trimmed; full text in the cell's files] ...\n{text[-tail:]}"
    )


# -- sources -----------------------------------------------------------------------------
def read_events(path: Path, errors: list[str]) -> list[dict[str, Any]]:
    """Read events.jsonl; a bad or half-written line is reported and skipped, not fatal."""
    if not path.exists():
        return []
    events: list[dict[str, Any]] = []
    bad = too_long = 0
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        while line := handle.readline(EVENT_LINE_CAP):
            if len(line) >= EVENT_LINE_CAP and not line.endswith("\n"):
                too_long += 1  # the plugin never writes such a line: skip it without holding it
                while (rest := handle.readline(EVENT_LINE_CAP)) and not rest.endswith("\n"):
                    pass
                continue
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if isinstance(record, dict) and "event" in record:
                events.append(record)
            else:
                bad += 1
    if bad:
        errors.append(f"events.jsonl: {bad} unreadable line(s) skipped (a writer died mid-line?)")
    if too_long:
        errors.append(f"events.jsonl: {too_long} line(s) over {EVENT_LINE_CAP >> 20} MB skipped")
    return events


def read_collected(path: Path, errors: list[str]) -> list[dict[str, str]]:
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        tests = data["tests"]
        for err in data.get("collect_errors") or []:
            errors.append(f"collection error in {err.get('nodeid')}: {trim(err.get('message'), 300)}")
        return [t for t in tests if isinstance(t, dict) and isinstance(t.get("nodeid"), str)]
    except (OSError, ValueError, KeyError, TypeError) as err:
        errors.append(f"collected.json: unreadable ({err}); the planned test list is unknown")
        return []


def read_fault_logs(cell: Path) -> tuple[dict[str, str], set[str]]:
    """From the test processes' own logs: nodeid -> fatal signal ('Fatal Python error:
    Aborted'), and the last test each process started (it may have died in it before the
    controller could log its start)."""
    signals: dict[str, str] = {}
    last_started: set[str] = set()
    for path in sorted(cell.glob("faults-*.log")):
        current = None
        with path.open("r", encoding="utf-8", errors="replace") as handle:
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


def junit_nodeid(case: JUnitCase) -> str:
    """The pytest node id of a JUnit testcase: recorded property first, else rebuilt."""
    recorded = case.property("nodeid")
    if recorded:
        return recorded
    if case.file:
        module = case.file.removesuffix(".py").replace("/", ".")
        rest = case.classname[len(module) :].lstrip(".") if case.classname.startswith(module) else ""
        parts = [case.file, *(rest.split(".") if rest else []), case.name]
        return "::".join(parts)
    if case.classname:
        pieces = case.classname.split(".")
        classes = [p for p in pieces if p[:1].isupper()]
        module = [p for p in pieces if not p[:1].isupper()]
        path = "/".join(module) + ".py" if module else case.classname
        return "::".join([path, *classes, case.name])
    return case.name


def feature_of(nodeid: str) -> str:
    first = nodeid.split("::", 1)[0]
    return first.split("/", 1)[0] if "/" in first else ""


# -- outcome rules -----------------------------------------------------------------------
def _skip_details(record: TestRecord, reason: str | None) -> None:
    skip_class, link, text = classify_reason(reason)
    record.skip_class = skip_class
    record.link = link
    record.message = trim(text or reason, MESSAGE_CAP)


def _from_events(record: TestRecord, reports: list[dict[str, Any]]) -> None:
    """Apply pytest's phase reports (setup/call/teardown, plus reruns) to a record."""
    reruns = [r for r in reports if r.get("outcome") == "rerun"]
    final = [r for r in reports if r.get("outcome") != "rerun"]
    phases = {r.get("when"): r for r in final}
    record.duration = round(sum(float(r.get("duration") or 0) for r in final), 6)
    record.attempts = 1 + len({r.get("time") for r in reruns if r.get("when") == "call"} or ())
    for r in final:
        props = r.get("user_properties") or []
        for pair in props:
            if isinstance(pair, list) and len(pair) == 2:
                record.properties[str(pair[0])] = pair[1]
    crash = next((r for r in final if _XDIST_CRASH_RE.search(r.get("message") or "")), None)
    setup, call, teardown = phases.get("setup"), phases.get("call"), phases.get("teardown")
    if crash is not None:
        record.outcome = Outcome.CRASHED
        record.message = crash.get("message")
        record.trace = trim(crash.get("longrepr"), TRACE_CAP)
        return
    if setup and setup["outcome"] == "failed":
        record.outcome = Outcome.TIMEOUT if is_timeout_message(setup.get("message")) else Outcome.ERROR
        record.message = trim(setup.get("message"), MESSAGE_CAP)
        record.trace = trim(setup.get("longrepr"), TRACE_CAP)
    elif setup and setup["outcome"] == "skipped":
        if setup.get("wasxfail") is not None:
            record.outcome = Outcome.XFAILED
            _skip_details(record, setup.get("wasxfail"))
        else:
            record.outcome = Outcome.SKIPPED
            _skip_details(record, setup.get("skip_reason") or setup.get("message"))
    elif call is not None:
        message = call.get("message")
        if call["outcome"] == "failed":
            if (message or "").startswith(_STRICT_XPASS):
                record.outcome, record.strict = Outcome.XPASSED, True
                _skip_details(record, message[len(_STRICT_XPASS) :].strip())
            elif is_timeout_message(message):
                record.outcome = Outcome.TIMEOUT
            else:
                record.outcome = Outcome.FAILED
            if record.outcome is not Outcome.XPASSED:
                record.message = trim(message, MESSAGE_CAP)
            record.trace = trim(call.get("longrepr"), TRACE_CAP)
        elif call["outcome"] == "skipped":
            if call.get("wasxfail") is not None:
                record.outcome = Outcome.XFAILED
                _skip_details(record, call.get("wasxfail"))
            else:
                record.outcome = Outcome.SKIPPED
                _skip_details(record, call.get("skip_reason") or message)
        elif call.get("wasxfail") is not None:
            record.outcome, record.strict = Outcome.XPASSED, False
            _skip_details(record, call.get("wasxfail"))
        else:
            record.outcome = Outcome.PASSED
    if teardown and teardown["outcome"] == "failed":
        text = f"teardown: {teardown.get('message')}"
        if record.outcome in (Outcome.PASSED, Outcome.XPASSED, Outcome.SKIPPED, Outcome.XFAILED):
            record.outcome = Outcome.ERROR
            record.message = trim(text, MESSAGE_CAP)
            record.trace = trim(teardown.get("longrepr"), TRACE_CAP)
        else:
            record.extra_messages.append(trim(text, MESSAGE_CAP) or "")
    if reruns:
        first = trim(reruns[0].get("message"), MESSAGE_CAP) or "failed attempt"
        if record.outcome is Outcome.PASSED:
            record.outcome = Outcome.FLAKY
            record.message = first
            record.trace = trim(reruns[0].get("longrepr"), TRACE_CAP)
        record.extra_messages.extend(
            trim(r.get("message"), MESSAGE_CAP) or "" for r in reruns if r.get("when") == "call"
        )


def _from_junit(record: TestRecord, cases: list[JUnitCase]) -> None:
    """Outcome from JUnit alone (no event log): other tools' files, or a lost log."""
    failures = [r for c in cases for r in c.results if r.kind == "failure"]
    errors = [r for c in cases for r in c.results if r.kind == "error"]
    skips = [r for c in cases for r in c.results if r.kind == "skipped"]
    flaky = [r for c in cases for r in c.reruns if r.kind.startswith("flaky")]
    reruns = [r for c in cases for r in c.reruns if r.kind.startswith("rerun")]
    times = [c.time for c in cases if c.time is not None]
    record.duration = sum(times) if times else None  # unknown stays unknown, not 0 s
    record.attempts = max(len(cases), 1) + len(flaky) + len(reruns)
    first = failures[0] if failures else errors[0] if errors else None
    if len(cases) > 1 and not cases[-1].results and not skips:
        # pytest-rerunfailures writes one <testcase> per attempt and the last one passed:
        # flaky, not several passes (16.7 even leaves the failed attempts empty).
        record.outcome = Outcome.FLAKY
        if first is None:
            record.message = "failed, then passed on a rerun (junit.xml keeps no text of the failed attempt)"
        else:
            record.message, record.trace = trim(first.message, MESSAGE_CAP), trim(first.text, TRACE_CAP)
        return
    if failures:
        msg = failures[0].message or ""
        if msg.startswith(_STRICT_XPASS):
            record.outcome, record.strict = Outcome.XPASSED, True
            _skip_details(record, msg[len(_STRICT_XPASS) :].strip())
            first = None
        else:
            record.outcome = Outcome.TIMEOUT if is_timeout_message(msg) else Outcome.FAILED
        for err in errors:
            record.extra_messages.append(trim(err.message, MESSAGE_CAP) or "")
    elif errors:
        msg = errors[0].message or ""
        if _XDIST_CRASH_RE.search(msg):
            record.outcome = Outcome.CRASHED
        else:
            record.outcome = Outcome.TIMEOUT if is_timeout_message(msg) else Outcome.ERROR
    elif skips:
        skip = skips[0]
        if skip.type == "pytest.xfail":
            record.outcome = Outcome.XFAILED
        else:
            record.outcome = Outcome.SKIPPED
        _skip_details(record, skip.message or skip.text)
    elif flaky:
        record.outcome = Outcome.FLAKY
        record.message = trim(flaky[0].message or flaky[0].text, MESSAGE_CAP)
        record.trace = trim(flaky[0].text, TRACE_CAP)
    else:
        record.outcome = Outcome.PASSED
    if first is not None:
        record.message = trim(first.message, MESSAGE_CAP)
        record.trace = trim(first.text, TRACE_CAP)
    record.extra_messages.extend(trim(r.message, MESSAGE_CAP) or "" for r in reruns)


def _enrich_from_junit(record: TestRecord, cases: list[JUnitCase]) -> None:
    """Events decide the outcome; JUnit adds full failure text and properties."""
    for case in cases:
        for key, value in case.properties:
            record.properties.setdefault(key, value)
    if record.outcome in (Outcome.FAILED, Outcome.ERROR, Outcome.TIMEOUT, Outcome.FLAKY):
        body = next((r for c in cases for r in c.results if r.kind in ("failure", "error")), None)
        if body is not None and body.text and not record.trace:
            record.trace = trim(body.text, TRACE_CAP)


def _parse_properties(record: TestRecord) -> None:
    """Drop bookkeeping properties; decode JSON perf figures."""
    record.properties.pop("nodeid", None)
    record.properties.pop("feature", None)
    if record.properties.pop("scope", None) == "host":
        record.scope = "host"
    for key, value in list(record.properties.items()):
        if key.startswith("perf.") and isinstance(value, str):
            with contextlib.suppress(ValueError):
                record.properties[key] = json.loads(value)


# -- the cell ----------------------------------------------------------------------------
def ingest_cell(path: Path) -> CellResult:
    """Read one cell dir into records. Raises InputError only when the dir has no manifest."""
    cell = CellDir(path)
    if not path.is_dir():
        raise InputError(f"{path}: not a directory", hint="pass cell dirs written by `harness run`")
    manifest = read_manifest(cell.manifest)
    errors: list[str] = []
    collected = read_collected(cell.collected, errors)
    events = read_events(cell.events, errors)
    junit = read_junit(cell.junit)
    status = manifest.get("status")
    if not cell.junit.exists() and status == CellStatus.COMPLETED.value:
        errors.append("junit.xml: missing although the run completed")
    errors.extend(e for e in junit.errors if not e.endswith(": missing"))  # said above when it matters

    order: list[str] = []
    features: dict[str, str] = {}
    host_scope: set[str] = set()
    for test in collected:
        order.append(test["nodeid"])
        features[test["nodeid"]] = test.get("feature") or feature_of(test["nodeid"])
        if test.get("scope") == "host":
            host_scope.add(test["nodeid"])
    by_node: dict[str, list[dict[str, Any]]] = defaultdict(list)
    started: set[str] = set()
    finished: set[str] = set()
    timed_out: dict[str, dict[str, Any]] = {}
    session_finished = False
    for event in events:
        kind, nodeid = event.get("event"), event.get("nodeid")
        if kind == "report" and nodeid:
            by_node[nodeid].append(event)
        elif kind == "start" and nodeid:
            started.add(nodeid)
        elif kind == "finish" and nodeid:
            finished.add(nodeid)
        elif kind == "timeout" and nodeid:
            timed_out[nodeid] = event
        elif kind == "session_finish":
            session_finished = True
        if nodeid and nodeid not in features:
            order.append(nodeid)
            features[nodeid] = feature_of(nodeid)
    cases_by_node: dict[str, list[JUnitCase]] = defaultdict(list)
    for case in junit.cases:
        nodeid = junit_nodeid(case)
        cases_by_node[nodeid].append(case)
        if nodeid not in features:
            order.append(nodeid)
            features[nodeid] = case.property("feature") or feature_of(nodeid)
    signals, last_started = read_fault_logs(path)
    if status != CellStatus.COMPLETED.value:
        # Only a run that did not end normally has tests in flight; after a completed run a
        # process's last test finished (its events may just be lost).
        started |= last_started
    exit_info = manifest.get("exit") or {}

    records: list[TestRecord] = []
    for nodeid in order:
        record = TestRecord(nodeid=nodeid, feature=features[nodeid], outcome=Outcome.NOT_RUN)
        if nodeid in host_scope:
            record.scope = "host"
        reports = by_node.get(nodeid)
        cases = cases_by_node.get(nodeid, [])
        if reports:
            _from_events(record, reports)
            _enrich_from_junit(record, cases)
        elif cases:
            _from_junit(record, cases)
        if nodeid in timed_out:
            record.outcome = Outcome.TIMEOUT
            seconds = timed_out[nodeid].get("seconds")
            record.message = f"Timeout: hard limit of {seconds} s reached; the process was ended"
        elif nodeid in started and nodeid not in finished and not _has_verdict(record):
            # It was running when its process died (or the cell was stopped).
            if status == CellStatus.TIMEOUT.value:
                record.outcome = Outcome.TIMEOUT
                record.message = "Timeout: the cell's overall time limit stopped the run during this test"
            else:
                record.outcome = Outcome.CRASHED
                sig = signals.get(nodeid) or exit_info.get("signal")
                record.signal = sig
                record.message = f"the test process died{f' ({sig})' if sig else ''} while running this test"
        if record.outcome is Outcome.CRASHED and not record.signal:
            record.signal = signals.get(nodeid)
            if record.signal and record.message and record.signal not in record.message:
                record.message = f"{record.message} ({record.signal})"
        if record.outcome is Outcome.CRASHED and (record.signal or "").startswith("Timeout ("):
            # Not a crash: the watchdog ended a test stuck in native code holding the GIL.
            record.outcome, record.signal = Outcome.TIMEOUT, None
            record.message = "Timeout: hung past the hard limit holding the interpreter; the watchdog ended the process"
        if record.feature == "" and record.properties.get("feature"):
            record.feature = str(record.properties["feature"])
        _parse_properties(record)
        records.append(record)
    if events and not session_finished and status == CellStatus.COMPLETED.value:
        errors.append("events.jsonl: the session never finished; results may be incomplete")
    never_ran = sum(1 for r in records if r.outcome is Outcome.NOT_RUN)
    if events and never_ran and status == CellStatus.COMPLETED.value:
        # e.g. pytest-xdist stops replacing crashed workers after 4 per worker; see output.log.
        errors.append(f"{never_ran} planned test(s) never ran although pytest finished (see output.log)")
    return CellResult(path=path, manifest=manifest, records=records, errors=errors)


def _has_verdict(record: TestRecord) -> bool:
    return record.outcome is not Outcome.NOT_RUN
