"""pytest plugin writing a cell's incremental records (imports only pytest and the stdlib).

Enabled when COMPAT_CELL_DIR is set. It writes into that directory:
- collected.json: the planned test ids by feature and scope, at the end of collection;
- events.jsonl: one JSON object per line, flushed as it happens (session start, each test's
  start, every phase report that did not simply pass, the test's finish carrying the phases
  that passed, or `pass` for a test that only passed; session finish), so a crash still says
  which test was running;
- faults-<worker>.log: faulthandler output, naming the fatal signal of a crashed process;
It also adds `nodeid` and `feature` to every test's JUnit properties, and runs a hard
watchdog (COMPAT_HARD_TIMEOUT seconds per test) that records a timeout event and ends a
process stuck in native code; under pytest-xdist that costs one test, not the run.
"""

from __future__ import annotations

import faulthandler
import json
import os
import threading
import time

import pytest

CELL_DIR_ENV = "COMPAT_CELL_DIR"
HARD_TIMEOUT_ENV = "COMPAT_HARD_TIMEOUT"
TIMEOUT_EXIT_CODE = 124
_BACKSTOP_MARGIN = 5.0  # seconds after the hard timeout before faulthandler ends a GIL-bound hang
# Properties every test carries for readers of bare JUnit (the plugin's own, and the suites'
# feature/backend/device): junit.xml keeps them; the event log leaves them out, since the
# collected list and the manifest already say them once per test and once per cell.
_JUNIT_ONLY_PROPERTIES = frozenset({"nodeid", "feature", "scope", "backend", "device"})
_TEXT_HEAD = 4_000
_TEXT_TAIL = 28_000


def _trim(text: str | None) -> str | None:
    """The cell's cap on one record's text, as it is written. Not harness/model.py's `trim`, which caps
    again, smaller, for matrix.json: this plugin imports only pytest and the stdlib."""
    if text is None or len(text) <= _TEXT_HEAD + _TEXT_TAIL:
        return text
    cut = len(text) - _TEXT_HEAD - _TEXT_TAIL
    return f"{text[:_TEXT_HEAD]}\n... [{cut} characters trimmed] ...\n{text[-_TEXT_TAIL:]}"


def _append_line(path: str, record: dict) -> None:
    """Append one JSON line with O_APPEND so controller and workers never interleave."""
    data = (json.dumps(record, default=str) + "\n").encode("utf-8", "replace")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _feature_of(item: pytest.Item) -> str:
    marker = item.get_closest_marker("feature")
    if marker and marker.args:
        return str(marker.args[0])
    first = item.nodeid.split("::", 1)[0].split("/", 1)
    return first[0] if len(first) > 1 else ""


def _scope_of(item: pytest.Item) -> str:
    """What a test speaks for. `host`: host-side logic (formats, API presence), not the backend's
    device support; the roll-up uses it only when nothing else ran. `measurement`: it records
    figures and asserts nothing on this device; shown as figures, never counted as a pass."""
    if item.get_closest_marker("host") is not None:
        return "host"
    if item.get_closest_marker("measurement") is not None:
        return "measurement"
    return "backend"


def _crash_message(report: pytest.TestReport) -> str | None:
    longrepr = report.longrepr
    if longrepr is None:
        return None
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return str(crash.message)
    text = str(longrepr).strip().splitlines()
    return text[-1] if text else None


def _output_of(report: pytest.TestReport) -> str | None:
    text = "".join(
        f"----- {title} -----\n{content}\n" for title, content in getattr(report, "sections", ()) if content.strip()
    )
    return _trim(text) if text else None


def _worker_of(report: pytest.TestReport) -> str | None:
    gateway = getattr(getattr(report, "node", None), "gateway", None)
    return getattr(gateway, "id", None)


