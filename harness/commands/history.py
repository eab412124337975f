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
from harness.publish.render.symbols import PAGE_OUTCOME_SYMBOLS
from harness.publish.timeline import NIGHTLY_SUFFIX, ColumnTimeline, Point, timelines_for

HELP = "a test's timeline across published runs: first bad / last good, flips within a build, duration"
DEFAULT_RUNS = 30
_SYMBOL = {"K": "⚑", "-": "·", "?": " "}


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


def _symbol(point: Point) -> str:
    if point.code in _SYMBOL:
        return _SYMBOL[point.code]
    from harness.publish.history import CODE_OUTCOMES

    return PAGE_OUTCOME_SYMBOLS[CODE_OUTCOMES[point.code]]


def _where(point: Point) -> str:
    build = f"torch {point.build}" if point.build else "torch unknown"
    return f"run {point.run}, {build}, {point.date}" + (f" ({point.run_url})" if point.run_url else "")


def _seconds(value: float) -> str:
    if value == 0:
        return "<1 ms"  # the scale's first step holds everything under a millisecond
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"


def describe(timeline: ColumnTimeline) -> list[str]:
    points, verdict = timeline.points, timeline.verdict
    lines = [
        f"{timeline.column}  {''.join(_symbol(p) for p in points)}  (oldest → newest; latest: {points[-1].outcome})"
    ]
    if verdict.first_bad is not None:
        state = "broken" if verdict.fixed is None else "was broken"
        what = " nightly" if timeline.column.endswith(NIGHTLY_SUFFIX) else ""
        lines.append(f"  {state}: first bad{what}  {_where(points[verdict.first_bad])}")
        if verdict.last_good is not None:
            lines.append(f"           last good{what}  {_where(points[verdict.last_good])}")
        else:
            lines.append("           last good  none in the runs read (bad since the first judged run)")
        if verdict.fixed is not None:
            lines.append(f"           fixed in   {_where(points[verdict.fixed])}")
    else:
        lines.append("  never failed in the runs read")
    for build, flips in verdict.flips.items():
        kind = "flaky across runs" if flips >= 2 else "changed once"
        lines.append(f"  {kind}: {flips} flip(s) between good and bad within torch {build or 'unknown'}")
    if verdict.reruns:
        lines.append(f"  passed only on a rerun in {verdict.reruns} run(s)")
    trend = timeline.duration_trend()
    if trend:
        lines.append(
            f"  duration: {_seconds(trend['first'])} → {_seconds(trend['last'])} "
            f"(min {_seconds(trend['min'])}, median {_seconds(trend['median'])}, max {_seconds(trend['max'])})"
        )
    return lines


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
