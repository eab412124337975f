"""The one rule set that decides a test's outcome from its attempts (docs/outcomes.md).

Sources (the cell's event log, JUnit of any dialect, the crash evidence) are first turned into
`Attempt`s by harness/ingest/attempts.py; `decide()` is the only place an outcome is chosen, and
it returns the test's result (harness/model.py's TestResult) itself. `simply_passed()` is the one
rule for "this test simply passed": decide() takes it as its first step.

A plain pass is a test kept as an id and a time, never decided one by one: a `pass` line of the
event log, a JUnit testcase that only passed, a decided result the import writes to a `passes`
line. Whether a test is one is asked of one normalised record, `Said` (what the sources said of
it, in the same fields whatever the source), by one predicate, `is_plain_pass()`: every reader
(junit_reader, eventlog_reader, cell_reader) and the event-log writer fill a `Said` and ask it;
the cell plugin, which may import only pytest and the stdlib, writes its `pass` lines by the same
rule. tests/ingest/test_decide.py runs the plugin and the predicate on the same reports, holds the
predicate to simply_passed() and decide(), and fails on the rule written again outside this module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from harness.model import TestResult, trim
from harness.outcomes import Outcome, SkipClass


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
    REPEAT = "repeat"  # another run of the test that did not fail and does not decide (a repetition)
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


MESSAGE_CAP: Final = 2_000
TRACE_CAP: Final = 8_000
VERDICT_PHASES: Final = (Phase.CALL, Phase.TEST, Phase.IN_FLIGHT)
_XDIST_CRASH_RE: Final = re.compile(r"worker '(gw\d+)' crashed while running")
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


def simply_passed(attempts: Sequence[Attempt]) -> bool:
    """Every phase that reported passed, once or more, and the test body (a verdict phase) is among
    them: the test passed and nothing else is to be said. The one definition of it."""
    return all(a.status is Status.PASSED for a in attempts) and any(a.phase in VERDICT_PHASES for a in attempts)


@dataclass(slots=True)
class Said:
    """What the sources said of one test, normalised for the one question every shortcut asks (is
    it a plain pass?). Each reader fills it from its own source (a JUnit testcase, the event log's
    lines, a decided result), in these fields whatever the source, and asks `is_plain_pass()`.
    Not frozen: the readers make one per testcase, and a frozen dataclass costs three times as much."""

    verdict_passed: bool  # the verdict phase (the call, or the whole test) reported a pass
    duration: float | None  # the time its passing phases took; None: the source gave none
    others: object = None  # any report but a pass: failures, skips, xfails, retries, a crash or a hard timeout
    properties: object = None  # properties beyond the bookkeeping ones (nodeid, feature, scope, backend, device)
    output: object = None  # captured output kept with the test
    signal: object = None  # a fatal signal its process logged while it ran
    kept: object = None  # what else a decided result keeps: a message, trace, skip class, link, strictness, a run


def says_nothing_more(said: Said) -> bool:
    """Nothing was said of the test beyond its verdict and its time (most tests)."""
    return not (said.others or said.properties or said.output or said.signal or said.kept)


def is_plain_pass(said: Said) -> bool:
    """The one plain-pass rule: the verdict phase passed, in a known time, and nothing else was said
    (simply_passed(), for a test known without its attempts; a plain pass always carries its time).
    says_nothing_more() written out: this runs once per testcase of every JUnit file read, where the
    record and this call cost 3-5% of a lean file's read, and a nested call about as much again
    (tests/ingest/test_decide.py holds the two to the same fields)."""
    return (
        said.verdict_passed
        and said.duration is not None
        and not (said.others or said.properties or said.output or said.signal or said.kept)
    )


def said_of(result: TestResult, properties: object = None) -> Said:
    """A decided result as a `Said` (its scope aside, which the plan gives). `properties`: the test's
    properties where its reader keeps them apart from the result (ingest adds them after deciding)."""
    return Said(
        verdict_passed=result.outcome is Outcome.PASSED,
        duration=result.duration,
        others=result.attempts != 1 or result.extra_messages,
        properties=result.properties if properties is None else properties,
        output=result.output,
        signal=result.signal,
        kept=not (
            result.message is None
            and result.trace is None
            and result.skip_class is None
            and result.link is None
            and result.strict is None  # strict=False is something to keep too
            and result.run is None  # a later partial run's provenance: a pass line has none
            and result.at is None
        ),
    )


def passed_duration(durations: Sequence[float]) -> float | None:
    """A simply passed test's time: the sum of its phases' times, to the microsecond."""
    return round(sum(durations), 6) if durations else None


def _skip(outcome: Outcome, reason: str | None) -> dict[str, Any]:
    skip_class, link, text = classify_reason(reason)
    return {"outcome": outcome, "skip_class": skip_class, "link": link, "message": trim(text or reason, MESSAGE_CAP)}


def _failure(outcome: Outcome, attempt: Attempt, prefix: str = "") -> dict[str, Any]:
    message = f"{prefix}{attempt.message}" if prefix else attempt.message
    return {"outcome": outcome, "message": trim(message, MESSAGE_CAP), "trace": trim(attempt.text, TRACE_CAP)}


def _final_verdict(final: Sequence[Attempt]) -> dict[str, Any]:
    """The outcome (and what explains it) from the last run's phases: setup, then the call or the whole test."""
    phases: dict[Phase, Attempt] = {}
    for attempt in final:
        phases[attempt.phase] = attempt  # a later report of a phase replaces an earlier one
    setup = phases.get(Phase.SETUP)
    body = next((phases[p] for p in VERDICT_PHASES if p in phases), None)
    for attempt in (setup, body):
        if attempt is None:
            continue
        status = attempt.status
        if status is Status.CRASHED:
            return {**_failure(Outcome.CRASHED, attempt), "signal": attempt.signal}
        if status is Status.TIMEOUT:
            return _failure(Outcome.TIMEOUT, attempt)
        if status in (Status.FAILED, Status.ERROR):
            if _XDIST_CRASH_RE.search(attempt.message or ""):
                return _failure(Outcome.CRASHED, attempt)
            if is_timeout_message(attempt.message):
                return _failure(Outcome.TIMEOUT, attempt)
            in_body = attempt is body and status is Status.FAILED
            return _failure(Outcome.FAILED if in_body else Outcome.ERROR, attempt)
        if status is Status.SKIPPED:
            return _skip(Outcome.SKIPPED, attempt.reason or attempt.message)
        if status is Status.XFAILED:
            return _skip(Outcome.XFAILED, attempt.reason or attempt.message)
        if status is Status.DISABLED:
            return {**_skip(Outcome.SKIPPED, attempt.reason or attempt.message), "skip_class": SkipClass.DISABLED}
        if status is Status.NOT_RUN:
            return {"outcome": Outcome.NOT_RUN, "message": trim(attempt.message, MESSAGE_CAP)}
        if status is Status.XPASSED:
            return {**_skip(Outcome.XPASSED, attempt.reason or attempt.message), "strict": attempt.strict}
    # A passed setup alone is no verdict: the test body never reported.
    return {"outcome": Outcome.PASSED if body is not None else Outcome.NOT_RUN}


