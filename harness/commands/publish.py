"""`harness publish SITE_DIR`: the page, matrix.json, badges and the run history, as a static site.

Page, `matrix.json`, badges and an append-only `history/`; also the job summary to
`$GITHUB_STEP_SUMMARY`. See `docs/publishing.md`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from harness.errors import UsageError
from harness.matrix_json import load_matrix
from harness.publish.render import DEFAULT_STALE_AFTER_HOURS

HELP = "write a static site (index.html, matrix.json, badges/, history/) and the GitHub job summary"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("site", type=Path, help="output folder, e.g. site/ (its history/ is kept and appended to)")
    parser.add_argument("--matrix", type=Path, default=Path("results/matrix.json"), help="default: results/matrix.json")
    parser.add_argument(
        "--stale-after",
        type=float,
        default=DEFAULT_STALE_AFTER_HOURS,
        metavar="HOURS",
        help=f"mark columns older than this STALE (default {DEFAULT_STALE_AFTER_HOURS:g})",
    )
    parser.add_argument("--no-history", action="store_true", help="do not record this run in history/")
    parser.add_argument("--page-url", default=os.environ.get("HARNESS_PAGE_URL", ""), help="link in the job summary")


def run(args: argparse.Namespace) -> int:
    if args.stale_after <= 0:
        raise UsageError("--stale-after must be a positive number of hours")
    from harness.publish.site import publish  # the page renderer (Jinja2) only when publishing

    matrix = load_matrix(args.matrix)
    done = publish(
        matrix, args.site, stale_after_hours=args.stale_after, history=not args.no_history, page_url=args.page_url
    )
    for problem in done.problems:
        print(f"harness: warning: {problem}", file=sys.stderr)
    if not args.no_history:
        entry = done.history_entry.name if done.history_entry else "already recorded, nothing appended"
        print(f"history: {entry} ({done.history_runs} run(s))", file=sys.stderr)
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        print(f"job summary: {done.summary_bytes} bytes appended", file=sys.stderr)
    print(f"wrote {args.site / 'index.html'} ({len(done.files)} files)", file=sys.stderr)
    return 0
