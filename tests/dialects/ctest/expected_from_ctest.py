"""Write an expected JSON from CTest's own console report and `ctest --show-only=json-v1`, never from
the JUnit XML.

usage: expected_from_ctest.py CONSOLE_TXT SHOW_ONLY_JSON BUILD_DIR PRODUCER COMMAND JUNIT_FILES > expected.json
"""

import json
import re
import sys
from pathlib import Path

SUMMARY = re.compile(r"^\d+% tests passed, (\d+) tests? failed out of (\d+)$")
LISTED = re.compile(r"^\t\s*(\d+) - (.*) \(([^()]*)\)$")
ATTEMPT = re.compile(r"^\s*(?:\d+/\d+ )?Test\s+#(\d+): ")
STATUS = re.compile(
    r"(?:\*\*\*)?(Passed|Failed|Not Run \(Disabled\)|Not Run|Skipped|Timeout|Exception: \S+)(?=\s).*[\d.]+ sec$"
)


def main() -> None:
    console_path, show_only_path, build_dir, producer, command, junit_files = sys.argv[1:7]
    console = Path(console_path).read_text(encoding="utf-8").splitlines()
    listing = json.loads(Path(show_only_path).read_text(encoding="utf-8"))
    build = Path(build_dir).resolve()

    summary = [line for line in console if SUMMARY.match(line)]
    assert len(summary) == 1, summary
    failed_total, ctest_total = map(int, SUMMARY.match(summary[0]).groups())

    # "The following tests did not run:" / "The following tests FAILED:" sections: number -> reason
    listed: dict[int, tuple[str, str]] = {}
    section = None
    for line in console:
        if line.startswith("The following tests did not run:"):
            section = "did not run"
        elif line.startswith("The following tests FAILED:"):
            section = "FAILED"
        elif section and (match := LISTED.match(line)):
            listed[int(match[1])] = (section, match[3])
        elif section and not line.startswith("\t"):
            section = None

    attempts: dict[int, list[str]] = {}
    for line in console:
        if match := ATTEMPT.match(line):
            status = STATUS.search(line)
            assert status, f"no status in {line!r}"
            attempts.setdefault(int(match[1]), []).append(status[1])

    tests = []
    for number, test in enumerate(listing["tests"], start=1):
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        workdir = Path(props.get("WORKING_DIRECTORY", build)).resolve()
        directory = workdir.relative_to(build).as_posix() if workdir.is_relative_to(build) else str(workdir)
        section, reason = listed.get(number, ("", "Passed"))
        outcome = {
            ("", "Passed"): "passed",
            ("did not run", "Disabled"): "disabled",
            ("did not run", "Skipped"): "skipped",
            ("FAILED", "Failed"): "failed",
            ("FAILED", "Timeout"): "failed",
            ("FAILED", "Not Run"): "failed",
        }[(section, reason)]
        tests.append(
            {
                "name": test["name"] if directory in ("", ".") else f"{directory}/{test['name']}",
                "ctest_name": test["name"],
                "number": number,
                "directory": "" if directory == "." else directory,
                "outcome": outcome,
                "reason": reason,
                "attempts": attempts[number],
                "properties": {k: v for k, v in props.items() if k != "WORKING_DIRECTORY"},
            }
        )

    def count(outcome: str) -> int:
        return sum(1 for t in tests if t["outcome"] == outcome)

    flaky = [t["name"] for t in tests if t["outcome"] == "passed" and len(t["attempts"]) > 1]
    assert count("failed") == failed_total, "CTest's FAILED list disagrees with its summary line"
    assert len(tests) - count("disabled") == ctest_total, "CTest's total should leave out only disabled tests"
    expected = {
        "producer": producer,
        "command": command,
        "counts_from": "ctest's console summary line and its 'did not run' / 'FAILED' lists; names and "
        "directories from ctest --show-only=json-v1",
        "junit_files": junit_files.split(),
        "summary": "\n".join(summary),
        "counts": {
            "tests": len(tests),
            "passed": count("passed"),
            "failed": count("failed"),
            "errors": 0,
            "skipped": count("skipped"),
            "disabled": count("disabled"),
            "flaky": 0,
            "ctest_total": ctest_total,
            "not_run": sum(1 for t in tests if t["reason"] == "Not Run"),
            "timeout": sum(1 for t in tests if t["reason"] == "Timeout"),
            "retried_then_passed": len(flaky),
        },
        "count_rules": {
            "tests": "every test CTest numbered (#1..#N); CTest's own 'out of N' total leaves out DISABLED tests",
            "passed": "in neither list of the summary; CTest's 'N% tests passed' counts skipped tests as passed",
            "failed": "CTest's 'N tests failed' = its FAILED list: Failed, Timeout, and Not Run (executable "
            "missing, or a FIXTURES_SETUP test failed); WILL_FAIL inverts pass and fail",
            "errors": "CTest has no error outcome; 'Not Run' tests are failures",
            "skipped": "'did not run' with (Skipped): SKIP_RETURN_CODE or SKIP_REGULAR_EXPRESSION",
            "disabled": "'did not run' with (Disabled): the DISABLED property; not in CTest's total",
            "flaky": "CTest has no flaky outcome: with --repeat until-pass a test that passes on a later "
            "attempt is Passed",
            "retried_then_passed": "passed tests the console shows more than one attempt of (--repeat until-pass)",
        },
        "tests": tests,
    }
    json.dump(expected, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
