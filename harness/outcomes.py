"""The outcome taxonomy: per-test outcomes, skip classes, the one rule set that decides a
test from its attempts, and the feature x column roll-up.

Every rule about what a result *means* lives here, so ingest, merge, render and gate agree.
Sources (the cell's event log, JUnit of any dialect, the crash evidence) are first turned
into `Attempt`s by harness/merge/attempts.py; `decide()` is the only place an outcome is chosen.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    FLAKY = "flaky"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    NOT_RUN = "not-run"


class SkipClass(StrEnum):
    UNSUPPORTED = "unsupported"  # the backend or torch build lacks the feature: a compatibility fact
    HARDWARE = "hardware"  # needs a device or capability absent on this runner
    DEPENDENCY = "dependency"  # an optional package is missing
    KNOWN_ISSUE = "known-issue"  # an expectation with a link
    DISABLED = "disabled"  # switched off in the test source or by the producer (status="disabled", @Disabled)
    UNCLASSIFIED = "unclassified"  # a reason without a class tag


class Scope(StrEnum):
    """What a test speaks for. Only backend-scope tests decide a feature's state on a column."""

    BACKEND = "backend"
    HOST = "host"  # host-side logic (formats, API presence): judged only where nothing else ran
    MEASUREMENT = "measurement"  # records figures; shown as figures, never counted as a pass


class Rollup(StrEnum):
    SUPPORTED = "supported"
    PARTIAL = "partial"
    FAILING = "failing"
    UNSUPPORTED = "unsupported"
    NOT_APPLICABLE = "n/a"
    NO_DATA = "no-data"
    NOT_SHIPPED = "not-shipped"  # upstream does not build this variant for this torch release


OUTCOME_SYMBOLS: Final[dict[Outcome, str]] = {
    Outcome.PASSED: "✅",
    Outcome.FAILED: "❌",
    Outcome.ERROR: "💥",
    Outcome.SKIPPED: "⏭️",
    Outcome.XFAILED: "🐞",
    Outcome.XPASSED: "🎉",
    Outcome.FLAKY: "🔁",
    Outcome.TIMEOUT: "⏱️",
    Outcome.CRASHED: "☠️",
    Outcome.NOT_RUN: "⬜",
}

ROLLUP_SYMBOLS: Final[dict[Rollup, str]] = {
    Rollup.SUPPORTED: "✅",
    Rollup.PARTIAL: "🟡",
    Rollup.FAILING: "❌",
    Rollup.UNSUPPORTED: "🚫",
    Rollup.NOT_APPLICABLE: "➖",
    Rollup.NO_DATA: "❔",
    Rollup.NOT_SHIPPED: "📦",
}

ROLLUP_MEANING: Final[dict[Rollup, str]] = {
    Rollup.SUPPORTED: "every test that could run here passed",
    Rollup.PARTIAL: "some tests pass; others fail, are unsupported, known issues or could not run",
    Rollup.FAILING: "tests ran and none passed",
    Rollup.UNSUPPORTED: "the backend or torch build lacks the feature",
    Rollup.NOT_APPLICABLE: "nothing could be judged here (needs hardware or packages absent here)",
    Rollup.NO_DATA: "no results: not run, not collected, or the cell failed before tests",
    Rollup.NOT_SHIPPED: "upstream does not build this variant for this torch release: nothing to run, never scored",
}

# Outcomes that show the feature working / broken on the column.
GOOD: Final[frozenset[Outcome]] = frozenset({Outcome.PASSED, Outcome.XPASSED, Outcome.FLAKY})
BAD: Final[frozenset[Outcome]] = frozenset({Outcome.FAILED, Outcome.ERROR, Outcome.TIMEOUT, Outcome.CRASHED})

_TAG_RE: Final = re.compile(r"^\[(unsupported|hardware|dependency|known-issue)(?: ([^\]]+))?\]\s*")
_PYTEST_SKIP_PREFIX: Final = re.compile(r"^(?:Skipped: |SKIP(?:PED)?\b ?)")  # not SKIP_RETURN_CODE (CTest)
_LOCATION_PREFIX: Final = re.compile(r"^[^\s\[]+:\d+: ")


