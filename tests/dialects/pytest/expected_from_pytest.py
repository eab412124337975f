"""Write expected.json from pytest's own reports: the terminal summary line and the pytest-reportlog
JSON lines (every TestReport / CollectReport / SubTestReport pytest made), never from the JUnit XML.

usage: expected_from_pytest.py PRODUCER COMMAND CONSOLE1 REPORTLOG1 JUNIT1 [CONSOLE2 REPORTLOG2 JUNIT2 ...]
       > expected.json
The runs must agree on every count; the first one's reports make the per-test list.
"""

import json
import re
import sys
from collections import Counter
from pathlib import Path

SUMMARY = re.compile(r"^=+ (?P<body>.*) in [\d.]+s(?: \([^)]*\))? =+$")


def summary_line(console: str) -> tuple[str, dict[str, int]]:
    """pytest's last line, '= 13 failed, 25 passed, ... in 0.14s =', and its numbers by category."""
    line = console.rstrip().splitlines()[-1]
    match = SUMMARY.match(line)
    assert match, f"not a pytest summary line: {line!r}"
    counts = {}
    for number, word in re.findall(r"(\d+) ([a-z]+)", match["body"]):
        counts[{"errors": "error", "warnings": "warning"}.get(word, word)] = int(number)
    return line, counts


def category(report: dict) -> str:
    """The terminal category pytest gives a report (its pytest_report_teststatus)."""
    kind, outcome, when = report["$report_type"], report["outcome"], report.get("when")
    if kind == "CollectReport":
        return {"failed": "error", "skipped": "skipped"}[outcome]
    if kind == "SubTestReport":
        return f"subtest {outcome}"
    if outcome == "rerun":
        return "rerun"
    if outcome == "passed":
        return "xpassed" if "wasxfail" in report else "passed"
    if outcome == "failed":
        return "failed" if when == "call" else "error"
    return "xfailed" if "wasxfail" in report else "skipped"


def is_counted(report: dict) -> bool:
    """Reports that appear in the summary: setup/teardown passes and collection passes do not."""
    if report["$report_type"] == "CollectReport":
        return report["outcome"] != "passed"
    return not (report["outcome"] == "passed" and report.get("when") != "call")


def main() -> None:
    producer, command, *runs = sys.argv[1:]
    assert runs and len(runs) % 3 == 0, "CONSOLE REPORTLOG JUNIT triples"
    summaries = {}
    per_run_counts = []
    first_reports = None
    for console_path, log_path, junit in zip(runs[0::3], runs[1::3], runs[2::3], strict=True):
        line, counts = summary_line(Path(console_path).read_text(encoding="utf-8"))
        summaries[junit] = line
        reports = [json.loads(x) for x in Path(log_path).read_text(encoding="utf-8").splitlines()]
        reports = [r for r in reports if r["$report_type"] in ("TestReport", "CollectReport", "SubTestReport")]
        mine = Counter(category(r) for r in reports if is_counted(r))
        # pytest's summary counts failed subtests as failed and leaves passed subtests out
        mine["failed"] += mine.pop("subtest failed", 0)
        passed_subtests = mine.pop("subtest passed", 0)
        assert {k: v for k, v in mine.items() if v} == {k: v for k, v in counts.items() if k != "warning"}, (
            f"report log {mine} disagrees with pytest's summary {counts}"
        )
        per_run_counts.append((dict(mine), passed_subtests))
        first_reports = first_reports or reports
    assert all(c == per_run_counts[0] for c in per_run_counts), f"the runs disagree: {per_run_counts}"
    counts, passed_subtests = per_run_counts[0]

    tests: dict[str, dict] = {}
    for report in first_reports:
        if not is_counted(report):
            continue
        entry = tests.setdefault(report["nodeid"], {"name": report["nodeid"], "reports": []})
        label = category(report)
        if report["$report_type"] == "SubTestReport":
            context = report.get("_subtest.context", {})
            label += f" [{context.get('msg')}] {context.get('kwargs')}"
        entry["reports"].append(label if report.get("when") in (None, "call") else f"{label} ({report['when']})")
    for entry in tests.values():
        main_reports = [r for r in entry["reports"] if not r.startswith(("subtest", "rerun")) and "(teardown)" not in r]
        entry["outcome"] = main_reports[0].split(" (")[0] if main_reports else "passed"
        entry["reruns"] = sum(1 for r in entry["reports"] if r == "rerun")
        entry["teardown_error"] = any(r == "error (teardown)" for r in entry["reports"])

    flaky = [t["name"] for t in tests.values() if t["reruns"] and t["outcome"] == "passed"]
    expected = {
        "producer": producer,
        "command": command,
        "counts_from": "pytest's terminal summary line, checked against pytest-reportlog's JSON of every "
        "report pytest made (--report-log); -rA lists the same in the console",
        "junit_files": list(summaries),
        "summary": next(iter(summaries.values())),
        "summaries": summaries,
        "counts": {
            "tests": len(tests),
            "passed": counts.get("passed", 0),
            "failed": counts.get("failed", 0),
            "errors": counts.get("error", 0),
            "skipped": counts.get("skipped", 0),
            "disabled": 0,
            "flaky": len(flaky),
            "xfailed": counts.get("xfailed", 0),
            "xpassed": counts.get("xpassed", 0),
            "rerun": counts.get("rerun", 0),
            "subtests_failed": sum(1 for r in first_reports if is_counted(r) and category(r) == "subtest failed"),
            "subtests_passed": passed_subtests,
        },
        "count_rules": {
            "tests": "distinct node ids with a report, including modules that failed or skipped at "
            "collection; pytest itself prints no total",
            "passed": "pytest's 'N passed': call passed and not xfail-marked; a test that passes and then "
            "errors in teardown is ALSO in errors; a rerun test that finally passes is in passed",
            "failed": "pytest's 'N failed': call failed (including strict XPASS and unittest unexpected "
            "success) plus every failed subtest; the test holding a failed subtest is failed too",
            "errors": "pytest's 'N errors': a failed collection, setup or teardown; a test can be failed "
            "(or passed) AND errored",
            "skipped": "pytest's 'N skipped': skip/skipif markers, pytest.skip, unittest.skip, and a module "
            "skipped at import (importorskip) counts once",
            "xfailed": "pytest's 'N xfailed' (xfail marker, pytest.xfail, unittest.expectedFailure)",
            "xpassed": "pytest's 'N xpassed': a non-strict xfail test that passed",
            "rerun": "pytest-rerunfailures' 'N rerun': failed attempts that were rerun (not tests)",
            "disabled": "pytest has no disabled state",
            "flaky": "tests with a rerun attempt whose final attempt passed (in pytest-rerunfailures' reports); "
            "a subset of passed",
            "subtests_passed": "SubTestReports that passed: not in any count of pytest's summary line",
        },
        "tests": list(tests.values()),
    }
    json.dump(expected, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
