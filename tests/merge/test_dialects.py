"""Real JUnit from real tools, imported as a user would, gives each tool's own counts.

tests/dialects/<producer>/ holds the XML that Jest, Mocha, gotestsum, CTest, pytest, Maven
Surefire and TestNG really wrote, and expected*.json: what the TOOL counted for the same run
(its summary line or its own report, never numbers read back from the XML; see
tests/dialects/README.md). Every file set is imported with `harness import` (one cell each) and
all cells are merged with `harness merge`, the commands a user runs. Then, per file set:

1. Counts. The tool's categories are computed from our per-test outcomes by an explicit table
   (`Dialect.categories`): e.g. a tool without an "error" category counts our error, timeout
   and crashed under its "failed", and flaky is a subset of passed. Where the XML cannot carry
   what the tool counted, a named `Difference` says by how much, category by category:
   ours + the differences must equal the tool's number exactly. Every key of the tool's counts
   is compared, or named in `Dialect.not_compared` with the reason.
2. Per test. Each test the tool lists is matched to our row by an explicit key: `tool_key`
   builds it from the tool's own record, `our_key` from our test id (with the order marks
   " (2)" and "name#2" that tell identical testcases apart taken off, since the tool's names
   have none). The multisets of (key, outcome in the tool's words) must be equal, except for
   the tests a Difference names, with the tool's outcome and ours (None: that side has no such
   test). Rows the tool counts outside its tests (jest-junit's stand-ins for a file that failed
   outside its tests, Mocha hook failures) are named in `Dialect.outside`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import textwrap
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.matrix_json import load_matrix
from harness.model import Matrix, TestResult
from harness.outcomes import Outcome, SkipClass
from tests.conftest import REPO, in_ci, slow_fixture

DIALECTS = REPO / "tests" / "dialects"
Out = Outcome


# -- what we count, in a form the tables below can use --------------------------------------------
@dataclass(frozen=True)
class Ours:
    """Our rows of one column: `inside` are tests the tool counts as tests, `outside` the rows
    it counts elsewhere (Dialect.outside)."""

    inside: tuple[tuple[str, TestResult], ...]
    outside: tuple[tuple[str, TestResult], ...]

    def n(self, *outcomes: Outcome) -> int:
        return sum(1 for _, r in self.inside if r.outcome in outcomes)

    def total(self) -> int:
        return len(self.inside)

    def skipped(self, *, disabled: bool) -> int:
        return sum(
            1 for _, r in self.inside if r.outcome is Out.SKIPPED and (r.skip_class is SkipClass.DISABLED) == disabled
        )

    def xpassed(self, *, strict: bool) -> int:
        return sum(1 for _, r in self.inside if r.outcome is Out.XPASSED and bool(r.strict) == strict)

    def attempts(self) -> int:
        return sum(r.attempts for _, r in self.inside)

    def reruns(self) -> int:
        """Failed attempts before the last one (every rerun follows a failure)."""
        return sum(r.attempts - 1 for _, r in self.inside)

    def outside_count(self) -> int:
        return len(self.outside)


BAD_IN_TOOLS_WITHOUT_ERROR = (Out.FAILED, Out.ERROR, Out.TIMEOUT, Out.CRASHED)


@dataclass(frozen=True)
class Difference:
    """What the XML cannot say (or what the tool counts twice), and what it does to the counts.

    `counts`: the tool's number minus ours, per tool category. `tests`: the tests it concerns,
    as (key, the tool's outcome, ours); None where that side has no such test."""

    what: str
    counts: Mapping[str, int]
    tests: tuple[tuple[str, str | None, str | None], ...] = ()


@dataclass(frozen=True)
class Dialect:
    id: str  # pytest id and cell id
    folder: str
    files: tuple[str, ...]  # relative to the folder, as listed in the expected file's junit_files
    expected: str
    categories: Mapping[str, Callable[[Ours], int]]
    word: Callable[[TestResult], str]  # our outcome in the tool's words (per-test comparison)
    tool_key: Callable[[dict[str, Any], list[dict[str, Any]]], str]  # (record, all records) -> key
    our_key: Callable[[str], str]
    differences: tuple[Difference, ...] = ()
    not_compared: Mapping[str, str] = field(default_factory=dict)
    outside: frozenset[str] = frozenset()  # our ids of rows the tool counts outside its tests
    tool_outcome: Callable[[dict[str, Any]], str] = lambda t: t["outcome"]


# -- matching our ids to the tools' names --------------------------------------------------------
_DUPLICATE = re.compile(r" \(\d+\)$")  # " (2)": the n-th testcase of an equal id
_SUITE_POSITION = re.compile(r"#\d+$")  # "Calculator#2": the n-th sibling suite of an equal name


def without_order_marks(test_id: str) -> str:
    """Our id without the marks that only say which of several identical testcases it is.
    Only suite parts lose "#n": in a test name it is the producer's own (Go's `inner#01`)."""
    parts = _DUPLICATE.sub("", test_id).split("::")
    return "::".join([*(_SUITE_POSITION.sub("", p) for p in parts[:-1]), parts[-1]])


def after_first_part(test_id: str) -> str:
    return without_order_marks(test_id).split("::", 1)[-1]


def words(table: Mapping[Outcome, str], *, disabled: str | None = None) -> Callable[[TestResult], str]:
    """Our outcome in the tool's words; `disabled`: the tool's word for a skip of class disabled."""

    def word(result: TestResult) -> str:
        if disabled and result.outcome is Out.SKIPPED and result.skip_class is SkipClass.DISABLED:
            return disabled
        return table.get(result.outcome, f"(ours: {result.outcome.value})")

    return word


# -- Jest + jest-junit -------------------------------------------------------------------------------
JEST_WORDS = words(
    {Out.PASSED: "passed", Out.FLAKY: "passed", Out.FAILED: "failed", Out.TIMEOUT: "failed", Out.CRASHED: "failed"}
    | {Out.ERROR: "failed", Out.SKIPPED: "pending"}
)
JEST_CATEGORIES: dict[str, Callable[[Ours], int]] = {
    "tests": Ours.total,
    "passed": lambda o: o.n(Out.PASSED, Out.FLAKY),
    "failed": lambda o: o.n(Out.FAILED, Out.TIMEOUT, Out.CRASHED),
    "errors": lambda o: o.n(Out.ERROR),  # Jest has none: a throwing test is failed, and so must ours be
    "skipped": lambda o: o.skipped(disabled=False),
    "disabled": lambda o: o.skipped(disabled=True),
    "todo": lambda o: 0,  # no outcome of ours is a todo: see the difference
    "flaky": lambda o: o.n(Out.FLAKY),
    "retried_then_passed": lambda o: o.n(Out.FLAKY),
    # numRuntimeErrorTestSuites: files that failed outside their tests; one error row each here
    "suites_failed_to_run": Ours.outside_count,
}
JEST_NOT_COMPARED = {
    "suites": "test files (Jest's 'Test Suites'): the matrix has rows per test, not per file",
    "suites_failed": "test files with any failure: a per-file count, not a per-test one",
}
JEST_TODO = Difference(
    "test.todo: jest-junit writes a testcase with no child, the same as a pass",
    {"passed": -1, "todo": +1},
    (("pending kinds test.todo: written later", "todo", "passed"),),
)
JEST_RETRY = Difference(
    "jest.retryTimes: only the last attempt is written, with no mark of the retry",
    {"retried_then_passed": +1},
)


def jest_file_key(test: dict[str, Any], tests: list[dict[str, Any]]) -> str:
    """jest-junit with addFileAttribute and ancestorSeparator " › ": file, the testsuite (named
    after the file's first test's top-level describe, "undefined" if it has none), then the
    describes joined by the separator and the title after a space."""
    first = next(t for t in tests if t["file"] == test["file"])
    suite = first["ancestors"][0] if first["ancestors"] else "undefined"
    name = (" › ".join(test["ancestors"]) + " " + test["title"]).strip()
    return f"{test['file']}::{suite}::{name}"


def jest_default_key(test: dict[str, Any], _tests: list[dict[str, Any]]) -> str:
    """jest-junit's defaults: no file; the name is the describes and the title joined by spaces
    (the testsuite, named after a describe, is dropped: only its position tells two apart)."""
    return " ".join([*test["ancestors"], test["title"]]).strip()


JEST_HOOKS_DEFAULT = "hooks::Test execution failure: could be caused by test hooks like 'afterAll'."
JEST_HOOKS_FILE = f"__tests__/hooks.test.js::{JEST_HOOKS_DEFAULT}"
JEST_BROKEN_FILE = "__tests__/broken.test.js::Test suite failed to run::__tests__/broken.test.js"

# -- Mocha + mocha-junit-reporter ------------------------------------------------------------------
MOCHA_WORDS = JEST_WORDS
MOCHA_CATEGORIES: dict[str, Callable[[Ours], int]] = {
    "tests": Ours.total,  # stats.tests: hooks are not tests
    "passed": lambda o: o.n(Out.PASSED, Out.FLAKY),
    "failed": lambda o: o.n(*BAD_IN_TOOLS_WITHOUT_ERROR) + o.outside_count(),  # 'N failing' counts hooks too
    "failed_tests": lambda o: o.n(*BAD_IN_TOOLS_WITHOUT_ERROR),
    "hook_failures": Ours.outside_count,
    "errors": lambda o: o.n(Out.ERROR),  # Mocha has none; a throwing test is a failure
    "skipped": lambda o: o.skipped(disabled=False),
    "disabled": lambda o: o.skipped(disabled=True),
    "flaky": lambda o: o.n(Out.FLAKY),
    "retried_then_passed": lambda o: o.n(Out.FLAKY),
}
MOCHA_NOT_COMPARED = {"suites": "describe blocks (Mocha's stats.suites): the matrix has no per-suite rows"}
MOCHA_RETRY = Difference(
    "this.retries(n): only the last attempt is written, with no mark of the retry",
    {"retried_then_passed": +1},
)


def mocha_tool_key(test: dict[str, Any], _tests: list[dict[str, Any]]) -> str:
    return test["fullTitle"]


def mocha_xunit_key(test_id: str) -> str:
    """Mocha's xunit reporter: the `Mocha Tests` suite, classname = the describe path, name = the
    title (its `file` is absolute, so not in the id); fullTitle is `<describe path> <title>`."""
    return " ".join(without_order_marks(test_id).split("::")[1:])


def mocha_jenkins_tool_key(test: dict[str, Any], _tests: list[dict[str, Any]]) -> str:
    """jenkinsMode joins describe titles with ".", so a "." in a title (`describe.skip`) cannot be
    told from a nesting: both keys write every "." as a space."""
    return test["fullTitle"].replace(".", " ")


def mocha_jenkins_key(test_id: str) -> str:
    """jenkinsMode: testsuite `Root Suite.A.B`, name = the test's title; fullTitle is `A B title`."""
    plain = without_order_marks(test_id)
    if "::" not in plain:
        return plain.replace(".", " ")  # a top-level test: jenkinsMode names the Root Suite ""
    suite, name = plain.split("::", 1)
    return f"{suite.removeprefix('Root Suite.')} {name}".replace(".", " ")


MOCHA_PENDING = ("it.skip", "it without a body", "this.skip() at run time", "describe.skip inside a skipped describe")
MOCHA_HOOK_DEFAULT = 'hooks::hooks "before each" hook for "second test never runs"'
MOCHA_HOOK_JENKINS = 'Root Suite.hooks::"before each" hook for "second test never runs"'

# -- Go + gotestsum ---------------------------------------------------------------------------------
GO_WORDS = words(
    {Out.PASSED: "pass", Out.FLAKY: "pass", Out.SKIPPED: "skip"} | dict.fromkeys(BAD_IN_TOOLS_WITHOUT_ERROR, "fail")
)
GO_CATEGORIES: dict[str, Callable[[Ours], int]] = {
    "tests": Ours.total,
    "passed": lambda o: o.n(Out.PASSED, Out.FLAKY),
    "failed": lambda o: o.n(*BAD_IN_TOOLS_WITHOUT_ERROR),
    "errors": lambda o: 0,  # gotestsum's errors are packages that did not build: no testcase (see below)
    "skipped": lambda o: o.skipped(disabled=False),
    "disabled": lambda o: o.skipped(disabled=True),
    "flaky": lambda o: o.n(Out.FLAKY),
    "runs": lambda o: max((r.attempts for _, r in o.inside), default=0),
    "attempts": Ours.attempts,
    "failed_attempts": lambda o: o.reruns() + o.n(*BAD_IN_TOOLS_WITHOUT_ERROR),
}
GO_BUILD_ERROR = Difference(
    'a package that does not build is only `errors="1"` on <testsuites>: no testsuite, no testcase',
    {"errors": +1},
)


def go_short_key(test: dict[str, Any], _tests: list[dict[str, Any]]) -> str:
    return f"{test['package'].rsplit('/', 1)[-1]}::{test['test']}"


# -- CTest ------------------------------------------------------------------------------------------
CTEST_WORDS = words(
    {Out.PASSED: "passed", Out.FLAKY: "passed", Out.SKIPPED: "skipped"}
    | dict.fromkeys(BAD_IN_TOOLS_WITHOUT_ERROR, "failed"),
    disabled="disabled",
)
CTEST_CATEGORIES: dict[str, Callable[[Ours], int]] = {
    "tests": Ours.total,
    "ctest_total": lambda o: o.total() - o.skipped(disabled=True),  # 'out of N' leaves DISABLED out
    "passed": lambda o: o.n(Out.PASSED, Out.FLAKY),
    "failed": lambda o: o.n(*BAD_IN_TOOLS_WITHOUT_ERROR),  # Failed, Timeout and Not Run
    "not_run": lambda o: o.n(Out.ERROR),  # Not Run (no executable, a fixture failed): an error here
    "timeout": lambda o: o.n(Out.TIMEOUT),
    "skipped": lambda o: o.skipped(disabled=False),
    "disabled": lambda o: o.skipped(disabled=True),
    "flaky": lambda o: o.n(Out.FLAKY),
    "retried_then_passed": lambda o: o.n(Out.FLAKY),
}
CTEST_NOT_COMPARED = {"errors": "CTest has no error outcome: its Not Run tests (our error) are in its failed"}
CTEST_TIMEOUT = Difference(
    'a timeout is written `status="fail"` with `<failure message=""/>`: nothing says it timed out',
    {"timeout": +1},
)


def ctest_key(test: dict[str, Any], _tests: list[dict[str, Any]]) -> str:
    """The testsuite is the build name, "(empty)"; the test's directory is not in the XML."""
    return f"(empty)::{test['ctest_name']}"


# -- pytest ---------------------------------------------------------------------------------------------
def pytest_word(result: TestResult) -> str:
    if result.outcome is Out.XPASSED:
        return "failed" if result.strict else "xpassed"  # pytest counts a strict XPASS as failed
    return {
        Out.PASSED: "passed", Out.FLAKY: "passed", Out.FAILED: "failed", Out.TIMEOUT: "failed", Out.CRASHED: "failed",
        Out.ERROR: "error", Out.SKIPPED: "skipped", Out.XFAILED: "xfailed",
    }.get(result.outcome, f"(ours: {result.outcome.value})")  # fmt: skip


PYTEST_CATEGORIES: dict[str, Callable[[Ours], int]] = {
    "tests": Ours.total,
    "passed": lambda o: o.n(Out.PASSED, Out.FLAKY),
    "failed": lambda o: o.n(Out.FAILED, Out.TIMEOUT, Out.CRASHED) + o.xpassed(strict=True),
    "errors": lambda o: o.n(Out.ERROR),
    "skipped": lambda o: o.skipped(disabled=False),
    "disabled": lambda o: o.skipped(disabled=True),
    "xfailed": lambda o: o.n(Out.XFAILED),
    "xpassed": lambda o: o.xpassed(strict=False),
    "flaky": lambda o: o.n(Out.FLAKY),
    "rerun": Ours.reruns,
    "subtests_failed": lambda o: 0,  # a subtest is no test of ours: see the differences
    "subtests_passed": lambda o: 0,
}
PYTEST_DIFFERENCES = (
    Difference(
        "a non-strict XPASS is written with no child, the same as a pass",
        {"passed": -1, "xpassed": +1},
        (("test_outcomes.py::test_xpass_non_strict", "xpassed", "passed"),),
    ),
    Difference(
        "pytest counts a test that passes, then errors in teardown, as passed AND error; it is one error here",
        {"passed": +1},
        (("test_outcomes.py::test_passes_then_teardown_error", "passed", "error"),),
    ),
    Difference(
        "pytest counts a test that fails, then errors in teardown, as failed AND error; it is one failed test"
        " here, the teardown error kept as an extra message",
        {"errors": +1},
    ),
    Difference(
        "pytest counts a failed subtest in 'failed' besides its test; the test is one failed test here",
        {"failed": +1, "subtests_failed": +1},
    ),
    Difference("passed subtests: in no count of pytest's, and not in the XML", {"subtests_passed": +2}),
)

# -- Maven Surefire ---------------------------------------------------------------------------------
SUREFIRE_WORDS = words(
    {Out.PASSED: "passed", Out.FLAKY: "flaky", Out.FAILED: "failed", Out.TIMEOUT: "failed", Out.CRASHED: "failed"}
    | {Out.ERROR: "error", Out.SKIPPED: "skipped"}
)
SUREFIRE_CATEGORIES: dict[str, Callable[[Ours], int]] = {
    "tests": Ours.total,
    "distinct_tests": Ours.total,
    "passed": lambda o: o.n(Out.PASSED, Out.FLAKY),
    "failed": lambda o: o.n(Out.FAILED, Out.TIMEOUT, Out.CRASHED),
    "errors": lambda o: o.n(Out.ERROR),
    "skipped": lambda o: o.skipped(disabled=False),
    "disabled": lambda o: o.skipped(disabled=True),
    "flaky": lambda o: o.n(Out.FLAKY),
}
SUREFIRE_NOT_COMPARED = {"test_sets": "files (one per test class or suite run), not tests"}


def surefire_key(test: dict[str, Any], _tests: list[dict[str, Any]]) -> str:
    """The test set (the testsuite, one per file), the classname where it differs, the method."""
    classname = "" if test["classname"] == test["test_set"] else f"{test['classname']}::"
    return f"{test['test_set']}::{classname}{test['method']}"


def surefire5_key(test: dict[str, Any], _tests: list[dict[str, Any]]) -> str:
    """A @Disabled class is one testcase named after the class: its id is the class alone."""
    return test["test_set"] if test["method"] == test["test_set"] else f"{test['test_set']}::{test['method']}"


def surefire5_our_key(test_id: str) -> str:
    """Surefire's plain report names a @Nested class's test by the outer class; drop `Outer$Inner`."""
    return re.sub(r"::[^:]*\$[^:]*::", "::", test_id)


# -- TestNG -------------------------------------------------------------------------------------------
TESTNG_WORDS = words(
    {Out.PASSED: "PASS", Out.FLAKY: "PASS", Out.SKIPPED: "SKIP"} | dict.fromkeys(BAD_IN_TOOLS_WITHOUT_ERROR, "FAIL")
)
TESTNG_CATEGORIES: dict[str, Callable[[Ours], int]] = {
    "tests": Ours.total,
    "passed": lambda o: o.n(Out.PASSED, Out.FLAKY),
    "failed": lambda o: o.n(*BAD_IN_TOOLS_WITHOUT_ERROR),
    "skipped": lambda o: o.skipped(disabled=False),
    "disabled": lambda o: o.skipped(disabled=True),
    "flaky": lambda o: o.n(Out.FLAKY),
    "retried_then_passed": lambda o: o.n(Out.FLAKY),
    "retried_attempts": Ours.reruns,
}
TESTNG_NOT_COMPARED = {
    "errors": "TestNG has no error outcome: our error (junitreports' <error> for a non-assertion) is in its failed",
    "not_reported_disabled": "@Test(enabled = false) is in no report and in none of TestNG's own counts",
}
TESTNG_RETRY_PASSED = Difference(
    "a retried attempt is not marked as one, so neither is a retry that passed", {"retried_then_passed": +1}
)

# -- retries written inside a testcase (nextest, quick-junit) or as repeated testcases or suites
# (mikepenz's retry inputs, Xcode's repetitions via xcresultparser, Gradle's test-retry plugin) ---------
RETRY_WORDS = words(
    {Out.PASSED: "passed", Out.FLAKY: "passed", Out.FAILED: "failed", Out.TIMEOUT: "failed", Out.CRASHED: "failed"}
    | {Out.ERROR: "error", Out.SKIPPED: "skipped"}
)
RETRY_CATEGORIES: dict[str, Callable[[Ours], int]] = {
    "tests": Ours.total,
    "passed": lambda o: o.n(Out.PASSED, Out.FLAKY),
    "failed": lambda o: o.n(Out.FAILED, Out.TIMEOUT, Out.CRASHED),
    "errors": lambda o: o.n(Out.ERROR),
    "skipped": lambda o: o.skipped(disabled=False),
    "disabled": lambda o: o.skipped(disabled=True),
    "flaky": lambda o: o.n(Out.FLAKY),
    "retried": Ours.reruns,
}
# mikepenz's action has no error category: an <error> run is a failure there.
MIKEPENZ_WORDS = words(
    {Out.PASSED: "passed", Out.FLAKY: "passed", Out.SKIPPED: "skipped"}
    | dict.fromkeys(BAD_IN_TOOLS_WITHOUT_ERROR, "failed")
)
MIKEPENZ_CATEGORIES = RETRY_CATEGORIES | {
    "failed": lambda o: o.n(*BAD_IN_TOOLS_WITHOUT_ERROR),
    "errors": lambda o: 0,  # none in mikepenz's counts: see count_rules
}


def retry_dialect(id_: str, folder: str, file: str, expected: str, *, mikepenz: bool = False) -> Dialect:
    return Dialect(
        id_, folder, (file,), expected, MIKEPENZ_CATEGORIES if mikepenz else RETRY_CATEGORIES,
        MIKEPENZ_WORDS if mikepenz else RETRY_WORDS, lambda t, _: t["name"], lambda i: i,
    )  # fmt: skip


RETRY_SETS = (
    retry_dialect("nextest", "nextest", "fixture-project-junit.xml", "expected.json"),
    retry_dialect("quick-junit", "quick-junit", "basic_report.xml", "expected.json"),
    retry_dialect("xcode-repeated", "xcresultparser", "junit_repeated.xml", "expected.json"),
    retry_dialect("mikepenz-success-first", "mikepenz", "flaky_success_first.xml", "expected-success-first.json",
                  mikepenz=True),
    retry_dialect("mikepenz-all-failures", "mikepenz", "flaky_all_failures.xml", "expected-all-failures.json",
                  mikepenz=True),
    retry_dialect("mikepenz-classname-file", "mikepenz", "flaky_with_classname_file.xml",
                  "expected-classname-file.json", mikepenz=True),
    retry_dialect("mikepenz-mixed-flaky", "mikepenz", "mixed_flaky_and_passed.xml", "expected-mixed-flaky.json",
                  mikepenz=True),
    retry_dialect("gradle-test-retry-flaky", "gradle-test-retry", "TEST-org.test.sample.FlakyTestSuite.xml",
                  "expected-flaky.json"),
    retry_dialect("gradle-test-retry-failing", "gradle-test-retry", "TEST-org.test.sample.FlakyFailingTestSuite.xml",
                  "expected-always-failing.json"),
)  # fmt: skip

# -- the file sets ----------------------------------------------------------------------------------------
DIALECT_SETS = (
    Dialect(
        "jest-default", "jest", ("junit.xml",), "expected.json", JEST_CATEGORIES, JEST_WORDS,
        jest_default_key, after_first_part,
        differences=(
            Difference(
                "test.todo: jest-junit writes a testcase with no child, the same as a pass",
                {"passed": -1, "todo": +1},
                (("pending kinds test.todo: written later", "todo", "passed"),),
            ),
            JEST_RETRY,
            Difference(
                "without reportTestSuiteErrors jest-junit writes nothing for a file that fails to load",
                {"suites_failed_to_run": +1},
            ),
        ),
        not_compared=JEST_NOT_COMPARED, outside=frozenset({JEST_HOOKS_DEFAULT}),
    ),
    Dialect(
        "jest-file-attr", "jest", ("junit-file-attr.xml",), "expected.json", JEST_CATEGORIES, JEST_WORDS,
        jest_file_key, without_order_marks,
        differences=(
            Difference(
                "test.todo: jest-junit writes a testcase with no child, the same as a pass",
                {"passed": -1, "todo": +1},
                (("__tests__/edge.test.js::undefined::pending kinds test.todo: written later", "todo", "passed"),),
            ),
            JEST_RETRY,
        ),
        not_compared=JEST_NOT_COMPARED, outside=frozenset({JEST_HOOKS_FILE, JEST_BROKEN_FILE}),
    ),
    Dialect(
        "mocha-default", "mocha", ("junit.xml",), "expected.json", MOCHA_CATEGORIES, MOCHA_WORDS,
        mocha_tool_key, after_first_part,
        differences=(
            Difference(
                "pending tests are left out of the XML unless includePending is set",
                {"skipped": +4, "tests": +4},
                tuple(
                    (f"pending kinds {title}", "pending", None)
                    for title in MOCHA_PENDING
                ),
            ),
            MOCHA_RETRY,
        ),
        not_compared=MOCHA_NOT_COMPARED, outside=frozenset({MOCHA_HOOK_DEFAULT}),
    ),
    Dialect(
        "mocha-jenkins", "mocha", ("junit-jenkins.xml",), "expected.json", MOCHA_CATEGORIES, MOCHA_WORDS,
        mocha_jenkins_tool_key, mocha_jenkins_key,
        differences=(MOCHA_RETRY,), not_compared=MOCHA_NOT_COMPARED, outside=frozenset({MOCHA_HOOK_JENKINS}),
    ),
    Dialect(
        "mocha-xunit", "mocha-xunit", ("xunit.xml",), "expected.json", MOCHA_CATEGORIES, MOCHA_WORDS,
        mocha_tool_key, mocha_xunit_key, differences=(MOCHA_RETRY,), not_compared=MOCHA_NOT_COMPARED,
    ),
    Dialect(
        "go-full", "gotestsum", ("junit.xml",), "expected.json", GO_CATEGORIES, GO_WORDS,
        lambda t, _: f"{t['package']}::{t['test']}", without_order_marks, differences=(GO_BUILD_ERROR,),
    ),
    Dialect(
        "go-short", "gotestsum", ("junit-short.xml",), "expected.json", GO_CATEGORIES, GO_WORDS,
        go_short_key, without_order_marks, differences=(GO_BUILD_ERROR,),
    ),
    Dialect(
        "go-rerun", "gotestsum", ("junit-rerun.xml",), "expected-rerun.json", GO_CATEGORIES, GO_WORDS,
        lambda t, _: f"{t['package']}::{t['test']}", without_order_marks,
    ),
    Dialect(
        "ctest", "ctest", ("junit.xml",), "expected.json", CTEST_CATEGORIES, CTEST_WORDS,
        ctest_key, without_order_marks, differences=(CTEST_TIMEOUT,), not_compared=CTEST_NOT_COMPARED,
    ),
    Dialect(
        "ctest-repeat", "ctest", ("junit-repeat.xml",), "expected-repeat.json", CTEST_CATEGORIES, CTEST_WORDS,
        ctest_key, without_order_marks,
        differences=(
            CTEST_TIMEOUT,
            Difference(
                "--repeat until-pass: only the last attempt is written, as a plain pass", {"retried_then_passed": +1}
            ),
        ),
        not_compared=CTEST_NOT_COMPARED,
    ),
    Dialect(
        "pytest-xunit1", "pytest", ("junit-xunit1.xml",), "expected.json", PYTEST_CATEGORIES, pytest_word,
        lambda t, _: t["name"], lambda i: i, differences=PYTEST_DIFFERENCES,
    ),
    Dialect(
        "pytest-xunit2", "pytest", ("junit-xunit2.xml",), "expected.json", PYTEST_CATEGORIES, pytest_word,
        lambda t, _: t["name"], lambda i: i, differences=PYTEST_DIFFERENCES,
    ),
    # PyTorch CI: PyTorch's own JUnit writer (test/conftest.py) on the same tests: each rerun is a
    # <rerun> child (pytest-rerunfailures 16 also starts a <testcase> per run); the same counts.
    Dialect(
        "pytorch-ci", "pytorch-ci", ("junit-reruns.xml",), "expected.json", PYTEST_CATEGORIES, pytest_word,
        lambda t, _: t["name"], lambda i: i, differences=PYTEST_DIFFERENCES,
    ),
    # One CI job run twice (plain pytest, no rerunfailures): two reports sharing every id. The later
    # report decides (docs/outcomes.md, "Repeats"), in either order; nothing turns flaky.
    Dialect(
        "pytest-jobrerun", "pytest-jobrerun", ("junit-run1.xml", "junit-run2.xml"), "expected-run2.json",
        PYTEST_CATEGORIES, pytest_word, lambda t, _: t["name"], lambda i: i,
    ),
    Dialect(
        "pytest-jobrerun-reversed", "pytest-jobrerun", ("junit-run2.xml", "junit-run1.xml"), "expected-run1.json",
        PYTEST_CATEGORIES, pytest_word, lambda t, _: t["name"], lambda i: i,
    ),
    Dialect(
        "surefire-junit4", "surefire",
        tuple(f"junit/TEST-com.example.{c}.xml" for c in (
            "AllTests", "a.CalcTest", "b.CalcTest", "edge.NestedTest", "edge.OutcomesTest", "edge.ParamsTest",
            "inherit.FastModeTest", "inherit.SlowModeTest",
        )),
        "expected.json", SUREFIRE_CATEGORIES, SUREFIRE_WORDS, surefire_key, lambda i: i,
        differences=(
            Difference(
                "Surefire counts a failing test that two test sets ran (CalcTest directly and through the AllTests"
                " suite) once; each file's testcase is a row of its own here (the testsuite is part of the id)",
                {"tests": -1, "failed": -1},
            ),
            Difference(
                "distinct_tests merges the two test sets' runs by class and method; they are two rows each here",
                {"distinct_tests": -2},
            ),
        ),
        not_compared=SUREFIRE_NOT_COMPARED,
    ),
    Dialect(
        "surefire-junit5", "surefire-junit5",
        tuple(
            f"junit/TEST-com.example.{c}.xml"
            for c in ("a.CalcTest", "b.CalcTest", "edge.DisabledClassTest", "edge.OutcomesTest")
        ),
        "expected.json", SUREFIRE_CATEGORIES, SUREFIRE_WORDS,
        surefire5_key, surefire5_our_key, not_compared=SUREFIRE_NOT_COMPARED,
    ),
    Dialect(
        "testng-junitreports", "testng",
        tuple(f"junitreports/TEST-com.example.{c}.xml" for c in ("a.CalcTest", "b.CalcTest", "edge.OutcomesTest")),
        "expected.json", TESTNG_CATEGORIES, TESTNG_WORDS,
        lambda t, _: f"{t['class']}::{t['method']}", without_order_marks,
        differences=(
            Difference(
                "junitreports writes a retried attempt as a <failure> testcase: the XML cannot say TestNG"
                " recorded it as a SKIP",
                {"failed": -2, "skipped": +2, "retried_attempts": +2},
                (
                    ("com.example.edge.OutcomesTest::flaky", "SKIP", "FAIL"),
                    ("com.example.edge.OutcomesTest::alwaysFails", "SKIP", "FAIL"),
                ),
            ),
            TESTNG_RETRY_PASSED,
        ),
        not_compared=TESTNG_NOT_COMPARED,
    ),
    Dialect(
        "testng-xml-reporter", "testng", ("xml-reporter/all.xml", "xml-reporter/fast.xml"), "expected.json",
        TESTNG_CATEGORIES, TESTNG_WORDS, lambda t, _: f"{t['test']}::{t['class']}::{t['method']}", without_order_marks,
        differences=(
            Difference(
                "xml-reporter writes a retried attempt as <skipped/>, the same as a real skip: the XML cannot"
                " say it was retried",
                {"retried_attempts": +2},
            ),
            TESTNG_RETRY_PASSED,
        ),
        not_compared=TESTNG_NOT_COMPARED,
    ),
)  # fmt: skip
DIALECT_SETS = DIALECT_SETS + RETRY_SETS
BY_ID = {d.id: d for d in DIALECT_SETS}


def expected_of(dialect: Dialect) -> dict[str, Any]:
    return json.loads((DIALECTS / dialect.folder / dialect.expected).read_text(encoding="utf-8"))


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in this process (the fast tier starts no subprocess): `harness import` and `merge`."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    done = subprocess.CompletedProcess(["harness", *args], code, out.getvalue(), err.getvalue())
    assert done.returncode == 0, f"harness {args[0]} failed ({done.returncode}):\n{done.stderr}"
    assert "Traceback" not in done.stderr
    return done


def import_and_merge(root: Path, sets: Iterable[tuple[str, list[Path]]]) -> Matrix:
    """`harness import FILES --backend cpu --cell-id ID` per set, then one `harness merge`."""
    cells = []
    for cell_id, files in sets:
        done = harness("import", *map(str, files), "--backend", "cpu", "--cell-id", cell_id, "--results-dir", str(root))
        cells.append(done.stdout.strip().splitlines()[-1])
    out = root / "matrix.json"
    harness("merge", *cells, "-o", str(out))
    return load_matrix(out)


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    sets = [(d.id, [DIALECTS / d.folder / f for f in d.files]) for d in DIALECT_SETS]
    return import_and_merge(tmp_path_factory.mktemp("dialects"), sets)


def ours_of(matrix: Matrix, dialect: Dialect) -> Ours:
    rows = [(row.id, result) for row, result in matrix.results(dialect.id)]
    return Ours(
        inside=tuple((i, r) for i, r in rows if i not in dialect.outside),
        outside=tuple((i, r) for i, r in rows if i in dialect.outside),
    )


# -- the tests ------------------------------------------------------------------------------------------
def test_every_fixture_file_is_under_test() -> None:
    """Every XML file an expected*.json describes is imported by one of the sets above."""
    described = {
        path.parent.relative_to(DIALECTS) / name
        for path in DIALECTS.glob("*/expected*.json")
        for name in json.loads(path.read_text(encoding="utf-8"))["junit_files"]
    }
    used = {Path(d.folder) / f for d in DIALECT_SETS for f in d.files}
    assert used == described
    assert all((DIALECTS / path).is_file() for path in used)
    for dialect in DIALECT_SETS:
        assert set(dialect.files) <= set(expected_of(dialect)["junit_files"]), dialect.id


@pytest.mark.parametrize("dialect", DIALECT_SETS, ids=lambda d: d.id)
def test_counts_are_the_tools_own(matrix: Matrix, dialect: Dialect) -> None:
    tool = expected_of(dialect)["counts"]
    assert set(dialect.categories) | set(dialect.not_compared) == set(tool), "every count compared or named"
    assert not set(dialect.categories) & set(dialect.not_compared)
    for difference in dialect.differences:
        assert set(difference.counts) <= set(dialect.categories), difference.what
        assert any(difference.counts.values()) or difference.tests, (
            f"a difference that changes nothing: {difference.what}"
        )
    column = matrix.column(dialect.id)
    assert column is not None and column.errors == (), column
    ours = ours_of(matrix, dialect)
    table = {
        category: (tool[category], count(ours), sum(d.counts.get(category, 0) for d in dialect.differences))
        for category, count in dialect.categories.items()
    }
    wrong = {c: f"tool {t}, ours {o}, named differences {d:+d}" for c, (t, o, d) in table.items() if o + d != t}
    assert not wrong, wrong
    assert sum(column.counts.values()) == ours.total() + ours.outside_count()


@pytest.mark.parametrize("dialect", DIALECT_SETS, ids=lambda d: d.id)
def test_per_test_outcomes_are_the_tools_own(matrix: Matrix, dialect: Dialect) -> None:
    records = expected_of(dialect)["tests"]
    expected: Counter[tuple[str, str]] = Counter(
        (dialect.tool_key(t, records), dialect.tool_outcome(t)) for t in records
    )
    for difference in dialect.differences:
        for key, theirs, mine in difference.tests:
            if theirs is not None:
                assert expected[(key, theirs)] > 0, f"the tool reports no {theirs} {key!r} ({difference.what})"
                expected[(key, theirs)] -= 1
            if mine is not None:
                expected[(key, mine)] += 1
    ours = ours_of(matrix, dialect)
    got = Counter((dialect.our_key(i), dialect.word(r)) for i, r in ours.inside)
    assert (+expected - got, +got - expected) == (Counter(), Counter())


@pytest.mark.parametrize("dialect", [d for d in DIALECT_SETS if d.outside], ids=lambda d: d.id)
def test_failures_outside_any_test_are_error_rows(matrix: Matrix, dialect: Dialect) -> None:
    """jest-junit's stand-ins for a file that failed outside its tests (a throwing afterAll, a file
    that did not load) and Mocha's failed hooks: one error row each, never a failed test, and
    the pair jest-junit writes for a file that did not load is one row."""
    ours = ours_of(matrix, dialect)
    assert {i for i, _ in ours.outside} == dialect.outside
    for test_id, result in ours.outside:
        assert result.outcome is Out.ERROR, test_id
        assert result.message and ("hook" in result.message or "outside its tests" in result.message), result


def test_pytest_teardown_error_after_a_failure_is_kept(matrix: Matrix) -> None:
    results = {row.id: r for row, r in matrix.results("pytest-xunit1")}
    failing = results["test_outcomes.py::test_fails_then_teardown_error"]
    assert failing.outcome is Out.FAILED
    assert any(m.startswith("teardown: ") and "fixture teardown failed" in m for m in failing.extra_messages)


def test_reruns_keep_their_attempts(matrix: Matrix) -> None:
    """gotestsum --rerun-fails: each test has as many attempts as go test ran; only a failure
    followed by a pass is flaky."""
    dialect = BY_ID["go-rerun"]
    records = expected_of(dialect)["tests"]
    attempts = {dialect.tool_key(t, records): len(t["attempts"]) for t in records}
    ours = {dialect.our_key(i): r.attempts for i, r in ours_of(matrix, dialect).inside}
    assert ours == attempts
    flaky = {i for i, r in ours_of(matrix, dialect).inside if r.outcome is Out.FLAKY}
    assert flaky == {"example.com/dialect/edge::TestFlaky"}


@pytest.mark.parametrize("dialect", RETRY_SETS, ids=lambda d: d.id)
def test_retries_are_the_producers_own(matrix: Matrix, dialect: Dialect) -> None:
    """Each test's retried runs, as the producer counts them: every failed attempt kept."""
    records = expected_of(dialect)["tests"]
    retries = {dialect.tool_key(t, records): t["retries"] for t in records}
    assert {dialect.our_key(i): r.attempts - 1 for i, r in ours_of(matrix, dialect).inside} == retries


def test_pytorch_ci_rerun_elements_are_failed_attempts(matrix: Matrix) -> None:
    """PyTorch's writer puts each rerun's failure in a <rerun> element: failed then passed is
    flaky with the rerun's text, failing every run is failed with every attempt counted."""
    results = {row.id: r for row, r in matrix.results("pytorch-ci")}
    flaky = results["test_outcomes.py::test_rerun_fails_twice_then_passes"]
    assert (flaky.outcome, flaky.attempts) == (Out.FLAKY, 3)
    assert flaky.message and "attempt 1" in flaky.message
    always = results["test_outcomes.py::test_rerun_always_fails"]
    assert (always.outcome, always.attempts) == (Out.FAILED, 3)
    assert any("attempt 1" in m for m in always.extra_messages)


def test_surefire_attempts_and_reruns(matrix: Matrix) -> None:
    dialect = BY_ID["surefire-junit4"]
    records = expected_of(dialect)["tests"]
    attempts = {dialect.tool_key(t, records): len(t["attempts"]) for t in records}
    assert {i: r.attempts for i, r in ours_of(matrix, dialect).inside} == attempts


def test_ctest_disabled_and_not_run(matrix: Matrix) -> None:
    results = {row.id: r for row, r in matrix.results("ctest")}
    disabled = results["(empty)::disabled"]
    assert (disabled.outcome, disabled.skip_class) == (Out.SKIPPED, SkipClass.DISABLED)
    assert results["(empty)::missing_executable"].message == "not run: Unable to find executable"
    assert results["(empty)::needs_db"].message == "not run: Fixture dependency failed"
    assert results["(empty)::skip_return_code"].message == "SKIP_RETURN_CODE=77"


# -- real output made here: go test -count=2 (not a rerun) ------------------------------------------------
GO_PROJECT = DIALECTS / "gotestsum" / "project"


@pytest.fixture(scope="module")
@slow_fixture("builds and runs Go tests with go test")
def go_count_twice(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    if not (shutil.which("go") and shutil.which("gotestsum")):
        if in_ci():
            pytest.fail("go and gotestsum are missing (Debian: golang-go gotestsum)")
        pytest.skip("go and gotestsum are missing (Debian: golang-go gotestsum)")
    root = tmp_path_factory.mktemp("go-count")
    project = Path(shutil.copytree(GO_PROJECT, root / "project"))
    (root / "marks").mkdir()
    env = os.environ | {
        "GOPROXY": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "GOWORK": "off", "CGO_ENABLED": "0",
        "GOCACHE": str(root / "gocache"), "GOPATH": str(root / "gopath"), "FLAKY_MARKER_DIR": str(root / "marks"),
    }  # fmt: skip
    junit = root / "junit.xml"
    argv = [
        "gotestsum",
        "--format",
        "testname",
        "--no-color",
        "--junitfile",
        str(junit),
        "--",
        "-count=2",
        "./calc",
        "./edge",
    ]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr  # 1: some tests failed
    assert "DONE 38 tests, 4 skipped, 11 failures" in done.stdout, done.stdout
    subprocess.run(["go", "clean", "-cache"], env=env, capture_output=True, check=False, timeout=120)
    return import_and_merge(root / "results", [("go-count", [junit])])


def test_go_count_repeats_are_runs_of_one_test_and_passes_are_never_flaky(go_count_twice: Matrix) -> None:
    """`go test -count=2` runs every test twice; gotestsum writes both runs as testcases with the
    same name, like --rerun-fails' attempts. Both are runs of one test (the retry rule,
    docs/outcomes.md "Repeats"): passing twice is passed with two attempts, never flaky; failing
    twice is failed; TestFlaky, failing on its first run only, is flaky (it failed and passed).
    gotestsum counts runs: every one of its 38 is an attempt here."""
    results = {row.id: r for row, r in go_count_twice.results("go-count")}
    calc, edge = "example.com/dialect/calc", "example.com/dialect/edge"
    assert (results[f"{calc}::TestAdd"].outcome, results[f"{calc}::TestAdd"].attempts) == (Out.PASSED, 2)
    assert f"{calc}::TestAdd (2)" not in results
    assert (results[f"{edge}::TestSkipped"].outcome, results[f"{edge}::TestSkipped"].attempts) == (Out.SKIPPED, 2)
    assert (results[f"{calc}::TestDivide"].outcome, results[f"{calc}::TestDivide"].attempts) == (Out.FAILED, 2)
    flaky = {i for i, r in results.items() if r.outcome is Out.FLAKY}
    assert flaky == {f"{edge}::TestFlaky"}
    # gotestsum's 38 testcases: 11 tests passing twice, 2 skipped twice, 5 failing twice, TestFlaky.
    counts = Counter(r.outcome for r in results.values())
    assert counts == Counter({Out.PASSED: 11, Out.SKIPPED: 2, Out.FAILED: 5, Out.FLAKY: 1})
    assert sum(r.attempts for r in results.values()) == 38


# -- hand-made hostile input ---------------------------------------------------------------------------
def junit_cell(root: Path, cell_id: str, xml: str) -> Path:
    path = root / f"{cell_id}.xml"
    path.write_text(textwrap.dedent(xml).strip(), encoding="utf-8")
    return path


@pytest.mark.slow  # runs the dialect's real producer
@pytest.mark.parametrize(
    "xml",
    [
        "<testsuite><testcase/><testcase/><testcase/></testsuite>",
        '<testsuites name="pytest tests"><testsuite name="pytest">'
        "<testcase/><testcase/><testcase/></testsuite></testsuites>",
        '<testsuites><testsuite name="p"><properties><property name="go.version" value="go1.22"/></properties>'
        "<testcase/><testcase/><testcase/></testsuite></testsuites>",
    ],
    ids=["generic", "pytest-root", "go-root"],
)
def test_testcases_without_attributes_are_each_one_test(tmp_path: Path, xml: str) -> None:
    path = junit_cell(tmp_path, "bare", xml)
    matrix = import_and_merge(tmp_path / "results", [("bare", [path])])
    results = [r for _, r in matrix.results("bare")]
    assert [r.outcome for r in results] == [Out.PASSED] * 3
    assert all(r.attempts == 1 for r in results)
