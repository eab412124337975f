"""`harness history TEST_ID`: one test's timeline across the published runs (the history branch):
per column, its outcome run by run, when it broke (first bad, last good: build, run, date), whether
it flipped within one torch build (flaky across runs) and how its duration moved."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from harness import jsonio
from harness.errors import InputError, UsageError
from harness.publish.history import load_history, load_test_results, recorded_ids
from harness.publish.render.timeline_text import describe
from harness.publish.timeline import timelines_for

HELP = "a test's timeline across published runs: first bad / last good, flips within a build, duration"
DEFAULT_RUNS = 30


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("test", help="the test id as the matrix shows it, e.g. linalg/test_svd.py::test_batched")
    parser.add_argument(
        "--history",
        type=Path,
        default=Path("site/history"),
        help="the history folder (a checkout of the matrix-history branch; default: site/history)",
    )
    parser.add_argument("--column", action="append", metavar="ID", help="only this column (repeatable)")
    parser.add_argument(
        "--runs", type=int, default=DEFAULT_RUNS, help=f"read the newest N published runs (default {DEFAULT_RUNS})"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    if args.runs < 1:
        raise UsageError("--runs must be at least 1")
    problems: list[str] = []
    if not args.history.is_dir():
        raise InputError(f"{args.history}: no history folder", hint="check out the matrix-history branch there")
    runs = load_history(args.history, limit=args.runs, problems=problems)
    if not runs:
        raise InputError(f"{args.history}: no published run recorded here" + (f" ({problems[0]})" if problems else ""))
    results = load_test_results(args.history, runs, args.test, problems)
    for problem in problems:
        print(f"harness: warning: {problem}", file=sys.stderr)  # stdout stays the answer (JSON parses)
    timelines = timelines_for(args.test, runs, results)
    if args.column:
        unknown = [c for c in args.column if c not in {t.column for t in timelines}]
        if unknown:
            raise UsageError(f"--column {', '.join(unknown)}: no result of {args.test} on it in the runs read")
        timelines = [t for t in timelines if t.column in args.column]
    if not timelines:
        known = recorded_ids(args.history, runs)
        close = difflib.get_close_matches(args.test, known, n=3, cutoff=0.6)
        recorded = sum(r is not None for r in results)
        raise UsageError(
            f"{args.test}: no result in the {recorded} run(s) with per-test results in {args.history}"
            + (f" (of {len(runs)} read)" if recorded != len(runs) else ""),
            hint=f"did you mean {', '.join(close)}?" if close else "give the id as the matrix shows it",
        )
    if args.format == "json":
        data = {"test": args.test, "runs": len(runs), "columns": [t.to_json() for t in timelines]}
        print(jsonio.dumps_pretty(data).decode())
        return 0
    first, last = runs[0].generated_at, runs[-1].generated_at
    print(f"{args.test}: {len(runs)} run(s), {first} .. {last}")
    for timeline in timelines:
        print("\n".join(describe(timeline)))
    return 0
