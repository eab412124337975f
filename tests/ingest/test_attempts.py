"""What each source says, as attempts (harness/ingest/attempts.py): the cell plugin's phase reports,
and <testcase>s of the real files in tests/dialects/ read as docs/outcomes.md says (pytest's
phase errors and reruns, Surefire's flaky attempts, CTest's notrun, jest-junit's and Mocha's
failures outside any test); and the crash evidence a run leaves. Nothing here decides an outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.ingest.attempts import (
    UNRECORDED_FAILURE,
    case_attempts,
    from_report,
    hard_timeout,
    in_flight,
    run_attempts,
)
from harness.ingest.decide import Attempt, Phase, Status, decide
from harness.ingest.identity import IdentityRules, is_pytest
from harness.ingest.junit_stream import JUnitCase, read_junit
from harness.outcomes import Outcome

DIALECTS = Path(__file__).resolve().parents[1] / "dialects"


def _cases(rel: str, name: str) -> list[JUnitCase]:
    return [c for c in read_junit(DIALECTS / rel).cases if c.name == name]


def _shape(attempts: list[Attempt]) -> list[tuple[Phase, Status]]:
    return [(a.phase, a.status) for a in attempts]


# -- the cell plugin's reports ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("report", "phase", "status"),
    [
        ({"when": "call", "outcome": "passed"}, Phase.CALL, Status.PASSED),
        ({"when": "setup", "outcome": "passed", "wasxfail": "r"}, Phase.SETUP, Status.PASSED),
        ({"when": "call", "outcome": "passed", "wasxfail": "[known-issue x] r"}, Phase.CALL, Status.XPASSED),
        ({"when": "setup", "outcome": "skipped", "skip_reason": "[hardware] no GPU"}, Phase.SETUP, Status.SKIPPED),
        ({"when": "call", "outcome": "skipped", "wasxfail": "[known-issue x] r"}, Phase.CALL, Status.XFAILED),
        ({"when": "call", "outcome": "rerun", "message": "boom"}, Phase.CALL, Status.RERUN),
        ({"when": "teardown", "outcome": "failed", "message": "fixture"}, Phase.TEARDOWN, Status.FAILED),
        ({"when": "call", "outcome": "failed", "message": "[XPASS(strict)] fixed?"}, Phase.CALL, Status.XPASSED),
        ({"outcome": "failed"}, Phase.CALL, Status.FAILED),
        ({"when": "collect", "outcome": "failed"}, Phase.CALL, Status.FAILED),
    ],
)
def test_a_phase_report_is_one_attempt(report: dict[str, Any], phase: Phase, status: Status) -> None:
    attempt = from_report(report)
    assert (attempt.phase, attempt.status) == (phase, status)


def test_a_reports_texts_and_time_are_kept() -> None:
    skipped = from_report({"when": "call", "outcome": "skipped", "message": "Skipped: why", "duration": 2})
    assert skipped.reason == "Skipped: why" and skipped.duration == 2.0
    failed = from_report({"outcome": "failed", "message": "m", "longrepr": "trace", "duration": "1.5"})
    assert (failed.message, failed.text, failed.duration) == ("m", "trace", None)
    strict = from_report({"outcome": "failed", "message": "[XPASS(strict)]  known bug 123"})
    assert strict.strict and strict.reason == "known bug 123"


# -- JUnit, real files ------------------------------------------------------------------------------
def test_pytest_setup_and_teardown_errors_name_their_phase() -> None:
    (setup,) = _cases("pytest/junit-xunit1.xml", "test_setup_error")
    assert _shape(case_attempts(setup, pytest_phases=True)) == [(Phase.SETUP, Status.FAILED)]
    (teardown,) = _cases("pytest/junit-xunit1.xml", "test_passes_then_teardown_error")
    runs = [case_attempts(teardown, pytest_phases=True)]
    assert _shape(runs[0]) == [(Phase.TEARDOWN, Status.FAILED)]
    assert _shape(run_attempts(runs)) == [(Phase.CALL, Status.PASSED), (Phase.TEARDOWN, Status.FAILED)], (
        "a teardown error written in place of the pass it followed"
    )
    assert _shape(case_attempts(setup, pytest_phases=False)) == [(Phase.TEST, Status.ERROR)], "not pytest's file"


def test_a_failure_then_a_teardown_error_is_one_run() -> None:
    cases = _cases("pytest/junit-xunit1.xml", "test_fails_then_teardown_error")
    assert len(cases) == 2
    attempts = run_attempts([case_attempts(c, pytest_phases=True) for c in cases])
    assert _shape(attempts) == [(Phase.CALL, Status.FAILED), (Phase.TEARDOWN, Status.FAILED)]


def test_rerunfailures_runs_are_failed_attempts_then_the_last_run() -> None:
    cases = _cases("pytest/junit-xunit1.xml", "test_rerun_fails_twice_then_passes")
    attempts = run_attempts([case_attempts(c, pytest_phases=True) for c in cases], pytest_reruns=True)
    assert _shape(attempts) == [(Phase.TEST, Status.RERUN), (Phase.TEST, Status.RERUN), (Phase.TEST, Status.PASSED)]
    assert attempts[0].message == UNRECORDED_FAILURE, "rerunfailures 16 writes the retried runs empty"


def test_pytest_xfail_and_strict_xpass() -> None:
    (xfail,) = _cases("pytest/junit-xunit1.xml", "test_xfail")
    (attempt,) = case_attempts(xfail, pytest_phases=True)
    assert attempt.status is Status.XFAILED and attempt.reason == "known bug 123"
    (xpass,) = _cases("pytest/junit-xunit1.xml", "test_xpass_strict")
    (attempt,) = case_attempts(xpass, pytest_phases=True)
    assert attempt.status is Status.XPASSED and attempt.strict


def test_surefire_flaky_and_rerun_attempts() -> None:
    rel = "surefire/junit/TEST-com.example.edge.OutcomesTest.xml"
    (flaky,) = _cases(rel, "flakyFailure")
    attempts = case_attempts(flaky, pytest_phases=False)
    assert _shape(attempts) == [(Phase.TEST, Status.RERUN), (Phase.TEST, Status.PASSED)]
    assert attempts[0].message == "attempt 1" and "OutcomesTest.java:43" in (attempts[0].text or "")
    (always,) = _cases(rel, "alwaysFails")
    assert _shape(case_attempts(always, pytest_phases=False))[-1] == (Phase.CALL, Status.FAILED)
    (assumption,) = _cases(rel, "assumptionFails")
    assert _shape(case_attempts(assumption, pytest_phases=False)) == [(Phase.TEST, Status.SKIPPED)]


@pytest.mark.parametrize(
    ("name", "status", "message"),
    [
        ("skip_return_code", Status.SKIPPED, "SKIP_RETURN_CODE=77"),
        ("missing_executable", Status.ERROR, "not run: Unable to find executable"),
        ("disabled", Status.DISABLED, None),
    ],
)
def test_ctest_notrun_is_a_skip_only_with_a_skip_rule(name: str, status: Status, message: str | None) -> None:
    (case,) = _cases("ctest/junit.xml", name)
    (attempt,) = case_attempts(case, pytest_phases=False)
    assert attempt.status is status
    if message:
        assert (attempt.message or "").startswith(message)


def test_failures_outside_any_test_are_errors() -> None:
    (jest,) = [c for c in read_junit(DIALECTS / "jest" / "junit.xml").cases if "Test execution failure" in c.name]
    (attempt,) = case_attempts(jest, pytest_phases=False)
    assert (attempt.phase, attempt.status) == (Phase.SETUP, Status.ERROR)
    assert attempt.message and attempt.message.startswith("jest-junit: the file failed outside its tests")
    (mocha,) = [c for c in read_junit(DIALECTS / "mocha" / "junit.xml").cases if '"before each" hook' in c.name]
    (attempt,) = case_attempts(mocha, pytest_phases=False)
    assert attempt.status is Status.ERROR and (attempt.message or "").startswith("mocha: a hook failed: ")


def test_testng_skips_written_as_errors_are_skips() -> None:
    cases = [
        c
        for path in sorted((DIALECTS / "testng" / "junitreports").glob("*.xml"))
        for c in read_junit(path).cases
        if any(r.kind == "error" and (r.type or "").endswith("SkipException") for r in c.results)
    ]
    assert cases, "the real TestNG report holds a SkipException"
    assert all(_shape(case_attempts(c, pytest_phases=False)) == [(Phase.TEST, Status.SKIPPED)] for c in cases)


# -- what the run itself saw ------------------------------------------------------------------------
def test_crash_evidence() -> None:
    watchdog = hard_timeout(360)
    assert watchdog.status is Status.TIMEOUT and watchdog.message.startswith("Timeout: hard limit of 360 s")
    timed_out = in_flight(cell_timed_out=True, signal="SIGKILL")
    assert (timed_out.phase, timed_out.status) == (Phase.IN_FLIGHT, Status.TIMEOUT)
    assert timed_out.message.startswith("Timeout"), "outcomes read a Timeout prefix as timeout"
    crashed = in_flight(cell_timed_out=False, signal="SIGSEGV")
    assert (crashed.status, crashed.signal) == (Status.CRASHED, "SIGSEGV") and "(SIGSEGV)" in crashed.message
    assert in_flight(cell_timed_out=False, signal=None).message == "the test process died while running this test"


# -- the retry rule, over the dialects (docs/outcomes.md, "Repeats") ------------------------------------
def _judged(rel: str, test_id: str) -> tuple[Outcome, int]:
    """One test of a real report, as the import judges it: identity groups its testcases, each
    says its attempts, run_attempts applies the retry rule, decide() gives the result."""
    read = read_junit(DIALECTS / rel)
    rules = IdentityRules()
    runs = [
        case_attempts(case, pytest_phases=is_pytest(read))
        for case in read.cases
        if rules.test_id(case, read) == (test_id, False)
    ]
    assert runs, f"no testcase {test_id!r} in {rel}"
    result = decide(run_attempts(runs, pytest_reruns=is_pytest(read)))
    return result.outcome, result.attempts


RETRY_TABLE = [
    # pytest-rerunfailures: empty earlier testcases are failed attempts
    ("pytest/junit-xunit1.xml", "test_outcomes.py::test_rerun_fails_twice_then_passes", Outcome.FLAKY, 3),
    ("pytest/junit-xunit1.xml", "test_outcomes.py::test_rerun_always_fails", Outcome.FAILED, 3),
    ("pytest/junit-xunit1.xml", "test_outcomes.py::test_rerun_marker_but_passes", Outcome.PASSED, 1),
    # PyTorch CI: <rerun> in each retried run's testcase
    ("pytorch-ci/junit-reruns.xml", "test_outcomes.py::test_rerun_fails_twice_then_passes", Outcome.FLAKY, 3),
    ("pytorch-ci/junit-reruns.xml", "test_outcomes.py::test_rerun_always_fails", Outcome.FAILED, 3),
    # Surefire: flakyFailure then pass; failure + rerunFailure x2
    ("surefire/junit/TEST-com.example.edge.OutcomesTest.xml", "com.example.edge.OutcomesTest::flakyFailure",
     Outcome.FLAKY, 2),
    ("surefire/junit/TEST-com.example.edge.OutcomesTest.xml", "com.example.edge.OutcomesTest::alwaysFails",
     Outcome.FAILED, 3),
    # nextest / quick-junit: flaky, failing every try, flaky-result = "fail"
    ("nextest/fixture-project-junit.xml", "fixture-project::basic::test_flaky_mod_4", Outcome.FLAKY, 4),
    ("nextest/fixture-project-junit.xml", "fixture-project::basic::test_failure_assert", Outcome.FAILED, 3),
    ("quick-junit/basic_report.xml", "testsuite0::testcase4", Outcome.FLAKY, 3),
    ("quick-junit/basic_report.xml", "testsuite0::testcase5", Outcome.FAILED, 3),
    ("quick-junit/basic_report.xml", "testsuite0::testcase7", Outcome.FAILED, 3),
    # gotestsum --rerun-fails: repeated testcases
    ("gotestsum/junit-rerun.xml", "example.com/dialect/edge::TestFlaky", Outcome.FLAKY, 2),
    ("gotestsum/junit-rerun.xml", "example.com/dialect/calc::TestDivide", Outcome.FAILED, 3),
    # Xcode repetitions: repeated sibling suites
    ("xcresultparser/junit_repeated.xml", "test_repeatTests::test_random()", Outcome.FAILED, 3),
    # mikepenz: a pass among failures in any order is flaky; failing every run takes the first kind
    ("mikepenz/flaky_success_first.xml", "FlakySuccessFirst::test_order.TestOrder::test_success_first",
     Outcome.FLAKY, 3),
    ("mikepenz/flaky_all_failures.xml", "FlakyAllFailures::test_always_fails.TestAlwaysFails::test_always_fails",
     Outcome.FAILED, 3),
    ("mikepenz/flaky_with_classname_file.xml", "FlakyTestSuite::test_foo.TestFoo::test_foo", Outcome.FLAKY, 3),
    ("mikepenz/flaky_with_classname_file.xml", "FlakyTestSuite::test_bar.TestBar::test_foo", Outcome.PASSED, 1),
    # every invocation a test of its own: never runs of one test
    ("ctest/junit.xml", "(empty)::same_name", Outcome.PASSED, 1),
    ("ctest/junit.xml", "(empty)::same_name (2)", Outcome.FAILED, 1),
]  # fmt: skip


@pytest.mark.parametrize(("rel", "test_id", "outcome", "attempts"), RETRY_TABLE, ids=[r[1] for r in RETRY_TABLE])
def test_the_retry_rule_over_the_dialects(rel: str, test_id: str, outcome: Outcome, attempts: int) -> None:
    assert _judged(rel, test_id) == (outcome, attempts)
