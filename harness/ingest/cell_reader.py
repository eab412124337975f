"""One cell dir -> one record per logical test, in bounded memory.

Sources, in order of trust: events.jsonl (incremental, survives crashes), the JUnit files
(junit.xml, or the imported files under junit/), collected.json (the plan: what never ran is
`not-run`), the faults-*.log files (the signal that killed a process) and the manifest (how
the run ended). Each source is read once, as a stream, and turned into attempts
(harness/ingest/attempts.py); ingest/decide.py's decide() judges every test from its attempts. Memory grows
with the number of tests, never with the bytes of output in the files: texts are capped as
they are read. Every count is recomputed from these records; suite counters in XML are
never read.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from harness import jsonio
from harness.cell import CellDir, CellStatus, FeatureInfo, Manifest, read_manifest
from harness.errors import InputError
from harness.ingest import attempts as normalise
from harness.ingest.cellformat import IMPORTED, CellReader, cell_reader
from harness.ingest.decide import Attempt, Phase, Said, Status, decide, is_plain_pass, said_of, says_nothing_more
from harness.ingest.device_evidence import accelerator_of, judged
from harness.ingest.eventlog_reader import read_events
from harness.ingest.featuremap import FeatureMap, load_feature_map
from harness.ingest.junit_reader import junit_ends_well, junit_files, read_junit_files
from harness.ingest.plainstore import Gather, TestState, add_properties, plain_results, round_duration, shared_result
from harness.model import EVIDENCE, UNASSIGNED, TestResult, trim
from harness.outcomes import Outcome, Scope
from harness.regular_file import open_regular, read_regular

FEATURE_MAP: Final = "featuremap.toml"
_FATAL_RE: Final = re.compile(r"^Fatal Python error: (.+?)\s*$")
# faulthandler's watchdog (the plugin's backstop for hangs that hold the GIL) logs this.
_WATCHDOG_RE: Final = re.compile(r"^(Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\))!\s*$")
_PASSED_PHASES: Final = ((1, Phase.SETUP), (2, Phase.CALL), (4, Phase.TEARDOWN))


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


# -- sources -------------------------------------------------------------------------------------
def read_collected(path: Path, gather: Gather, errors: list[str], reader: CellReader) -> None:
    """The plan: every collected test with its feature and scope (each cell format says how it
    lists them: harness/ingest/cellformat_v1.py, cellformat_v2.py), and the modules that failed to
    import (each an error row of its own)."""
    if not path.exists():
        return
    try:
        data = jsonio.loads(read_regular(path))
        if not isinstance(data, dict):
            raise TypeError(f"a {type(data).__name__}, not an object")
        reader.read_collected_tests(data, gather.plan)
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
    """Decode the suites' JSON properties: perf figures (`perf.<name>`) and the evidence of device work
    (`evidence`: kept as an object only when it decodes to one; anything else stays the text it was)."""
    if not properties:
        return {}
    for key, value in properties.items():
        if (key.startswith("perf.") or key == EVIDENCE) and isinstance(value, str):
            with contextlib.suppress(ValueError):
                decoded = jsonio.loads(value)
                if key != EVIDENCE or isinstance(decoded, dict):
                    properties[key] = decoded
    return properties


def _event_attempts(test: TestState) -> list[Attempt]:
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


def _result(
    test: TestState, extra: list[Attempt], signal: str | None, cache: dict[tuple, TestResult], *, plain: bool = False
) -> TestResult:
    """The test decided from what was gathered. Its shortcuts (a bare pass shared, not decided;
    `plain` skips them) ask decide.is_plain_pass()."""
    if test.decided is not None and not extra:
        decided = test.decided
        if is_plain_pass(said_of(decided)):  # one shared object per (duration, scope), as a pass line's
            return shared_result(cache, Outcome.PASSED, decided.duration, decided.scope)
        return decided
    call_passed = bool(test.passed & 2) and not plain
    said = Said(
        call_passed,
        round_duration(test.passed_time),
        others=test.attempts or extra,
        properties=test.user_properties,
        output=test.output,
        signal=signal,
    )
    if is_plain_pass(said):
        # Every phase the log reported passed, the call among them, and nothing else is known:
        # decide() says PASSED for that (tests/ingest/test_decide.py holds it to it); most tests take
        # this way, which skips building their attempts and shares equal results.
        return shared_result(cache, Outcome.PASSED, said.duration, test.scope or Scope.BACKEND)
    if test.reported and is_plain_pass(Said(call_passed, said.duration, others=test.attempts)):
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
        add_properties(test, test.user_properties)
    duration = round_duration(result.duration)
    scope = test.scope or Scope.BACKEND
    if says_nothing_more(said_of(result, properties=test.properties)):
        return shared_result(cache, outcome, duration, scope)
    return replace(
        result,
        output=test.output if outcome not in (Outcome.PASSED, Outcome.SKIPPED, Outcome.NOT_RUN) else None,
        duration=duration,
        properties=_parse_properties(test.properties),
        scope=scope,
    )


def read_cell(
    path: Path, manifest: Manifest, errors: list[str], features: CellFeatures, *, plain: bool = False
) -> CellResult:
    """The cell's tests, decided, in plan order (then any test only the results know). `plain`: each
    reader's plain path, without its shortcuts (eventlog_reader, junit_reader), for tests."""
    cell = CellDir(path)
    gather = Gather()
    completed = manifest.completed
    reader = cell_reader(manifest.cell_format)
    read_collected(cell.collected, gather, errors, reader)
    notes: list[str] = []
    read_events(cell.events, gather, errors, progress=not completed, plain_finish=reader.PLAIN_FINISH, plain=plain)
    files = junit_files(path)
    if not files:
        # An imported cell (format 3 or 4) keeps its JUnit only gzipped, for provenance: its log decides.
        if completed and manifest.cell_format not in IMPORTED:
            errors.append("junit.xml: missing although the run completed")
    elif not (gather.session_finished and gather.events_clean and all(junit_ends_well(f) for f in files)):
        read_junit_files(files, gather, errors, notes, plain=plain)
    # Otherwise the event log saw the whole session and holds every report (messages, traces,
    # properties, output): pytest wrote junit.xml from the same reports, so it adds nothing,
    # and its intact ending is all that is checked. A damaged file is read to say what is wrong.
    signals, last_started = read_fault_logs(path, errors)
    return decide_cell(
        path, manifest, gather, errors, features, gather.notes + notes, signals, last_started, plain=plain
    )


