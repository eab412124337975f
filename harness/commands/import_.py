"""`harness import JUNIT...`: bare JUnit files from another CI become a cell (a column).

Turn bare JUnit files from another CI (any dialect: pytest, Jest, Mocha, Go, Surefire, TestNG,
CTest) into a cell, with the identity you state; a feature map (TOML globs, first match wins)
decides the rows, unmatched tests go to `unassigned`. See
[docs/cell-contract.md](docs/cell-contract.md#bringing-junit-from-elsewhere-harness-import).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.merge.importjunit import ImportSpec, import_junit
from harness.merge.ingest import ingest_cell
from harness.model import UNASSIGNED

HELP = "turn bare JUnit files (another CI's, a vendor's) into a cell, with the backend and build you state"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", type=Path, help="JUnit XML files (any dialect: pytest, Jest, Go, ...)")
    parser.add_argument("--backend", required=True, help="the backend these results are for (e.g. cu130, rocm)")
    parser.add_argument("--cell-id", required=True, help="the column id (a rerun with the same id replaces it)")
    parser.add_argument("--torch", default="", help="the torch build, e.g. 2.13.0+cu130")
    parser.add_argument("--device", default="", help="the device the tests ran on, e.g. 'NVIDIA H200'")
    parser.add_argument("--run-url", default="", help="link to the run that produced the files")
    parser.add_argument("--runner", default="", help="the host that ran the tests (default: this one)")
    parser.add_argument(
        "--feature-map",
        type=Path,
        help="TOML rules: glob on test id -> feature row, first match wins (unmatched: 'unassigned')",
    )
    parser.add_argument("--results-dir", type=Path, default=Path("results"), help="where the cell dir goes")


def run(args: argparse.Namespace) -> int:
    spec = ImportSpec(
        files=tuple(args.files),
        backend=args.backend,
        cell_id=args.cell_id,
        torch=args.torch,
        device=args.device,
        run_url=args.run_url,
        runner=args.runner,
        feature_map=args.feature_map,
        results_dir=args.results_dir,
    )
    done = import_junit(spec)
    for report in done.files:
        print(f"{report.path}: {report.testcases} testcase(s)", file=sys.stderr)
        for problem in report.problems:
            print(f"harness: warning: {problem}", file=sys.stderr)
    cell = ingest_cell(done.cell_dir)
    rows: dict[str, int] = {}
    for feature in cell.test_features:
        rows[feature] = rows.get(feature, 0) + 1
    for feature, count in rows.items():
        note = " (matched no rule of the feature map)" if feature == UNASSIGNED and args.feature_map else ""
        print(f"  {feature:<24} {count} test(s){note}", file=sys.stderr)
    print(done.cell_dir)
    print(f"merge it with: harness merge {done.cell_dir} [other cells...] -o matrix.json", file=sys.stderr)
    return 0
