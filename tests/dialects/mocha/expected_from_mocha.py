"""Write expected.json from Mocha's own reports (--reporter json, spec summary), never from the JUnit XML.

usage: expected_from_mocha.py MOCHA_JSON SPEC_CONSOLE_TXT PROJECT_DIR PRODUCER COMMAND COUNTS_FROM > expected.json
"""

import json
import re
import sys
from collections import Counter
from pathlib import Path


def main() -> None:
    report_path, console_path, project, producer, command, counts_from = sys.argv[1:7]
    report = json.loads(Path(report_path).read_text(encoding="utf-8"))
    console = Path(console_path).read_text(encoding="utf-8")
    summary = [line.strip() for line in console.splitlines() if re.match(r"^\s+\d+ (passing|pending|failing)", line)]
    root = Path(project).resolve()
    stats = report["stats"]

    def file_of(entry: dict) -> str:
        return Path(entry["file"]).resolve().relative_to(root).as_posix()

    pending_keys = Counter((e["file"], e["fullTitle"]) for e in report["pending"])
    tests = []
    # report["tests"] is every test that ended (passed, failed or pending) in run order; the JSON
    # reporter drops the state, so: a non-empty err means failed, a pending entry means pending.
    for entry in report["tests"]:
        key = (entry["file"], entry["fullTitle"])
        if entry["err"]:
            outcome = "failed"
        elif pending_keys[key]:
            pending_keys[key] -= 1
            outcome = "pending"
        else:
            outcome = "passed"
        tests.append(
            {
                "name": f"{file_of(entry)} › {entry['fullTitle']}",
                "file": file_of(entry),
                "fullTitle": entry["fullTitle"],
                "title": entry["title"],
                "outcome": outcome,
                "currentRetry": entry["currentRetry"],
            }
        )
    test_failures = Counter((file_of(e), e["fullTitle"]) for e in report["tests"] if e["err"])
    hook_failures = []
    for entry in report["failures"]:
        key = (file_of(entry), entry["fullTitle"])
        if test_failures[key]:
            test_failures[key] -= 1
        else:
            hook_failures.append({"name": f"{key[0]} › {entry['fullTitle']}", "title": entry["title"]})

    outcomes = Counter(t["outcome"] for t in tests)
    assert len(tests) == stats["tests"], "per-test list disagrees with Mocha's stats.tests"
    assert outcomes["passed"] == stats["passes"]
    assert outcomes["pending"] == stats["pending"]
    assert outcomes["failed"] + len(hook_failures) == stats["failures"]
    expected = {
        "producer": producer,
        "command": command,
        "counts_from": counts_from,
        "junit_files": ["junit.xml", "junit-jenkins.xml"],  # written by make.sh
        "summary": "\n".join(summary),
        "counts": {
            "tests": stats["tests"],
            "passed": stats["passes"],
            "failed": stats["failures"],
            "errors": 0,
            "skipped": stats["pending"],
            "disabled": 0,
            "flaky": 0,
            "failed_tests": outcomes["failed"],
            "hook_failures": len(hook_failures),
            "retried_then_passed": sum(1 for t in tests if t["outcome"] == "passed" and t["currentRetry"] > 0),
            "suites": stats["suites"],
        },
        "count_rules": {
            "tests": "Mocha's stats.tests: tests that ended (passed, failed, pending); tests a failed hook "
            "kept from running are in no count at all",
            "failed": "Mocha's stats.failures ('N failing'): failed tests PLUS failed hooks "
            '(a hook failure is reported as a failure named \'"before each" hook for "<test>"\')',
            "errors": "Mocha has no error outcome: a throw or a timeout is a failure",
            "skipped": "Mocha's stats.pending: it.skip, it() without a body, this.skip() and describe.skip",
            "disabled": "Mocha has no disabled state",
            "flaky": "Mocha has no flaky outcome: a test retried by this.retries(n) that passes is a pass",
            "retried_then_passed": "passed tests with currentRetry > 0 in --reporter json (not in the JUnit XML)",
        },
        "tool_counts": {k: v for k, v in stats.items() if k not in ("start", "end", "duration")},
        "hook_failures": hook_failures,
        "tests": tests,
    }
    json.dump(expected, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
