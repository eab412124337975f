"""`harness merge`: cell dirs from any number of runners -> matrix.json.

Merge cells (or folders holding cells, e.g. downloaded artifacts) into `matrix.json`, reading cells
in parallel worker processes. Each cell's results wait on disk in a temp folder (under `TMPDIR`,
removed after) until `matrix.json` is written, so the merge holds about one cell's worth of memory
whatever the number of columns; a temp folder that cannot be written is exit 6. An unreadable input
is a one-line warning and stays visible in the matrix; `--strict` makes it exit 4. `--expect` takes
the plan (`harness plan --format json`): a planned cell that sent nothing becomes a NO DATA column.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness import outputs
from harness.cell import FeatureInfo
from harness.errors import InputError, UsageError
from harness.merge.combine import merge_cell_dirs
from harness.merge.inventory import cell_dirs
from harness.merge.matrix_file import write_merged
from harness.model import Matrix
from harness.plan import read_plan
from harness.run.suites import load_features

DEFAULT_FEATURES = Path("suites") / "features.toml"

HELP = "merge cell dirs (or folders of them, e.g. downloaded artifacts) into matrix.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cells", nargs="+", type=Path, help="cell dirs, or folders that contain cell dirs")
    parser.add_argument(
        "-o", "--output", type=Path, default=Path("matrix.json"), help="output file (default: matrix.json)"
    )
    parser.add_argument("--strict", action="store_true", help="exit 4 when any input could not be read")
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="read up to N cells at once in worker processes (default: one more than the cores for a few cells, as "
        "many as the cores for more; at most 8)",
    )
    parser.add_argument(
        "--expect",
        type=Path,
        metavar="PLAN",
        help="the planned cells (`harness plan --format json|github` output): cells without results become NO DATA",
    )
    parser.add_argument(
        "--features",
        type=Path,
        metavar="FILE",
        help="the features file whose releases, device families and groups decide which rows a build cannot have "
        "(default: ./suites/features.toml when present; else what each cell recorded)",
    )
    parser.add_argument(
        "--lock-timeout",
        type=float,
        default=outputs.DEFAULT_LOCK_TIMEOUT,
        metavar="SECONDS",
        help=f"wait this long for another merge writing into the same folder, then exit 6 "
        f"(default {outputs.DEFAULT_LOCK_TIMEOUT:g})",
    )


def stated_features(path: Path | None) -> dict[str, FeatureInfo] | None:
    """The rows as the features file states them now: `path`, else ./suites/features.toml if there."""
    if path is None:
        path = DEFAULT_FEATURES
        if not path.is_file():
            return None
    return load_features(path.parent, path)


def _tally(matrix: Matrix, column_id: str, judged: int) -> str:
    # Measurement tests record figures, not outcomes: named apart so "N tests" matches the counts below it.
    measured = sum(cells[column_id].measurements for cells in matrix.cells.values() if column_id in cells)
    return f"{judged} tests" + (f", {measured} measured" if measured else "")


def run(args: argparse.Namespace) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.lock_timeout < 0:
        raise UsageError("--lock-timeout must be 0 or more seconds")
    cells = cell_dirs(args.cells)
    matrix = merge_cell_dirs(
        cells, read_plan(args.expect) if args.expect else (), jobs=args.jobs, features=stated_features(args.features)
    )
    # One writer of a folder's merge outputs at a time; a killed merge's temp files go first.
    write_merged(args.output, lambda: matrix, timeout=args.lock_timeout)
    for column in matrix.columns:
        note = "NO DATA" if not column.has_data else _tally(matrix, column.id, sum(column.counts.values()))
        if column.composite:
            note += f" (composite of {len(column.runs)} runs: later partial runs laid over run {column.run_id})"
        elif column.partial:
            note += " (partial: a selection of tests, no complete run to build on)"
        print(f"{column.id:<32} {column.backend:<6} {note}", file=sys.stderr)
    for problem in matrix.input_errors:
        prefix = "" if problem.message.startswith(problem.source) else f"{problem.source}: "
        print(f"harness: warning: {prefix}{problem.message}", file=sys.stderr)
    for note in matrix.notes:
        print(f"harness: note: {note.cell}: {note.note}", file=sys.stderr)
    print(f"wrote {args.output} ({len(matrix.columns)} columns, {len(matrix.tests)} tests)", file=sys.stderr)
    if args.strict and matrix.input_errors:
        raise InputError(f"{len(matrix.input_errors)} input(s) could not be read")
    return 0
