"""Normalise every source of results into `Attempt`s, so one rule set (ingest/decide.py's decide()) judges them.

Sources: the cell plugin's phase reports (events.jsonl), JUnit testcases of any dialect, and
the crash evidence a run leaves (a hard-timeout event, a test in flight when its process died
or the cell timed out). Nothing here chooses an outcome; it only says what each source saw.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from harness.ingest.decide import Attempt, Phase, Status
from harness.ingest.identity import is_jest_suite_failure
from harness.ingest.junit_stream import JUnitCase, JUnitResult

STRICT_XPASS: Final = "[XPASS(strict)]"
UNRECORDED_FAILURE: Final = "failed; retried by pytest-rerunfailures, which wrote no text of this attempt to junit.xml"
_PHASES: Final = {"setup": Phase.SETUP, "call": Phase.CALL, "teardown": Phase.TEARDOWN}
_PYTEST_SETUP_ERROR: Final = "failed on setup with "
_PYTEST_TEARDOWN_ERROR: Final = "failed on teardown with "
_DISABLED_STATUS: Final = frozenset({"disabled", "ignored"})
_NOT_RUN_STATUS: Final = frozenset({"notrun", "not run", "not-run"})
# CTest writes status="notrun" for skips AND for tests it could not start (counted failed);
# a skip's message names the rule that skipped it (SKIP_RETURN_CODE=77, SKIP_REGULAR_EXPRESSION_MATCHED).
_CTEST_SKIP_PREFIX: Final = "SKIP_"
# Mocha hook failures are written as testcases titled after the hook (mocha-junit-reporter puts
# the title in classname by default, in name in jenkinsMode). Heuristic: a test titled like a
# hook would read as one.
_MOCHA_HOOK_RE: Final = re.compile(r'^"(?:before|after) (?:all|each)" hook\b')
# TestNG's junitreports writes skips as <error>: a SkipException (or subclass), or a method
# whose dependencies failed (TestNG 6.9's message). Heuristic: the type and message are TestNG's own.
_TESTNG_SKIP_TYPE_SUFFIX: Final = "SkipException"
_TESTNG_DEPENDENCY_SKIP: Final = "depends on not successfully finished methods"


# -- the cell plugin's reports ----------------------------------------------------------------
def from_report(report: dict[str, Any]) -> Attempt:
    """One phase report of events.jsonl (pytest's TestReport as the cell plugin writes it)."""
    phase = _PHASES.get(report.get("when") or "", Phase.CALL)
    outcome = report.get("outcome")
    duration = report.get("duration")
    duration = float(duration) if isinstance(duration, int | float) else None
    message = report.get("message")
    wasxfail = report.get("wasxfail")
    if outcome == "passed":
        if wasxfail is not None and phase is Phase.CALL:
            return Attempt(phase, Status.XPASSED, reason=wasxfail, duration=duration)
        return Attempt(phase, Status.PASSED, duration=duration)
    if outcome == "skipped":
        if wasxfail is not None:
            return Attempt(phase, Status.XFAILED, reason=wasxfail, duration=duration)
        return Attempt(phase, Status.SKIPPED, reason=report.get("skip_reason") or message, duration=duration)
    text = report.get("longrepr")
    if outcome == "rerun":
        return Attempt(phase, Status.RERUN, message=message, text=text, duration=duration)
    if (message or "").startswith(STRICT_XPASS):
        reason = message[len(STRICT_XPASS) :].strip()
        return Attempt(phase, Status.XPASSED, reason=reason, duration=duration, strict=True)
    return Attempt(phase, Status.FAILED, message=message, text=text, duration=duration)


# -- JUnit ------------------------------------------------------------------------------------
def case_attempts(case: JUnitCase, *, pytest_phases: bool) -> list[Attempt]:
    """The attempts one <testcase> shows: its retried attempts (Surefire/Gradle), then its result.

    `pytest_phases`: the file is pytest's (identity.is_pytest), whose <error> says which phase
    failed ("failed on setup with ...", "failed on teardown with ...").
    """
    attempts = [Attempt(Phase.TEST, Status.RERUN, message=r.message, text=r.text, duration=None) for r in case.reruns]
    status = (case.status or "").strip().lower()
    duration = case.time
    skipped = next((r for r in case.results if r.kind == "skipped"), None)
    failure = next((r for r in case.results if r.kind == "failure"), None)
    error = next((r for r in case.results if r.kind == "error"), None)
    if status in _DISABLED_STATUS:
        reason = (skipped and (skipped.message or skipped.text)) or f'status="{case.status}" (disabled by the producer)'
        attempts.append(Attempt(Phase.TEST, Status.DISABLED, reason=reason, duration=duration))
        return attempts
    if status in _NOT_RUN_STATUS:
        attempts.append(_ctest_not_run(case, skipped, duration))
        return attempts
    outside = _outside_any_test(case, failure or error)
    if outside is not None:
        attempts.append(outside)
        return attempts
    if error is not None and failure is None and _is_testng_skip(error):
        reason = error.message or error.type
        attempts.append(Attempt(Phase.TEST, Status.SKIPPED, message=reason, reason=reason, duration=duration))
        return attempts
    if failure is not None:
        if (failure.message or "").startswith(STRICT_XPASS):
            reason = failure.message[len(STRICT_XPASS) :].strip()  # type: ignore[index]
            attempts.append(Attempt(Phase.CALL, Status.XPASSED, reason=reason, duration=duration, strict=True))
        else:
            attempts.append(Attempt(Phase.CALL, Status.FAILED, failure.message, failure.text, duration=duration))
    if error is not None:
        message = error.message or ""
        if pytest_phases and message.startswith(_PYTEST_TEARDOWN_ERROR):
            text = message[len(_PYTEST_TEARDOWN_ERROR) :].strip('"')
            attempts.append(Attempt(Phase.TEARDOWN, Status.FAILED, text, error.text, duration=duration))
        elif pytest_phases and message.startswith(_PYTEST_SETUP_ERROR):
            text = message[len(_PYTEST_SETUP_ERROR) :].strip('"')
            attempts.append(Attempt(Phase.SETUP, Status.FAILED, text, error.text, duration=duration))
        elif failure is None:
            attempts.append(Attempt(Phase.TEST, Status.ERROR, error.message, error.text, duration=duration))
    if failure is None and error is None:
        if skipped is not None:
            reason = skipped.message or skipped.text
            kind = Status.XFAILED if skipped.type == "pytest.xfail" else Status.SKIPPED
            attempts.append(Attempt(Phase.TEST, kind, message=reason, reason=reason, duration=duration))
        else:
            attempts.append(Attempt(Phase.TEST, Status.PASSED, duration=duration))
    return attempts


def _ctest_not_run(case: JUnitCase, skipped: JUnitResult | None, duration: float | None) -> Attempt:
    """CTest's status="notrun": a skip when its message names a SKIP_ rule; otherwise the test
    could not start (executable missing, a fixture's setup test failed), which CTest counts as
    failed: an error here, like a pytest setup error."""
    message = (skipped.message or skipped.text) if skipped is not None else None
    if message and message.startswith(_CTEST_SKIP_PREFIX):
        return Attempt(Phase.TEST, Status.SKIPPED, message=message, reason=message, duration=duration)
    why = f"not run: {message}" if message else f'not run (status="{case.status}")'
    return Attempt(Phase.SETUP, Status.ERROR, message=why, text=case.system_out, duration=duration)


def _outside_any_test(case: JUnitCase, result: JUnitResult | None) -> Attempt | None:
    """A testcase that reports a failure outside any test: jest-junit's stand-in for a failing
    afterAll hook or a file that failed to load, or a failed Mocha hook. It is an error (the
    setup or teardown around the tests failed), never a failed test."""
    if result is None:
        return None
    if is_jest_suite_failure(case):
        what = "jest-junit: the file failed outside its tests (a hook threw, or the file did not load)"
    elif _MOCHA_HOOK_RE.match(case.classname) or _MOCHA_HOOK_RE.match(case.name):
        what = "mocha: a hook failed"
    else:
        return None
    detail = (result.message or "").strip() or _first_line(result.text)
    message = f"{what}: {detail}" if detail else what
    return Attempt(Phase.SETUP, Status.ERROR, message=message, text=result.text, duration=case.time)


def _is_testng_skip(error: JUnitResult) -> bool:
    return (error.type or "").endswith(_TESTNG_SKIP_TYPE_SUFFIX) or _TESTNG_DEPENDENCY_SKIP in (error.message or "")


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


_RUN_FAILED: Final = frozenset({Status.FAILED, Status.ERROR, Status.TIMEOUT, Status.CRASHED})


def run_attempts(cases: Sequence[list[Attempt]], *, pytest_reruns: bool = False) -> list[Attempt]:
    """The attempts of one test written as several <testcase>s of one id in one report
    (identity.IdentityRules says which): each one's case_attempts(), in file order. THE RETRY
    RULE (docs/outcomes.md, "Repeats"), the same for every dialect:

    1. pytest writes a second <testcase> for a teardown error after the test's own result:
       that one is a phase of the same run, not a run of its own.
    2. Any run passed and any run failed: the test is flaky (a pass decides; each failed run is
       a failed attempt kept with its text), whatever their order: the producers that retry
       (pytest-rerunfailures, Surefire, nextest, gotestsum) stop at the first pass, and a
       repetition that passed once and failed once (Xcode, `go test -count`, mikepenz's
       `flaky_success_first`) is flaky by the same definition.
    3. No run passed and some failed: the FIRST failed run decides (its kind: failed or error,
       and its message), as Surefire's first <failure>/<error> does; the others are failed attempts.
    4. Otherwise (skips, xfails...): the last run decides.
    Runs that neither fail nor decide are counted as attempts (`repeat`), so no testcase is lost.

    `pytest_reruns`: the report is pytest's, where a repeated node id can only be
    pytest-rerunfailures' (it reruns only failures): an earlier run is a failed attempt even when
    its testcase is empty (16.x leaves the failure out) or holds PyTorch's `<rerun>` element.
    """
    if len(cases) == 1 and cases[0] and cases[0][0].phase is not Phase.TEARDOWN:
        return cases[0]  # one run (most tests): nothing to fold
    runs: list[list[Attempt]] = []
    for attempts in cases:  # each: case_attempts() of one <testcase>, in file order
        teardown_only = bool(runs) and all(a.phase is Phase.TEARDOWN for a in attempts)
        if teardown_only:
            runs[-1] = runs[-1] + attempts
        else:
            runs.append(attempts)
    for run in runs:
        if all(a.phase is Phase.TEARDOWN for a in run):
            # pytest writes a teardown error in place of the pass it followed: the call passed.
            run.insert(0, Attempt(Phase.CALL, Status.PASSED, duration=run[0].duration))
    if len(runs) == 1:
        return runs[0]
    if pytest_reruns:
        runs = [_pytest_rerun(run) for run in runs[:-1]] + runs[-1:]
    verdicts = [_run_verdict(run) for run in runs]
    if "passed" in verdicts:
        decides = len(verdicts) - 1 - verdicts[::-1].index("passed")
    elif "failed" in verdicts:
        decides = verdicts.index("failed")
    else:
        decides = len(runs) - 1
    result: list[Attempt] = []
    for index, run in enumerate(runs):
        if index == decides:
            continue
        if verdicts[index] == "failed":
            failed = next(a for a in run if a.status in _RUN_FAILED)
            result.extend(a for a in run if a.status is Status.RERUN)
            result.append(Attempt(failed.phase, Status.RERUN, message=failed.message, text=failed.text))
        elif verdicts[index] == "rerun":
            result.extend(run)
        else:
            result.extend(a for a in run if a.status is Status.RERUN)
            result.append(Attempt(Phase.TEST, Status.REPEAT, duration=run[0].duration if run else None))
    return result + runs[decides]


def _pytest_rerun(run: list[Attempt]) -> list[Attempt]:
    """An earlier run of a pytest node id: a failed attempt, as the report says it (a failure,
    PyTorch's <rerun>) or, in an empty testcase, as rerunfailures' rule says it."""
    if any(a.status in _RUN_FAILED for a in run):
        return run
    reruns = [a for a in run if a.status is Status.RERUN]
    return reruns or [Attempt(Phase.TEST, Status.RERUN, message=UNRECORDED_FAILURE)]


def _run_verdict(run: list[Attempt]) -> str:
    """failed (a failure, error, timeout or crash), rerun (only failed attempts retried after it),
    passed (its test body passed), or other (skipped, xfailed, disabled, not run)."""
    statuses = {a.status for a in run}
    if statuses & _RUN_FAILED:
        return "failed"
    if statuses == {Status.RERUN}:
        return "rerun"
    if any(a.status is Status.PASSED and a.phase is not Phase.SETUP for a in run):
        return "passed"
    return "other"


# -- what the run itself saw --------------------------------------------------------------------
def hard_timeout(seconds: object) -> Attempt:
    """The plugin's watchdog ended the test's process at its hard limit."""
    return Attempt(
        Phase.TEST, Status.TIMEOUT, message=f"Timeout: hard limit of {seconds} s reached; the process was ended"
    )


def in_flight(*, cell_timed_out: bool, signal: str | None) -> Attempt:
    """The test was running when its process died, or when the cell's time limit stopped the run."""
    if cell_timed_out:
        return Attempt(
            Phase.IN_FLIGHT,
            Status.TIMEOUT,
            message="Timeout: the cell's overall time limit stopped the run during this test",
        )
    why = f" ({signal})" if signal else ""
    return Attempt(
        Phase.IN_FLIGHT, Status.CRASHED, message=f"the test process died{why} while running this test", signal=signal
    )