class CellRecorder:
    def __init__(self, config: pytest.Config, cell_dir: str) -> None:
        self.config = config
        self.cell_dir = cell_dir
        self.events_path = os.path.join(cell_dir, "events.jsonl")
        workerinput = getattr(config, "workerinput", None)
        self.worker = workerinput["workerid"] if workerinput else None
        # The process that sees every report (the xdist controller, or plain pytest).
        self.is_reporter = self.worker is None
        self.runs_tests = not (config.getoption("dist", "no") != "no" and self.worker is None)
        self.hard_timeout = float(os.environ.get(HARD_TIMEOUT_ENV, "0") or 0)
        self.collect_errors: list[dict] = []
        self._fault_file = None
        self._passed: dict[str, dict] = {}  # nodeid -> its passed phases, until its finish line
        self._reported: set[str] = set()  # tests with a report line of their own, until their finish

    # -- helpers -------------------------------------------------------------------
    def event(self, kind: str, **fields: object) -> None:
        record = {"event": kind, "time": time.time(), **fields}
        if self.worker:
            record["worker"] = self.worker
        _append_line(self.events_path, record)

    def enable_faulthandler(self) -> None:
        name = self.worker or "main"
        path = os.path.join(self.cell_dir, f"faults-{name}.log")
        self._fault_file = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
        faulthandler.enable(file=self._fault_file, all_threads=True)

    def mark_fault_log(self, nodeid: str) -> None:
        if self._fault_file is not None:
            self._fault_file.write(f"compat-test-start: {nodeid}\n")
            self._fault_file.flush()

    # -- hooks ---------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # After every pytest_configure, so pytest's own faulthandler setup does not replace ours.
        if self.runs_tests:
            self.enable_faulthandler()
        if self.is_reporter:
            self.event("session_start", pid=os.getpid(), rootdir=str(session.config.rootpath))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors.append({"nodeid": report.nodeid, "message": _trim(str(report.longrepr))})

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        item.user_properties.append(("nodeid", item.nodeid))
        item.user_properties.append(("feature", _feature_of(item)))
        scope = _scope_of(item)
        if scope != "backend":
            item.user_properties.append(("scope", scope))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.worker not in (None, "gw0"):
            return
        if self.worker is None and not self.runs_tests:
            return  # the xdist controller collects nothing; gw0 writes the list
        # One list of ids per (feature, scope), in collection order: a suite has a handful of
        # features and up to tens of thousands of tests, and the merge then reads plain strings,
        # not an object per test. The small fields come first, so a reader can stop early.
        groups: dict[tuple[str, str], list[str]] = {}
        for item in session.items:
            groups.setdefault((_feature_of(item), _scope_of(item)), []).append(item.nodeid)
        payload = {
            "count": len(session.items),
            "collect_errors": self.collect_errors,
            "groups": [{"feature": feature, "scope": scope, "tests": ids} for (feature, scope), ids in groups.items()],
        }
        path = os.path.join(self.cell_dir, "collected.json")
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, separators=(",", ":"))
        os.replace(tmp, path)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        self.mark_fault_log(item.nodeid)
        timer = None
        if self.hard_timeout > 0:
            timer = threading.Timer(self.hard_timeout, self._hard_timeout, args=(item.nodeid,))
            timer.daemon = True
            timer.start()
            if self._fault_file is not None:
                # Backstop for a hang that holds the GIL (the timer thread then never runs):
                # faulthandler's C watchdog logs "Timeout (h:mm:ss)!" and ends the process.
                faulthandler.dump_traceback_later(
                    self.hard_timeout + _BACKSTOP_MARGIN, exit=True, file=self._fault_file
                )
        try:
            yield
        finally:
            if timer is not None:
                timer.cancel()
                faulthandler.cancel_dump_traceback_later()

    def _hard_timeout(self, nodeid: str) -> None:
        self.event("timeout", nodeid=nodeid, seconds=self.hard_timeout)
        if self._fault_file is not None:
            faulthandler.dump_traceback(file=self._fault_file, all_threads=True)
        os._exit(TIMEOUT_EXIT_CODE)

    def pytest_runtest_logstart(self, nodeid: str, location: tuple) -> None:
        if self.is_reporter:
            self.event("start", nodeid=nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.is_reporter:
            return
        properties = [
            list(p) for p in getattr(report, "user_properties", []) if p and p[0] not in _JUNIT_ONLY_PROPERTIES
        ] or None
        if report.passed and getattr(report, "wasxfail", None) is None:
            # Most reports: a phase that passed. Folded into the test's `finish` line (one line
            # per test instead of three); if the process dies first, the test is in flight anyway.
            pending = self._passed.setdefault(report.nodeid, {"phases": {}, "properties": None})
            pending["phases"][report.when] = round(getattr(report, "duration", 0.0) or 0.0, 6)
            pending["properties"] = properties or pending["properties"]
            return
        self._reported.add(report.nodeid)
        skip_reason = None
        if report.skipped and isinstance(report.longrepr, tuple):
            skip_reason = str(report.longrepr[2])
        self.event(
            "report",
            nodeid=report.nodeid,
            when=report.when,
            outcome=report.outcome,
            duration=round(getattr(report, "duration", 0.0) or 0.0, 6),
            wasxfail=getattr(report, "wasxfail", None),
            message=_trim(_crash_message(report)) if not report.passed else None,
            longrepr=_trim(report.longreprtext) if report.failed or report.outcome == "rerun" else None,
            skip_reason=skip_reason,
            worker=_worker_of(report),
            user_properties=properties,
            # What the test printed, next to a failure (JUnit's system-out/err): the event log
            # then holds everything the matrix shows, and a complete log makes junit.xml redundant.
            output=_output_of(report) if report.failed or report.outcome == "rerun" else None,
        )

    def pytest_runtest_logfinish(self, nodeid: str, location: tuple) -> None:
        if not self.is_reporter:
            return
        pending = self._passed.pop(nodeid, None)
        reported = nodeid in self._reported
        self._reported.discard(nodeid)
        if pending is None:
            self.event("finish", nodeid=nodeid)
        elif "call" in pending["phases"] and not reported and not pending["properties"]:
            # Most tests: every phase passed, the call among them, and nothing else to say. One
            # short line (the merge reads tens of thousands of these per cell).
            self.event("pass", nodeid=nodeid, duration=round(sum(pending["phases"].values()), 6))
        else:
            self.event("finish", nodeid=nodeid, passed=pending["phases"], user_properties=pending["properties"])

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.is_reporter:
            self.event("session_finish", exitstatus=int(exitstatus))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("compat_cell_dir", "directory for the cell's events and collected list")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "feature(id): the feature row this test belongs to")
    config.addinivalue_line("markers", "host: checks host-side logic only; does not speak for the backend")
    config.addinivalue_line("markers", "measurement: records figures only; shown as figures, not counted as a pass")
    cell_dir = os.environ.get(CELL_DIR_ENV) or config.getini("compat_cell_dir")
    if not cell_dir:
        return
    os.makedirs(cell_dir, exist_ok=True)
    recorder = CellRecorder(config, cell_dir)
    config.pluginmanager.register(recorder, "compat_cell_recorder")


def _pin_worker_device() -> None:
    """On multi-GPU hosts each xdist worker sees one device (COMPAT_PIN_VAR, e.g.
    CUDA_VISIBLE_DEVICES, set to one of COMPAT_PIN_DEVICES). Runs at import, before torch."""
    var = os.environ.get("COMPAT_PIN_VAR")
    devices = [d for d in os.environ.get("COMPAT_PIN_DEVICES", "").split(",") if d]
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if var and devices and worker.startswith("gw") and worker[2:].isdigit():
        os.environ[var] = devices[int(worker[2:]) % len(devices)]


_pin_worker_device()
