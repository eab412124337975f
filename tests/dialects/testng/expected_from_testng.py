"""Write expected.json from TestNG's own reports: its console summary and testng-results.xml
(TestNG's native result format, one <test-method> per invocation), never from the JUnit XML.

usage: expected_from_testng.py CONSOLE_TXT TESTNG_RESULTS_XML PRODUCER COMMAND JUNIT_FILES... > expected.json
"""

import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

SUMMARY = re.compile(r"^Total tests run: (\d+), Failures: (\d+), Skips: (\d+)$")


def main() -> None:
    console_path, results_path, producer, command, *junit_files = sys.argv[1:]
    console = Path(console_path).read_text(encoding="utf-8").splitlines()
    summary = [line for line in console if SUMMARY.match(line)]
    assert len(summary) == 1, summary
    total, failures, skips = map(int, SUMMARY.match(summary[0]).groups())
    root = ET.parse(results_path).getroot()

    tests = []
    for test in root.iter("test"):
        for cls in test.iter("class"):
            invocations: list[dict] = []
            for method in cls.iter("test-method"):
                if method.get("is-config") == "true":
                    continue
                params = [(v.text or "").strip() for v in method.iter("value")]
                exception = method.find("exception")
                invocations.append(
                    {
                        "name": f"{test.get('name')}/{cls.get('name')}.{method.get('name')}"
                        + (f"({', '.join(params)})" if params else ""),
                        "test": test.get("name"),
                        "class": cls.get("name"),
                        "method": method.get("name"),
                        "params": params,
                        "signature": method.get("signature"),
                        "outcome": method.get("status"),
                        "exception": exception.get("class") if exception is not None else None,
                    }
                )
            # TestNG 6.9 records a retried attempt as SKIP (with the failure's exception) and then runs
            # the same method again; a SKIP followed by another result of the same signature is a retry.
            for i, inv in enumerate(invocations):
                later = [x for x in invocations[i + 1 :] if x["signature"] == inv["signature"]]
                inv["retried"] = inv["outcome"] == "SKIP" and bool(later) and not inv["params"]
            tests.extend(invocations)

    statuses = Counter(t["outcome"] for t in tests)
    assert (len(tests), statuses["FAIL"], statuses["SKIP"]) == (total, failures, skips), (
        f"testng-results.xml {statuses} disagrees with the summary {summary[0]}"
    )
    assert int(root.get("total")) == total
    retried_then_passed = sum(
        1
        for i, t in enumerate(tests)
        if t["retried"]
        and next(x for x in tests[i + 1 :] if x["signature"] == t["signature"] and x["test"] == t["test"])["outcome"]
        == "PASS"
    )
    expected = {
        "producer": producer,
        "command": command,
        "counts_from": "TestNG's console summary, checked against its own testng-results.xml (one <test-method> "
        "per invocation, status PASS/FAIL/SKIP)",
        "junit_files": junit_files,
        "summary": summary[0],
        "counts": {
            "tests": total,
            "passed": statuses["PASS"],
            "failed": failures,
            "errors": 0,
            "skipped": skips,
            "disabled": 0,
            "flaky": 0,
            "retried_attempts": sum(1 for t in tests if t["retried"]),
            "retried_then_passed": retried_then_passed,
            "not_reported_disabled": 1,
        },
        "count_rules": {
            "tests": "TestNG's 'Total tests run': every invocation in every <test> of the suite: a class in two "
            "<test>s counts twice, invocationCount and data-provider rows count each, a retried attempt counts",
            "passed": "status PASS invocations (not printed by TestNG: total - failures - skips)",
            "failed": "TestNG's 'Failures': FAIL invocations, assertion or any other exception alike",
            "errors": "TestNG has no error outcome",
            "skipped": "TestNG's 'Skips': SkipException, methods whose dependsOnMethods failed, AND every "
            "attempt an IRetryAnalyzer retried (TestNG 6.9 records it as SKIP)",
            "disabled": "@Test(enabled = false) is not run and appears in no report and no count "
            "(not_reported_disabled says how many the project has)",
            "flaky": "TestNG has no flaky outcome: a retried test that passes is a PASS after a SKIP",
            "retried_then_passed": "a retried SKIP followed by a PASS of the same method in testng-results.xml",
        },
        "tests": tests,
    }
    json.dump(expected, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