def classify_reason(reason: str | None) -> tuple[SkipClass, str | None, str]:
    """Split a skip/xfail reason into (class, link, text without the tag).

    Reasons come from the suites' helpers as `[class] text` or `[known-issue <url>] text`.
    pytest may prefix them with `Skipped: ` or a `file:line: ` location.
    """
    text = (reason or "").strip()
    text = _PYTEST_SKIP_PREFIX.sub("", text)
    # JUnit skip bodies look like "path.py:12: [hardware] ..."; drop the location.
    loc = _LOCATION_PREFIX.match(text)
    if loc:
        text = text[loc.end() :]
    match = _TAG_RE.match(text)
    if not match:
        return SkipClass.UNCLASSIFIED, None, text
    skip_class = SkipClass(match.group(1))
    link = match.group(2).strip() if match.group(2) else None
    return skip_class, link, text[match.end() :]


def is_timeout_message(message: str | None) -> bool:
    """The suites' soft timeout and pytest-timeout both start their message with `Timeout`."""
    text = (message or "").lstrip()
    for prefix in ("Failed: ", "E   ", "Timeout"):
        if text.startswith(prefix) and prefix != "Timeout":
            text = text[len(prefix) :]
    return text.startswith("Timeout") or "Timeout (>" in text


class Phase(StrEnum):
    SETUP = "setup"
    CALL = "call"
    TEARDOWN = "teardown"
    TEST = "test"  # the whole test, when the source does not say which phase (a JUnit testcase)
    IN_FLIGHT = "in-flight"  # the run stopped (process died, cell timed out) while this test was running


class Status(StrEnum):
    """What one attempt of one phase showed."""

    PASSED = "passed"
    FAILED = "failed"  # an assertion or exception (in setup/teardown: an error of the fixture)
    ERROR = "error"  # the producer says error, phase unknown (JUnit <error> of other tools)
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"  # expected to fail, passed (`strict` says whether it counted as a failure)
    DISABLED = "disabled"
    NOT_RUN = "not-run"  # the producer says it did not run (CTest notrun)
    RERUN = "rerun"  # failed, and the producer ran the test again (rerunfailures, Surefire rerun/flaky)
    CRASHED = "crashed"  # the process died while running it
    TIMEOUT = "timeout"  # stopped by a time limit


@dataclass(slots=True)
class Attempt:
    """One phase of one run of a test, from any source, in the source's order."""

    phase: Phase
    status: Status
    message: str | None = None
    text: str | None = None  # traceback / body
    reason: str | None = None  # skip or xfail reason, with its class tag
    duration: float | None = None
    strict: bool = False
    signal: str | None = None


@dataclass(slots=True)
class Decision:
    """The outcome of one test and what explains it."""

    outcome: Outcome
    skip_class: SkipClass | None = None
    link: str | None = None
    message: str | None = None
    trace: str | None = None
    duration: float | None = None
    attempts: int = 1
    strict: bool | None = None
    signal: str | None = None
    extra_messages: list[str] = field(default_factory=list)


MESSAGE_CAP: Final = 2_000
TRACE_CAP: Final = 8_000
_XDIST_CRASH_RE: Final = re.compile(r"worker '(gw\d+)' crashed while running")
_VERDICT_PHASES: Final = (Phase.CALL, Phase.TEST, Phase.IN_FLIGHT)


def trim(text: str | None, cap: int) -> str | None:
    """Keep the head and most of the tail (where the error is) of a long text."""
    if text is None or len(text) <= cap:
        return text
    head = cap // 4
    tail = cap - head
    return (
        f"{text[:head]}\n... [{len(text) - cap} characters trimmed; full text in the cell's files] ...\n{text[-tail:]}"
    )


def _skip(decision: Decision, outcome: Outcome, reason: str | None) -> Decision:
    skip_class, link, text = classify_reason(reason)
    decision.outcome = outcome
    decision.skip_class, decision.link = skip_class, link
    decision.message = trim(text or reason, MESSAGE_CAP)
    return decision


