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
import sys
from pathlib import Path

from harness.cell import CellStatus
from harness.commands._args import BACKEND_HELP, backend
from harness.commands._build_options import add_container_arguments, spec_from_args
from harness.errors import CellTimeoutError, InfrastructureError, TestsFailedError, UsageError
from harness.host.doctor import make_report
from harness.host.facts import detect_host, root_from_env
from harness.merge.combine import merge_cell_dirs
from harness.merge.inventory import CellRun, cell_dirs, older_no_data
from harness.merge.matrix_file import write_merged
from harness.model import Matrix
from harness.publish.render.markdown import render_markdown
from harness.run.execute import CellOutcome, RunOptions, run_cell
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
    parser.add_argument("--python", help="interpreter with torch for native runs (default: this one)")
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
        help="natively: run a CUDA/ROCm/XPU build's suites on the CPU when its device is missing, as a column "
        "of its own (the default when --backend is not given)",
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
    extra += shlex.split(args.pytest_args)
    return RunOptions(
        suites_dir=args.suites,
        results_dir=args.results_dir,
        backend=args.backend,
        cell_id=args.cell_id,
        python=args.python,
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


def run(args: argparse.Namespace) -> int:
    opts = options_from(args)
    if args.cpu_only and (args.container or (args.backend is not None and not args.native)):
        raise UsageError("--cpu-only runs natively: a container never runs without its device", hint="add --native")
    outcome = launch(args, opts)
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
    if status == CellStatus.INFRA_ERROR.value:
        raise InfrastructureError(f"cell {cell_id} is NO DATA: {outcome.manifest.error}")
    if status == CellStatus.TIMEOUT.value:
        raise CellTimeoutError(f"{outcome.manifest.error}; partial results in {outcome.cell_dir}")
    bad = column.failures if column else 0
    if bad or status == CellStatus.CRASHED.value:
        raise TestsFailedError(f"{bad} test(s) failed, errored, timed out or crashed; see the list above")
    return 0
