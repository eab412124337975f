"""Write expected.json from Jest's own JSON report (jest --json), never from the JUnit XML.

usage: expected_from_jest.py JEST_JSON CONSOLE_TXT PROJECT_DIR PRODUCER COMMAND COUNTS_FROM > expected.json
"""

import json
import re
import sys
from pathlib import Path


def main() -> None:
    report_path, console_path, project, producer, command, counts_from = sys.argv[1:7]
    report = json.loads(Path(report_path).read_text(encoding="utf-8"))
    console = Path(console_path).read_text(encoding="utf-8")
    summary = [line for line in console.splitlines() if re.match(r"^(Test Suites|Tests):", line)]

    tests = []
    suites = []
    root = Path(project).resolve()
    for suite in report["testResults"]:
        file = Path(suite["name"]).resolve().relative_to(root).as_posix()
        suites.append(
            {
                "file": file,
                "status": suite["status"],
                "tests": sum(1 for case in suite["assertionResults"] if "title" in case),
                "failure": (suite["message"].strip().splitlines() or [""])[0].strip(" ●"),
            }
        )
        for case in suite["assertionResults"]:
            if "title" not in case:
                # Not Jest's: jest-junit's reportTestSuiteErrors pushes a title-less {"status": "error"}
                # entry into the shared results of a file that failed to load, before --json is written.
                continue
            tests.append(
                {
                    "name": " › ".join([file, *case["ancestorTitles"], case["title"]]),
                    "file": file,
                    "ancestors": case["ancestorTitles"],
                    "title": case["title"],
                    "outcome": case["status"],
                    "invocations": case["invocations"],
                }
            )

    def count(status: str) -> int:
        return sum(1 for t in tests if t["outcome"] == status)

    assert len(tests) == report["numTotalTests"], "per-test list disagrees with Jest's total"
    assert count("passed") == report["numPassedTests"]
    assert count("failed") == report["numFailedTests"]
    assert count("pending") == report["numPendingTests"]
    assert count("todo") == report["numTodoTests"]
    expected = {
        "producer": producer,
        "command": command,
        "counts_from": counts_from,
        "junit_files": ["junit.xml", "junit-file-attr.xml"],  # written by make.sh
        "summary": "\n".join(summary),
        "counts": {
            "tests": report["numTotalTests"],
            "passed": report["numPassedTests"],
            "failed": report["numFailedTests"],
            "errors": 0,
            "skipped": report["numPendingTests"],
            "todo": report["numTodoTests"],
            "disabled": 0,
            "flaky": 0,
            "retried_then_passed": sum(1 for t in tests if t["outcome"] == "passed" and t["invocations"] > 1),
            "suites": report["numTotalTestSuites"],
            "suites_failed": report["numFailedTestSuites"],
            "suites_failed_to_run": report["numRuntimeErrorTestSuites"],
        },
        "count_rules": {
            "tests": "Jest's numTotalTests = passed + failed + pending + todo; a file that fails to load adds none",
            "errors": "Jest has no error outcome: a throwing test is failed",
            "skipped": "Jest's numPendingTests: test.skip and every test inside describe.skip; todo is NOT in it",
            "todo": "Jest's numTodoTests: test.todo, counted in tests, neither skipped nor passed",
            "disabled": "Jest has no disabled state",
            "flaky": "Jest has no flaky outcome: a test retried by jest.retryTimes that passes is counted passed",
            "retried_then_passed": "passed tests whose invocations > 1 in jest --json (not visible in jest-junit XML)",
        },
        "tool_counts": {k: v for k, v in report.items() if k.startswith("num")},
        "suites": suites,
        "tests": tests,
    }
    json.dump(expected, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