def _failure(decision: Decision, outcome: Outcome, attempt: Attempt, prefix: str = "") -> Decision:
    decision.outcome = outcome
    decision.message = trim(f"{prefix}{attempt.message}" if prefix else attempt.message, MESSAGE_CAP)
    decision.trace = trim(attempt.text, TRACE_CAP)
    return decision


def _final_verdict(decision: Decision, final: Sequence[Attempt]) -> Decision:
    """The outcome from the last attempt's phases (setup, call or the whole test)."""
    phases: dict[Phase, Attempt] = {}
    for attempt in final:
        phases[attempt.phase] = attempt  # a later report of a phase replaces an earlier one
    setup = phases.get(Phase.SETUP)
    body = next((phases[p] for p in _VERDICT_PHASES if p in phases), None)
    for attempt in (setup, body):
        if attempt is None:
            continue
        status = attempt.status
        if status is Status.CRASHED:
            decision.signal = attempt.signal
            return _failure(decision, Outcome.CRASHED, attempt)
        if status is Status.TIMEOUT:
            return _failure(decision, Outcome.TIMEOUT, attempt)
        if status in (Status.FAILED, Status.ERROR):
            if _XDIST_CRASH_RE.search(attempt.message or ""):
                return _failure(decision, Outcome.CRASHED, attempt)
            if is_timeout_message(attempt.message):
                return _failure(decision, Outcome.TIMEOUT, attempt)
            in_body = attempt is body and status is Status.FAILED
            return _failure(decision, Outcome.FAILED if in_body else Outcome.ERROR, attempt)
        if status is Status.SKIPPED:
            return _skip(decision, Outcome.SKIPPED, attempt.reason or attempt.message)
        if status is Status.XFAILED:
            return _skip(decision, Outcome.XFAILED, attempt.reason or attempt.message)
        if status is Status.DISABLED:
            _skip(decision, Outcome.SKIPPED, attempt.reason or attempt.message)
            decision.skip_class = SkipClass.DISABLED
            return decision
        if status is Status.NOT_RUN:
            decision.outcome, decision.message = Outcome.NOT_RUN, trim(attempt.message, MESSAGE_CAP)
            return decision
        if status is Status.XPASSED:
            _skip(decision, Outcome.XPASSED, attempt.reason or attempt.message)
            decision.strict = attempt.strict
            return decision
    # A passed setup alone is no verdict: the test body never reported.
    decision.outcome = Outcome.PASSED if body is not None else Outcome.NOT_RUN
    return decision


