"""Write expected.json from Surefire's own reports: its console summary and its plain-text reports
(-Dsurefire.reportFormat=plain: one .txt per test set listing every attempt), never from the XML.

usage: expected_from_surefire.py MAVEN_CONSOLE REPORTS_DIR PRODUCER COMMAND > expected.json
"""

import json
import re
import sys
from pathlib import Path

TOTAL = re.compile(
    r"^\[\w+\] (?P<line>Tests run: (?P<run>\d+), Failures: (?P<failures>\d+), Errors: (?P<errors>\d+), "
    r"Skipped: (?P<skipped>\d+)(?:, Flakes: (?P<flakes>\d+))?)$"
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# "method(class)  Time elapsed: 0.1 s  <<< FAILURE!" (JUnit 4 provider) or "method  Time elapsed: ..." (JUnit
# Platform provider: no class, so methods of nested classes are told apart only by their order)
ATTEMPT = re.compile(
    r"^(?P<method>.*?)(?:\((?P<cls>[\w.$]+)\))?"
    r"(?: skipped|  Time elapsed: [\d.]+ s(?:  <<< (?P<kind>FAILURE|ERROR)!)?)$"
)


def result(attempts: list[str], reruns: int) -> str:
    """Surefire 2.22's DefaultReporterFactory.getTestResultType, for one test's attempts."""
    if "failure" in attempts or "error" in attempts:
        if "success" in attempts and reruns > 0:
            return "flake"
        return "error" if "error" in attempts else "failure"
    return "success" if "success" in attempts else "skipped"


def main() -> None:
    console_path, reports_dir, producer, command = sys.argv[1:5]
    text = Path(console_path).read_text(encoding="utf-8")
    console = [ANSI.sub("", line) for line in text.splitlines()]
    totals = [m for line in console if (m := TOTAL.match(line))]
    assert totals, "no Surefire summary line"
    total = totals[-1]
    rerun_option = re.search(r"-Dsurefire.rerunFailingTestsCount=(\d+)", command)
    reruns = int(rerun_option[1]) if rerun_option else 0

    # every attempt, per test set (one .txt report per class Surefire ran: a suite is its own test set)
    per_set: dict[tuple[str, str, str, int], list[str]] = {}
    for report in sorted(Path(reports_dir).glob("*.txt")):
        lines = report.read_text(encoding="utf-8").splitlines()
        test_set = next(line.removeprefix("Test set: ") for line in lines if line.startswith("Test set: "))
        seen: dict[tuple[str, str], int] = {}
        for line in lines:
            if match := ATTEMPT.match(line):
                kind = match["kind"] or ("skipped" if line.endswith(" skipped") else "success")
                cls = match["cls"] or test_set
                # without reruns every line is its own test (two nested classes' "size" are two tests)
                occurrence = seen[cls, match["method"]] = seen.get((cls, match["method"]), -1) + 1
                key = (test_set, cls, match["method"], occurrence if reruns == 0 else 0)
                per_set.setdefault(key, []).append(kind.lower())

    # Surefire's own totals merge attempts by class and method over all test sets, then count a test
    # once, except that every successful run of a test that only succeeded counts.
    merged: dict[tuple[str, str, int], list[str]] = {}
    for (_set, cls, method, occurrence), attempts in per_set.items():
        merged.setdefault((cls, method, occurrence), []).extend(attempts)
    mine = {"run": 0, "failures": 0, "errors": 0, "skipped": 0, "flakes": 0}
    for attempts in merged.values():
        kind = result(attempts, reruns)
        mine["run"] += attempts.count("success") if kind == "success" else 1
        mine[
            {"success": "run", "failure": "failures", "error": "errors", "skipped": "skipped", "flake": "flakes"}[kind]
        ] += 0 if kind == "success" else 1
    tool = {k: int(total[k] or 0) for k in mine}
    assert mine == tool, f"plain reports {mine} disagree with Surefire's summary {tool}"

    outcome = {"success": "passed", "failure": "failed", "error": "error", "skipped": "skipped", "flake": "flaky"}
    tests = [
        {
            "name": f"{cls}.{method}",
            "test_set": test_set,
            "classname": cls,
            "method": method,
            "outcome": outcome[result(attempts, reruns)],
            "attempts": attempts,
        }
        for (test_set, cls, method, _occurrence), attempts in per_set.items()
    ]
    passed = tool["run"] - tool["failures"] - tool["errors"] - tool["skipped"]
    results_section = console[next(i for i, line in enumerate(console) if line.endswith("Results:")) :]
    expected = {
        "producer": producer,
        "command": command,
        "counts_from": "Surefire's console summary 'Tests run: ..., Flakes: ...', checked against its plain-text "
        "reports (target/surefire-reports/*.txt, -Dsurefire.reportFormat=plain) that list every attempt",
        "junit_files": sorted(f"junit/{p.name}" for p in Path(reports_dir).glob("TEST-*.xml")),
        "summary": total["line"],
        "counts": {
            "tests": tool["run"],
            "passed": passed,
            "failed": tool["failures"],
            "errors": tool["errors"],
            "skipped": tool["skipped"],
            "disabled": 0,
            "flaky": tool["flakes"],
            "distinct_tests": len(merged),
            "test_sets": len({key[0] for key in per_set}),
        },
        "count_rules": {
            "tests": "Surefire's 'Tests run': attempts merged by class and method across ALL test sets, one per "
            "test, except that a test that only succeeded counts once per successful run (a class run directly "
            "and by a suite: its passing test counts 2, its failing test 1)",
            "passed": "Tests run - Failures - Errors - Skipped: includes the flakes (flaky is a subset of passed)",
            "failed": "Surefire's 'Failures': tests whose every attempt failed (assertion errors)",
            "errors": "Surefire's 'Errors': tests whose every attempt failed and one threw a non-assertion",
            "skipped": "Surefire's 'Skipped': JUnit 4 @Ignore, failed assumptions, JUnit 5 @Disabled (a @Disabled "
            "class is ONE skipped test named after the class, whatever its number of tests)",
            "disabled": "Surefire has no disabled count: JUnit 5 @Disabled is in Skipped, JUnit 4 has no such state",
            "flaky": "Surefire's 'Flakes': failed or errored, then passed on a rerun (rerunFailingTestsCount)",
            "per-test-set lines": "the 'Tests run' line of each test set counts ATTEMPTS, reruns included",
        },
        "tool_counts": tool,
        "results_section": [
            line for line in results_section[: results_section.index("[INFO] BUILD FAILURE")] if line != "[INFO] "
        ],
        "tests": tests,
    }
    json.dump(expected, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