_PASSED: Final = TestResult(outcome=Outcome.PASSED)


def decide(attempts: Sequence[Attempt], *, signal: str | None = None) -> TestResult:
    """The test's result from its attempts (see docs/outcomes.md).

    - a hard timeout the harness saw is the outcome, whatever else was reported;
    - otherwise the last run decides: setup, then the call (or the whole test), then teardown;
    - a test with no verdict of its own that was running when its process died (or the cell
      timed out) crashed (timed out);
    - a failing teardown turns a passed/skipped/xfailed/xpassed test into an error, and is an
      extra message of a test that already failed;
    - `flaky` means a failed attempt the producer retried, then a pass: nothing else.

    `signal`: the fatal signal the test's process logged while running it; it names a crash.
    """
    if simply_passed(attempts):
        duration = passed_duration([a.duration for a in attempts if a.duration is not None])
        return _PASSED if duration is None else TestResult(outcome=Outcome.PASSED, duration=duration)
    # One pass sorts the attempts: the failed attempts the producer retried (reruns), the last
    # run's phases (`ran`), and the few attempts the rules below look for.
    reruns: list[Attempt] = []
    repeats = 0
    ran: list[Attempt] = []
    durations: list[float] = []
    hard = in_flight = teardown = None
    first_signal: str | None = None
    for attempt in attempts:
        status, phase = attempt.status, attempt.phase
        if status is Status.RERUN:
            reruns.append(attempt)
            continue
        if status is Status.REPEAT:
            repeats += 1
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
    common = {"attempts": 1 + len(reruns) + repeats, "duration": round(sum(durations), 6) if durations else None}
    if hard is not None:
        return TestResult(**_failure(Outcome.TIMEOUT, hard), **common)
    verdict = _final_verdict(ran)
    if in_flight is not None and verdict["outcome"] is Outcome.NOT_RUN:
        verdict = _final_verdict([in_flight])
    extra: list[str] = []
    if verdict["outcome"] is Outcome.CRASHED:
        crash_signal = verdict.get("signal") or first_signal or signal
        if crash_signal and crash_signal.startswith("Timeout ("):
            # Not a crash: the watchdog ended a test stuck in native code holding the interpreter.
            verdict.update(
                outcome=Outcome.TIMEOUT,
                signal=None,
                message="Timeout: hung past the hard limit holding the interpreter; the watchdog ended the process",
            )
        elif crash_signal:
            verdict["signal"] = crash_signal
            message = verdict.get("message")
            if message and crash_signal not in message:
                verdict["message"] = f"{message} ({crash_signal})"
    if teardown is not None and teardown.status in (Status.FAILED, Status.ERROR):
        if verdict["outcome"] in (Outcome.PASSED, Outcome.XPASSED, Outcome.SKIPPED, Outcome.XFAILED):
            verdict = _failure(Outcome.ERROR, teardown, prefix="teardown: ")
        else:
            extra.append(trim(f"teardown: {teardown.message}", MESSAGE_CAP) or "")
    if reruns:
        first = reruns[0]
        if verdict["outcome"] is Outcome.PASSED:
            verdict.update(
                outcome=Outcome.FLAKY,
                message=trim(first.message or first.text, MESSAGE_CAP) or "failed attempt",
                trace=trim(first.text, TRACE_CAP),
            )
        extra.extend(trim(a.message or a.text, MESSAGE_CAP) or "failed attempt" for a in reruns)
    return TestResult(**verdict, **common, extra_messages=tuple(extra))
