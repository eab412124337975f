"""`harness publish SITE_DIR`: the page, matrix.json, badges, the diff against the previous
publication and the run history, as a static site.

Page (its tests in `data/` beside it when large), `matrix.json` split (an index and its parts in
`matrix-parts/`), badges, `diff.md`/`diff.json` against the previous publication, an append-only `history/` with each
test's outcome per run; also the job summary to `$GITHUB_STEP_SUMMARY`. See `docs/publishing.md`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from harness.errors import EmptyPublicationError, UsageError
from harness.matrix_json import iter_tests, load_matrix
from harness.model import Matrix
from harness.outputs import DEFAULT_LOCK_TIMEOUT
from harness.publish.baseline import is_url, site_matrix
from harness.publish.render import DEFAULT_STALE_AFTER_HOURS

HELP = "write a static site (index.html, matrix.json, diff, badges/, history/) and the GitHub job summary"


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
    baseline = parser.add_mutually_exclusive_group()
    baseline.add_argument(
        "--baseline",
        metavar="MATRIX",
        help="the previous published matrix to write diff.md/diff.json against: a path, or the site's URL of "
        "matrix.json (a 404 means there is none yet); default: the matrix SITE_DIR already holds",
    )
    baseline.add_argument("--no-baseline", action="store_true", help="write no diff")
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="publish a matrix with no column that has results even over a publication that has some "
        "(refused otherwise: exit 1)",
    )
    parser.add_argument(
        "--inline-limit",
        type=int,
        default=None,
        metavar="BYTES",
        help="the page holds its test data up to this size, else loads it from data/ beside it (default 4 MiB)",
    )
    parser.add_argument(
        "--lock-timeout",
        type=float,
        default=DEFAULT_LOCK_TIMEOUT,
        metavar="SECONDS",
        help="wait this long for another publish of the same site to finish, then exit 6 "
        f"(default {DEFAULT_LOCK_TIMEOUT:g})",
    )


def refuse_empty(matrix: Matrix, path: Path, previous: Matrix | None, where: str | Path | None) -> None:
    """Nothing good is replaced by nothing: a matrix without a column that has results (a merge of a
    mistyped folder, every runner down) is not published over a publication that has one."""
    if any(c.has_data for c in matrix.columns) or where is None:
        return
    if previous is None and not is_url(str(where)) and Path(where).exists():
        previous = load_matrix(Path(where), results="outcomes")
    held = [c.id for c in previous.columns if c.has_data] if previous is not None else []
    if held:
        raise EmptyPublicationError(
            f"{path} has no column with results and the last publication ({where}) has {len(held)} "
            f"({', '.join(held[:3])}{', ...' if len(held) > 3 else ''}): not published over it",
            hint="merge the right cells, or pass --allow-empty to publish it anyway",
        )


def run(args: argparse.Namespace) -> int:
    if args.stale_after <= 0:
        raise UsageError("--stale-after must be a positive number of hours")
    if args.inline_limit is not None and args.inline_limit < 0:
        raise UsageError("--inline-limit must be 0 or more bytes")
    if args.lock_timeout < 0:
        raise UsageError("--lock-timeout must be 0 or more seconds")
    from harness.publish.baseline import load_baseline
    from harness.publish.site import INLINE_LIMIT, publish, site_lock  # the page renderer (Jinja2) only here

    # Held without its long texts; the page's details and the matrix's parts read the rows whole,
    # one at a time, from the file again (publishing 5M results in bounded memory).
    matrix = load_matrix(args.matrix, results="lean")
    # The baseline is read under the site's lock: it is the last complete publication, never one
    # another publisher is halfway through.
    with site_lock(args.site, args.lock_timeout):
        baseline = None
        source = args.baseline or (None if args.no_baseline else site_matrix(args.site))
        if source is not None:
            baseline = load_baseline(source, results="outcomes")  # the diff compares outcomes only
            if baseline is None:
                print(f"baseline: none at {source} (the first publication?); no diff written", file=sys.stderr)
        if not args.allow_empty:
            refuse_empty(matrix, args.matrix, baseline, source or site_matrix(args.site))
        done = publish(
            matrix,
            args.site,
            stale_after_hours=args.stale_after,
            history=not args.no_history,
            page_url=args.page_url,
            baseline=baseline,
            inline_limit=INLINE_LIMIT if args.inline_limit is None else args.inline_limit,
            lock_timeout=args.lock_timeout,
            full_rows=lambda: iter_tests(args.matrix),
        )
    for problem in done.problems:
        print(f"harness: warning: {problem}", file=sys.stderr)
    if not args.no_history:
        entry = done.history_entry.name if done.history_entry else "already recorded, nothing appended"
        print(f"history: {entry} ({done.history_runs} run(s))", file=sys.stderr)
    if done.diff_kept:
        print(f"diff: this matrix is published already; its diff is kept ({args.site / 'diff.md'})", file=sys.stderr)
    if done.diff is not None:
        print(
            f"diff: {done.diff.regressions} new regression(s) since {done.diff.old_generated_at} "
            f"({args.site / 'diff.md'})",
            file=sys.stderr,
        )
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        print(f"job summary: {done.summary_bytes} bytes appended", file=sys.stderr)
    parts = f", its tests in {done.page_parts} files under data/" if done.page_parts else ""
    print(f"wrote {args.site / 'index.html'} ({len(done.files)} files{parts})", file=sys.stderr)
    return 0
