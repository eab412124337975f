"""Write an expected JSON from `go test -json` events (gotestsum --jsonfile) and gotestsum's own
summary and rerun report, never from the JUnit XML.

usage: expected_from_go.py EVENTS_JSONL CONSOLE_TXT RERUN_REPORT|- PRODUCER COMMAND JUNIT_FILES > expected.json
"""

import json
import re
import sys
from pathlib import Path

SUMMARY = re.compile(r"^DONE (?:(?P<runs>\d+) runs, )?(?P<tests>\d+) tests?(?P<rest>.*) in [\d.]+s$")


def summary_counts(line: str) -> dict[str, int]:
    """'DONE 3 runs, 36 tests, 2 skipped, 19 failures, 1 error in 1.4s' -> its numbers."""
    match = SUMMARY.match(line)
    assert match, f"not a gotestsum summary line: {line!r}"
    counts = {"runs": int(match["runs"] or 1), "tests": int(match["tests"])}
    for number, word in re.findall(r", (\d+) (skipped|failures?|errors?)", match["rest"]):
        counts[word.rstrip("s") if word != "skipped" else word] = int(number)
    return {
        "runs": counts["runs"],
        "tests": counts["tests"],
        "skipped": counts.get("skipped", 0),
        "failures": counts.get("failure", 0),
        "errors": counts.get("error", 0),
    }


def main() -> None:
    events_path, console_path, rerun_path, producer, command, junit_files = sys.argv[1:7]
    console = Path(console_path).read_text(encoding="utf-8").splitlines()
    summary = [line for line in console if line.startswith("DONE ")]
    # with --rerun-fails gotestsum prints a cumulative DONE line after every run; the last one is the total
    tool = summary_counts(summary[-1])
    errors = []
    if "=== Errors" in console:  # gotestsum lists build errors between "=== Errors" and the DONE line
        for line in console[console.index("=== Errors") + 1 :]:
            if line.startswith("DONE "):
                break
            if line.strip():
                errors.append(line)

    attempts: dict[tuple[str, str], list[str]] = {}
    for line in Path(events_path).read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("Test") and event["Action"] in ("pass", "fail", "skip"):
            attempts.setdefault((event["Package"], event["Test"]), []).append(event["Action"])

    tests = []
    for (package, test), actions in attempts.items():
        final = actions[-1]
        tests.append(
            {
                "name": f"{package}.{test}",
                "package": package,
                "test": test,
                "outcome": final,
                "attempts": actions,
            }
        )
    n_attempts = sum(len(t["attempts"]) for t in tests)
    failed_attempts = sum(t["attempts"].count("fail") for t in tests)
    skipped_attempts = sum(t["attempts"].count("skip") for t in tests)
    assert n_attempts == tool["tests"], "go test -json attempts disagree with gotestsum's test count"
    assert failed_attempts == tool["failures"]
    assert skipped_attempts == tool["skipped"]

    rerun_report = []
    if rerun_path != "-":
        rerun_report = Path(rerun_path).read_text(encoding="utf-8").splitlines()
    flaky = [t["name"] for t in tests if "fail" in t["attempts"] and t["outcome"] == "pass"]
    for name in flaky:  # gotestsum's own rerun report says so: "N runs, M failures" with M < N
        line = next(line for line in rerun_report if line.startswith(f"{name}: "))
        runs, failures = map(int, re.findall(r"(\d+) (?:runs|failures)", line))
        assert failures < runs, line

    outcome_count = {o: sum(1 for t in tests if t["outcome"] == o) for o in ("pass", "fail", "skip")}
    expected = {
        "producer": producer,
        "command": command,
        "counts_from": "gotestsum's DONE line and rerun report, and the go test -json events it wrote (--jsonfile)",
        "junit_files": junit_files.split(),
        "summary": "\n".join(summary),
        "counts": {
            "tests": len(tests),
            "passed": outcome_count["pass"],
            "failed": outcome_count["fail"],
            "errors": tool["errors"],
            "skipped": outcome_count["skip"],
            "disabled": 0,
            "flaky": len(flaky),
            "runs": tool["runs"],
            "attempts": tool["tests"],
            "failed_attempts": tool["failures"],
        },
        "count_rules": {
            "tests": "distinct (package, test) pairs in go test -json; every subtest is a test, and so is its "
            "parent; gotestsum's own 'N tests' counts attempts (equal to this without --rerun-fails)",
            "passed": "final action pass, including a pass on a rerun (flaky is a subset of passed)",
            "failed": "final action fail; a parent test fails when any subtest fails; a panic fails the "
            "running test and the tests after it never run (in no count)",
            "errors": "gotestsum's 'N error(s)': packages whose tests did not build; they have no tests",
            "skipped": "final action skip (t.Skip)",
            "disabled": "Go has no disabled state",
            "flaky": "failed, then passed on a gotestsum --rerun-fails rerun (gotestsum's rerun report "
            "lists it with fewer failures than runs); a subset of passed",
        },
        "tool_counts": tool,
        "build_errors": errors,
        "rerun_report": rerun_report,
        "tests": tests,
    }
    json.dump(expected, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