def decide(attempts: Sequence[Attempt], *, signal: str | None = None) -> Decision:
    """The one rule set: a test's outcome from its attempts (see docs/outcomes.md).

    - a hard timeout the harness saw is the outcome, whatever else was reported;
    - otherwise the last run decides: setup, then the call (or the whole test), then teardown;
    - a test with no verdict of its own that was running when its process died (or the cell
      timed out) crashed (timed out);
    - a failing teardown turns a passed/skipped/xfailed/xpassed test into an error, and is an
      extra message of a test that already failed;
    - `flaky` means a failed attempt the producer retried, then a pass: nothing else.

    `signal`: the fatal signal the test's process logged while running it; it names a crash.
    """
    if all(a.status is Status.PASSED for a in attempts) and any(a.phase in _VERDICT_PHASES for a in attempts):
        # Most tests: every phase passed, once. The rules below would say the same, slower.
        durations = [a.duration for a in attempts if a.duration is not None]
        return Decision(outcome=Outcome.PASSED, duration=round(sum(durations), 6) if durations else None)
    decision = Decision(outcome=Outcome.NOT_RUN)
    # One pass sorts the attempts: the failed attempts the producer retried (reruns), the last
    # run's phases (`ran`), and the few attempts the rules below look for.
    reruns: list[Attempt] = []
    ran: list[Attempt] = []
    durations: list[float] = []
    hard = in_flight = teardown = None
    first_signal: str | None = None
    for attempt in attempts:
        status, phase = attempt.status, attempt.phase
        if status is Status.RERUN:
            reruns.append(attempt)
            continue
        if attempt.duration is not None:
            durations.append(attempt.duration)
        if first_signal is None and attempt.signal:
            first_signal = attempt.signal
        if phase is Phase.IN_FLIGHT:
            in_flight = in_flight or attempt
            continue
        ran.append(attempt)
        if phase is Phase.TEARDOWN:
            teardown = attempt  # the last one counts
        elif phase is Phase.TEST and status is Status.TIMEOUT and hard is None:
            hard = attempt
    decision.attempts = 1 + len(reruns)
    decision.duration = round(sum(durations), 6) if durations else None
    if hard is not None:
        return _failure(decision, Outcome.TIMEOUT, hard)
    _final_verdict(decision, ran)
    if in_flight is not None and decision.outcome is Outcome.NOT_RUN:
        _final_verdict(decision, [in_flight])
    if decision.outcome is Outcome.CRASHED:
        signal = decision.signal or first_signal or signal
        if signal and signal.startswith("Timeout ("):
            # Not a crash: the watchdog ended a test stuck in native code holding the interpreter.
            decision.outcome, decision.signal = Outcome.TIMEOUT, None
            decision.message = (
                "Timeout: hung past the hard limit holding the interpreter; the watchdog ended the process"
            )
        elif signal:
            decision.signal = signal
            if decision.message and signal not in decision.message:
                decision.message = f"{decision.message} ({signal})"
    if teardown is not None and teardown.status in (Status.FAILED, Status.ERROR):
        if decision.outcome in (Outcome.PASSED, Outcome.XPASSED, Outcome.SKIPPED, Outcome.XFAILED):
            decision.skip_class = decision.link = decision.strict = None
            _failure(decision, Outcome.ERROR, teardown, prefix="teardown: ")
        else:
            decision.extra_messages.append(trim(f"teardown: {teardown.message}", MESSAGE_CAP) or "")
    if reruns:
        first = reruns[0]
        if decision.outcome is Outcome.PASSED:
            decision.outcome = Outcome.FLAKY
            decision.message = trim(first.message or first.text, MESSAGE_CAP) or "failed attempt"
            decision.trace = trim(first.text, TRACE_CAP)
        decision.extra_messages.extend(trim(a.message or a.text, MESSAGE_CAP) or "failed attempt" for a in reruns)
    return decision


def rollup(outcomes: Iterable[Outcome], skip_classes: Iterable[SkipClass] = ()) -> Rollup:
    """Roll the outcomes of one feature on one column into a state.

    `skip_classes` lists the class of every skipped test (same length as the skips in
    `outcomes`). Hardware/dependency/unclassified skips and not-run tests give no verdict.
    """
    counts: dict[Outcome, int] = {}
    for outcome in outcomes:
        counts[outcome] = counts.get(outcome, 0) + 1
    unsupported = sum(1 for c in skip_classes if c is SkipClass.UNSUPPORTED)
    return rollup_counts(counts, unsupported)


def rollup_counts(counts: Mapping[str, int], unsupported_skips: int) -> Rollup:
    """The roll-up from outcome counts; see docs/outcomes.md for the table."""
    total = sum(counts.values())
    good = sum(counts.get(o, 0) for o in GOOD)
    bad = sum(counts.get(o, 0) for o in BAD)
    known = counts.get(Outcome.XFAILED, 0)
    skipped = counts.get(Outcome.SKIPPED, 0)
    not_run = counts.get(Outcome.NOT_RUN, 0)
    if total == 0 or total == not_run:
        return Rollup.NO_DATA
    if good and (bad or known or skipped or not_run):
        return Rollup.PARTIAL
    if good:
        return Rollup.SUPPORTED
    if bad or known:
        return Rollup.FAILING
    if unsupported_skips:
        return Rollup.UNSUPPORTED
    return Rollup.NOT_APPLICABLE


def is_failure(outcome: Outcome | str) -> bool:
    return Outcome(outcome) in BAD
