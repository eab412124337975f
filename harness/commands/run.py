"""`harness run`: run the suites into a new cell dir, merge it, print the matrix.

With no arguments this is the main job: the local torch, natively. `--backend X` runs in
that backend's container (see docs/containers.md); `--native` keeps it on this host.

The main job: run `./suites` with the local torch, natively, into a new cell dir under `results/`,
merge **every** cell under `results/` (the newest run of each cell id) into `results/matrix.json`,
print the Markdown matrix and say which columns it holds. A CUDA/ROCm/XPU build on a host without
its device runs on the CPU as a `cpu-only` column of its own (`--require-device` refuses instead;
`--cpu-only` asks for it with `--backend`). `--test NODEID` runs one test (each column's rerun
command ends with it). Run backend `X` (from the registry) in its container: build or reuse the
image, mount the suites read-only and the cell dir read-write, no network, the backend's device
flags, health gate first. `--native` runs on this host instead.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from pathlib import Path

from harness.cell import CellStatus
from harness.commands._args import BACKEND_HELP, PYTHON_HELP, backend, python_or_path
from harness.commands._build_options import add_container_arguments, spec_from_args
from harness.errors import (
    CellTimeoutError,
    HarnessError,
    InfrastructureError,
    TestsFailedError,
    UsageError,
    did_you_mean,
)
from harness.host.doctor import make_report
from harness.host.facts import detect_host, root_from_env
from harness.interpreters import PythonKey, python_key
from harness.matrix_json import iter_tests
from harness.merge.combine import merge_cell_dirs
from harness.merge.inventory import CellRun, cell_dirs, older_no_data
from harness.merge.matrix_file import write_merged
from harness.model import Column, Matrix
from harness.outcomes import BAD
from harness.publish.render.markdown import render_markdown
from harness.run.execute import CellOutcome, RunOptions, run_cell
from harness.run.option_checks import split_pytest_args
from harness.run.suites import load_features

HELP = "run the suites for one backend into a new cell dir and print the matrix"
DEFAULT_RESULTS = Path("results")  # also `harness publish`'s default matrix folder


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend", type=backend, help=f"backend to run: {BACKEND_HELP} (default: the local torch, natively)"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--native", action="store_true", help="run on this host, not in a container")
    mode.add_argument("--container", action="store_true", help="run in the backend's image (default with --backend)")
    parser.add_argument("--suites", type=Path, default=Path("suites"), help="suites directory (default: ./suites)")
    parser.add_argument(
        "--features", type=Path, help="the features file (titles, releases, claims; default: SUITES/features.toml)"
    )
    parser.add_argument(
        "--results-dir", type=Path, default=DEFAULT_RESULTS, help="where cell dirs go (default: ./results)"
    )
    parser.add_argument(
        "--cell-id",
        help="column id (default: <backend>-<torch build>[-cpu-only]-<host>); re-runs with the same id replace it",
    )
    parser.add_argument(
        "--python",
        type=python_or_path,
        help=f"the cell's Python: {PYTHON_HELP} (natively python3.15 on PATH; in a container the image's, built "
        "for it), proven by the cell or it is NO DATA; or, natively, the path of an interpreter with torch "
        "(default: this one)",
    )
    parser.add_argument("--workers", default="auto", help="pytest-xdist workers: N or auto (one per device)")
    parser.add_argument("--test-timeout", type=float, default=300.0, help="seconds per test (default 300)")
    parser.add_argument("--cell-timeout", type=float, default=3600.0, help="seconds for the whole cell (default 3600)")
    parser.add_argument("-k", dest="keyword", help="only tests matching this pytest -k expression")
    parser.add_argument("-m", dest="markexpr", help="only tests matching this pytest -m expression")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments, one shell-quoted string")
    parser.add_argument(
        "--test",
        action="append",
        default=[],
        metavar="NODEID",
        help="run only this test, its id as the matrix shows it (repeatable); every rerun command ends with one",
    )
    device = parser.add_mutually_exclusive_group()
    device.add_argument(
        "--cpu-only",
        action="store_true",
        help="run a CUDA/ROCm/XPU build's suites on the CPU when its device is missing, as a column of its own "
        "(natively the default when --backend is not given; in a container: its image, run with no device at all)",
    )
    device.add_argument(
        "--require-device",
        action="store_true",
        help="never run a device build on the CPU: a missing device makes the cell NO DATA",
    )
    parser.add_argument("--image", help="container mode: use this image instead of building one")
    add_container_arguments(parser)
    parser.add_argument("--no-progress", action="store_true", help="do not print progress lines")
    parser.add_argument("--quiet", action="store_true", help="do not print the matrix")


def options_from(args: argparse.Namespace) -> RunOptions:
    if not args.suites.is_dir():
        raise UsageError(
            f"suites directory {args.suites} not found", hint="run from the repository root or pass --suites"
        )
    extra: list[str] = []
    if args.keyword:
        extra += ["-k", args.keyword]
    if args.markexpr:
        extra += ["-m", args.markexpr]
    extra += split_pytest_args(args.pytest_args)
    key = python_key(args.python)
    containerized = args.container or (args.backend is not None and not args.native)
    if args.python and key is None and containerized:
        raise UsageError(
            f"--python {args.python} names an interpreter on this host; a container's Python is a version",
            hint="pass --python 3.15 (the image is built for it), or add --native",
        )
    return RunOptions(
        suites_dir=args.suites,
        results_dir=args.results_dir,
        backend=args.backend,
        cell_id=args.cell_id,
        python=native_interpreter(key) if key and not containerized else None if key else args.python,
        python_key=key,
        workers=args.workers,
        test_timeout=args.test_timeout,
        cell_timeout=args.cell_timeout,
        pytest_args=tuple(extra),
        progress=not args.no_progress,
        cpu_only=True if args.cpu_only else False if args.require_device else None,
        tests=tuple(args.test),
        features_file=args.features,
        channel=args.channel,
    )


def native_interpreter(key: PythonKey) -> str:
    """The program of a CPython key on PATH (python3.15, python3.14t), as uv finds one; one line when missing."""
    found = shutil.which(key.program)
    if found is None:
        raise InfrastructureError(
            f"no {key.program} on PATH: this host cannot run a {key.display} cell natively; nothing ran",
            hint=f"install it (Debian forky: apt-get install {key.program} {key.program}-venv; or `uv python "
            f"install {key.label}`) with torch, or pass its path: --python /path/to/{key.program}",
        )
    return found


def launch(args: argparse.Namespace, opts: RunOptions) -> CellOutcome:
    containerized = args.container or (args.backend is not None and not args.native)
    if not containerized:
        return run_cell(opts)
    from harness.images.oci_container import keep_requested
    from harness.run import container  # Docker SDK only when a container is wanted

    build = spec_from_args(args, opts.backend) if opts.backend and not args.image else None
    settings = container.ContainerSettings(
        image=args.image,
        build=build,
        rebuild=args.rebuild,
        build_log=args.build_log,
        memory=args.memory,
        cdi=args.cdi,
        keep=keep_requested(),
    )
    return container.run_containerized(opts, image=args.image, settings=settings)


def next_steps(results_dir: Path, lighter: str | None = None) -> list[str]:
    """How the main job ends: the next command to run, not the files it wrote (those are listed above)."""
    matrix = "" if results_dir == DEFAULT_RESULTS else f" --matrix {shlex.quote(str(results_dir / 'matrix.json'))}"
    steps = [f"next: harness publish site{matrix}   (the page, badges and history of this matrix, in site/)"]
    if lighter:
        steps.append(f"next: {lighter}")
    return steps


def lighter_build(python: str) -> str | None:
    """What `harness doctor` recommends for a device build that ran without its device: the CPU build's
    install line, or None when it recommends something else."""
    env = dict(os.environ)
    rec = make_report(detect_host(root_from_env(env), env), None, python=python).recommendation
    if rec.variant != "cpu":
        return None
    return f"{rec.command}   ({rec.summary}; `harness doctor` says more)"


def stale_line(stale: list[CellRun], results_dir: Path) -> str:
    """One line: the older NO DATA runs the results dir holds, and how to drop them."""
    ids = ", ".join(dict.fromkeys(r.cell_id for r in stale))
    where = "" if results_dir == Path("results") else f" --results-dir {shlex.quote(str(results_dir))}"
    return (
        f"harness: note: {len(stale)} older NO DATA run(s) in {results_dir} ({ids}): "
        f"`harness cells prune{where}` drops superseded ones, `harness cells forget{where} ID` any run or cell"
    )


def ran_nothing(outcome: CellOutcome, opts: RunOptions) -> UsageError:
    """A run that selected no test, or whose pytest arguments pytest refused: the user's mistake, one
    line (exit 2); its cell says `not-started` and the merge never lays it over a run."""
    manifest = outcome.manifest
    what = manifest.selection.describe() if manifest.selection else "the run"
    why = manifest.error or "nothing ran"
    near = _closest_test(opts.results_dir / "matrix.json", opts.tests)
    return UsageError(f"{what}: no test ran ({why}){near}; the columns in {opts.results_dir} are unchanged")


def _closest_test(matrix: Path, tests: tuple[str, ...]) -> str:
    """(did you mean ID?) for a --test id near one the results dir's matrix holds (a parameter's typo)."""
    if not tests or not matrix.is_file():
        return ""
    try:
        return did_you_mean(tests[0], [row.id for row in iter_tests(matrix)])
    except HarnessError:
        return ""


def failing_line(bad: int, failing: list[str], summary: Path) -> str:
    """The run's closing error: how many tests failed and which (the first three), so that --quiet,
    which prints no matrix, still names them."""
    named = ", ".join(failing[:3]) + (f" and {len(failing) - 3} more" if len(failing) > 3 else "")
    return f"{bad} test(s) failed, errored, timed out or crashed" + (f": {named}" if named else "") + f"; see {summary}"


def _in_column(column: Column | None, outcome: CellOutcome) -> bool:
    """Whether the run's results are in its column (a partial run is laid over only when it completed)."""
    run_id = outcome.manifest.run_id
    return column is None or not outcome.manifest.partial or run_id in (column.run_id, *(r.run_id for r in column.runs))


