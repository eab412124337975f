"""The plain-pass store: what a cell's sources said about each test, gathered before it is decided.

Most tests of any cell only passed. They are kept here as an id and a time (`Gather.plain`, like the
event log's `pass` lines), not as attempts, and decided in bulk by `plain_results`: one shared
result object per (outcome, duration, scope). Every other test is a `TestState` with what its
sources said, decided one by one by ingest. Which tests may be kept as plain passes is decided by
ingest/decide.py's `is_plain_pass()` over a `Said` record, the one rule every shortcut asks.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any, Final

from harness.ingest.decide import Attempt
from harness.model import TestResult
from harness.outcomes import Outcome, Scope

OUTPUT_CAP: Final = 4_000  # characters of captured output kept next to a failure
# Properties every test of the suites records for readers of bare JUnit; the matrix has them per column.
BOOKKEEPING: Final = frozenset({"nodeid", "feature", "scope", "backend", "device"})
SCOPES: Final = {s.value: s for s in Scope}


@dataclass(slots=True)
class TestState:
    """What the sources said about one test, gathered before it is decided. Kept small: a
    cell has tens of thousands of these and most tests only passed."""

    __test__ = False

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
        # JUnit's plain passes (see junit_reader.junit_plain_pass), with the file each came from; moved into
        # `plain` once every file is read. `recorded`: the feature and scope their properties gave.
        self.junit_plain: dict[str, float] = {}
        self.junit_plain_from: dict[str, int] = {}
        self.recorded: dict[str, tuple[str | None, Scope | None]] = {}
        self.tests: dict[str, TestState] = {}
        self.unplanned: dict[str, None] = {}  # ids met in results but not in the plan, in order
        self.timed_out: dict[str, Any] = {}
        self.session_finished = False
        self.events_seen = False
        self.events_clean = True  # no unreadable or overlong line in events.jsonl
        self.notes: list[str] = []  # event log of an imported cell: what the import said about its files

    def test(self, nodeid: str) -> TestState:
        test = self.tests.get(nodeid)
        if test is None:
            test = self.tests[nodeid] = TestState()
            if nodeid not in self.plan:
                self.unplanned[nodeid] = None
            if nodeid in self.plain:  # it had looked plain; now there is more to know
                test.reported, test.passed, test.passed_time = True, 2, self.plain.pop(nodeid)
        return test

    def order(self) -> list[str]:
        return [*self.plan, *(n for n in self.unplanned if n not in self.plan)]


def add_properties(test: TestState, pairs: Any) -> None:
    for pair in pairs or ():
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            continue
        key, value = str(pair[0]), pair[1]
        if key == "feature" and value and test.feature is None:
            test.feature = sys.intern(str(value))
        elif key == "scope" and test.scope is None:
            test.scope = SCOPES.get(str(value))
        elif key not in BOOKKEEPING:
            if test.properties is None:
                test.properties = {}
            test.properties.setdefault(key, value)


def shared_result(cache: dict[tuple, TestResult], outcome: Outcome, duration: float | None, scope: Scope) -> TestResult:
    """Results that say only "<outcome>, in t seconds" are one shared (frozen) object per value:
    it saves their memory and makes them cheap to hand between processes."""
    key = (outcome, duration, scope)
    shared = cache.get(key)
    if shared is None:
        shared = cache[key] = TestResult(outcome=outcome, duration=duration, scope=scope)
    return shared


def round_duration(seconds: float | None) -> float | None:
    """To 0.1 ms: what a reader needs, and equal results can then be shared."""
    return None if seconds is None else round(seconds, 4)


def plain_results(
    ids: list[str],
    plain: dict[str, float],
    plan: dict[str, tuple[str | None, Scope | None]],
    feature_of: Callable[[str, str | None], str],
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
        by_duration = {d: shared_result(cache, passed, d, backend) for d in dict.fromkeys(durations)}
        results = list(map(by_duration.__getitem__, durations))
    else:  # some host or measurement tests among them
        results = [shared_result(cache, passed, d, s or backend) for d, s in zip(durations, scopes, strict=True)]
    if None in planned_features:  # not in the plan, or planned without a feature
        planned_features = [f or feature_of(n, None) for n, f in zip(ids, planned_features, strict=True)]
    return results, planned_features