def decide_cell(
    path: Path,
    manifest: Manifest,
    gather: Gather,
    errors: list[str],
    features: CellFeatures,
    notes: list[str],
    signals: dict[str, str] | None = None,
    last_started: set[str] | None = None,
    *,
    plain: bool = False,
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
    # a claimed pass there needs its evidence of device work (plain passes carry no claim: never claimed)
    accelerator = accelerator_of(manifest.environment)
    plan, plain, tests, no_plan = gather.plan, gather.plain, gather.tests, (None, None)
    # Plain passes first, all at once (the order of a cell's tests is free: the matrix sorts
    # them); `plain` and `tests` never share an id (gather.test() moves it out of plain).
    plain_ids = list(plain)
    results, test_features = plain_results(plain_ids, plain, plan, features.of, cache, gather.recorded)
    others = [n for n in gather.order() if n not in plain]
    for nodeid in others:
        planned_feature, planned_scope = plan.get(nodeid, no_plan)
        test = tests.get(nodeid) or TestState()
        test.feature = test.feature or planned_feature
        test.scope = test.scope or planned_scope
        extra: list[Attempt] = []
        if nodeid in gather.timed_out:
            extra.append(normalise.hard_timeout(gather.timed_out[nodeid]))
        elif test.started and not test.finished:
            extra.append(normalise.in_flight(cell_timed_out=cell_timed_out, signal=signals.get(nodeid) or exit_signal))
        result = judged(_result(test, extra, signals.get(nodeid), cache, plain=plain), accelerator)
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


def ingest_cell(path: Path, *, plain: bool = False) -> CellResult:
    """Read one cell dir into records. Raises InputError only when the dir has no manifest.
    `plain`: the readers' plain paths (the same results, slower), for tests."""
    if not path.is_dir():
        raise InputError(f"{path}: not a directory", hint="pass cell dirs written by `harness run` or `harness import`")
    manifest = read_manifest(CellDir(path).manifest)
    errors: list[str] = []
    return read_cell(path, manifest, errors, CellFeatures(manifest, path, errors), plain=plain)