def run(args: argparse.Namespace) -> int:
    opts = options_from(args)
    outcome = launch(args, opts)
    if outcome.manifest.never_ran:
        raise ran_nothing(outcome, opts)
    out_dir = opts.results_dir
    # The workstation loop: matrix.json holds every cell under results/ (the newest run of each
    # cell id), so `tox -e cpu` then `tox -e cu130` leaves both columns side by side.
    # Under the folder's lock: two runs ending at once each merge every cell there, one after the other.
    features = load_features(opts.suites_dir, opts.features_file)
    written: dict[str, str] = {}

    def summary_of(merged: Matrix) -> dict[str, str]:
        written["summary.md"] = render_markdown(merged)
        return written

    matrix = write_merged(
        out_dir / "matrix.json",
        lambda: merge_cell_dirs([c for c in cell_dirs([out_dir]) if c.is_dir()], features=features),
        beside=summary_of,
    )
    summary = written["summary.md"]
    if not args.quiet:
        print(summary)
    held = ", ".join(c.id for c in matrix.columns)
    print(
        f"cell: {outcome.cell_dir}\nmatrix: {out_dir / 'matrix.json'} ({len(matrix.columns)} column(s): {held})"
        f"\nsummary: {out_dir / 'summary.md'}",
        file=sys.stderr,
    )
    stale = older_no_data(out_dir, outcome.cell_dir)
    if stale:
        print(stale_line(stale, out_dir), file=sys.stderr)
    status = outcome.status
    cell_id = outcome.manifest.cell_id
    column = matrix.column(cell_id)
    ran_without_its_device = column is not None and column.variant is not None
    lighter = lighter_build(opts.python or sys.executable) if ran_without_its_device else None
    print("\n".join(next_steps(out_dir, lighter)), file=sys.stderr)
    # A partial run that did not complete is not laid over its column (merge/combine.py): say so.
    kept = "" if _in_column(column, outcome) else f"; not laid over column {cell_id}, which keeps its results"
    if status == CellStatus.INFRA_ERROR.value:
        what = f"the run of {outcome.manifest.selection.describe()}" if kept else f"cell {cell_id}"
        raise InfrastructureError(f"{what} is NO DATA: {outcome.manifest.error}{kept}")
    if status == CellStatus.TIMEOUT.value:
        raise CellTimeoutError(f"{outcome.manifest.error}; partial results in {outcome.cell_dir}{kept}")
    if kept:
        raise TestsFailedError(f"the run of {outcome.manifest.selection.describe()} {status}{kept}")
    bad = column.failures if column else 0
    if bad or status == CellStatus.CRASHED.value:
        failing = [row.id for row, result in matrix.results(cell_id) if result.outcome in BAD] if column else []
        raise TestsFailedError(failing_line(bad, failing, out_dir / "summary.md"))
    return 0
