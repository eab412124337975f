"""`harness merge`: cell dirs from any number of runners -> matrix.json.

Merge cells (or folders holding cells, e.g. downloaded artifacts) into `matrix.json`, reading cells
in parallel worker processes. Each cell's results wait on disk in a temp folder (under `TMPDIR`,
removed after) until `matrix.json` is written, so the merge holds about one cell's worth of memory
whatever the number of columns; a temp folder that cannot be written is exit 6. An unreadable input
is a one-line warning and stays visible in the matrix; `--strict` makes it exit 4. `--expect` takes
the plan (`harness plan --format json`): a planned cell that sent nothing becomes a NO DATA column.
`--trust` checks each cell's signed statement offline (docs/provenance.md): every column then says who
vouches for it; a statement that fails is its column's error (its results left out) and exit 4, the
other cells merged. Submissions (`*.cell.tar.gz`, `harness submit`) are taken as given or from the
folders given, unpacked safely into a temp folder.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from collections import Counter
from pathlib import Path

from harness import outputs
from harness.commands._remerge import stated_features
from harness.errors import HarnessError, InputError, UsageError
from harness.merge.combine import NOT_SHIPPED_SOURCE, PLANNED_SOURCE, merge_cell_dirs
from harness.merge.inventory import cell_dirs
from harness.merge.matrix_file import write_merged
from harness.model import Matrix, Problem, ProvenanceState
from harness.plan import read_plan

DEFAULT_OUTPUT = Path("results") / "matrix.json"  # git-ignored: a default never writes over a tracked file

HELP = "merge cell dirs (or folders of them, e.g. downloaded artifacts) into matrix.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cells", nargs="+", type=Path, help="cell dirs, or folders that contain cell dirs")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help=f"output file (default: {DEFAULT_OUTPUT}, beside the runs `harness run` keeps; never a tracked file)",
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
        "--trust",
        type=Path,
        metavar="TRUST.toml",
        help="check each cell's statement against this trust file, offline: each column says who vouches for it; "
        "an invalid statement is its column's error, and exit 4",
    )
    parser.add_argument(
        "--lock-timeout",
        type=float,
        default=outputs.DEFAULT_LOCK_TIMEOUT,
        metavar="SECONDS",
        help=f"wait this long for another merge writing into the same folder, then exit 6 "
        f"(default {outputs.DEFAULT_LOCK_TIMEOUT:g})",
    )


def _tally(matrix: Matrix, column_id: str, judged: int) -> str:
    # Measurement tests record figures, not outcomes: named apart so "N tests" matches the counts below it.
    measured = sum(cells[column_id].measurements for cells in matrix.cells.values() if column_id in cells)
    return f"{judged} tests" + (f", {measured} measured" if measured else "")


def note_lines(matrix: Matrix) -> list[str]:
    """Each note once: the same words about one column (three runs superseded by one) are one line."""
    counted = Counter((note.cell, note.note) for note in matrix.notes)
    return [f"harness: note: {cell}: {text}" + (f" ({n} runs)" if n > 1 else "") for (cell, text), n in counted.items()]


def run(args: argparse.Namespace) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.lock_timeout < 0:
        raise UsageError("--lock-timeout must be 0 or more seconds")
    trust = None
    if args.trust is not None:
        from harness.provenance.trust import load_trust

        trust = load_trust(args.trust)  # a bad trust file is refused before anything is read or written
    given, archives = _submissions(args.cells)
    with contextlib.ExitStack() as stack:
        refused: list[Problem] = []
        if archives:  # unpacked into a temp folder (under TMPDIR) that goes with the merge
            with outputs.writing(tempfile.gettempdir()):
                unpacked = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="harness-submissions-")))
            given, refused = _unpack(given, archives, unpacked)
        cells = cell_dirs(given)
        verdicts = None
        if trust is not None:
            from harness.provenance.verify import verify_cell

            verdicts = {cell: verify_cell(cell, trust) for cell in cells}
        matrix = merge_cell_dirs(
            cells,
            read_plan(args.expect) if args.expect else (),
            jobs=args.jobs,
            features=stated_features(args.features),
            provenance=verdicts,
        )
        if not any(c.source not in (PLANNED_SOURCE, NOT_SHIPPED_SOURCE) for c in matrix.columns):
            # Nothing read: a typo in a folder name must not write an empty matrix over a good one.
            why = f": {matrix.input_errors[0].message}" if matrix.input_errors else ""
            named = " ".join(map(str, args.cells))
            raise InputError(f"no cell could be read from {named}{why}; {args.output} left as it was")
        # One writer of a folder's merge outputs at a time; a killed merge's temp files go first.
        write_merged(args.output, lambda: matrix, timeout=args.lock_timeout)
    for column in matrix.columns:
        note = "NO DATA" if not column.has_data else _tally(matrix, column.id, sum(column.counts.values()))
        if column.composite:
            note += f" (composite of {len(column.runs)} runs: later partial runs laid over run {column.run_id})"
        elif column.partial:
            note += " (partial: a selection of tests, no complete run to build on)"
        if column.provenance is not None and column.provenance.state is not ProvenanceState.INVALID:
            note += f" · {column.provenance.describe()}"
        print(f"{column.id:<32} {column.backend:<6} {note}", file=sys.stderr)
    for problem in matrix.input_errors:
        prefix = "" if problem.message.startswith(problem.source) else f"{problem.source}: "
        print(f"harness: warning: {prefix}{problem.message}", file=sys.stderr)
    for line in note_lines(matrix):
        print(line, file=sys.stderr)
    invalid = [c for c in matrix.columns if c.provenance and c.provenance.state is ProvenanceState.INVALID]
    for column in invalid:
        print(f"harness: error: {column.id}: provenance invalid: {column.provenance.reason}", file=sys.stderr)  # type: ignore[union-attr]
    for problem in refused:
        print(f"harness: error: {problem.message}", file=sys.stderr)
    print(f"wrote {args.output} ({len(matrix.columns)} columns, {len(matrix.tests)} tests)", file=sys.stderr)
    if invalid or refused:
        names = [c.id for c in invalid] + [p.source for p in refused]
        raise InputError(f"{len(names)} input(s) refused ({', '.join(names)}); the other cells were merged")
    if args.strict and matrix.input_errors:
        raise InputError(f"{len(matrix.input_errors)} input(s) could not be read")
    return 0


def _submissions(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """The paths to read as cells, and the submission archives given or directly in a folder given (a
    folder of archives alone is no cell: only what it holds is merged)."""
    from harness.provenance.submission import SUFFIX

    given: list[Path] = []
    archives: list[Path] = []
    for path in paths:
        found = [path] if path.is_file() and path.name.endswith(SUFFIX) else []
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.name.endswith(SUFFIX) and p.is_file())
        if not found or (path.is_dir() and any(p.is_dir() or p.name == "manifest.json" for p in path.iterdir())):
            given.append(path)
        archives += found
    return given, archives


def _unpack(given: list[Path], archives: list[Path], into: Path) -> tuple[list[Path], list[Problem]]:
    """`given` and each archive's cell, unpacked safely under `into`; an archive refused is a problem."""
    from harness.provenance.submission import unpack

    cells = list(given)
    refused: list[Problem] = []
    for number, archive in enumerate(archives):
        try:
            cells.append(unpack(archive, into / str(number)))
        except HarnessError as err:
            refused.append(Problem(source=str(archive), message=str(err)))
    return cells, refused
