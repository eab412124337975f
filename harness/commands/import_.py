"""`harness import JUNIT...`: bare JUnit files from another CI become a cell (a column).

Turn bare JUnit files from another CI (any dialect: pytest and PyTorch CI, Jest, Mocha, Go,
Surefire, nextest, TestNG, CTest, Xcode), several files or a folder of them in one call, into a
cell, with the identity you state; the files are read once, here, and kept gzipped; a feature
map (TOML globs, first match wins) decides the rows, unmatched tests go to `unassigned`. See
[docs/cell-contract.md](docs/cell-contract.md#bringing-junit-from-elsewhere-harness-import).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.commands._remerge import merge_command
from harness.importer.junit_import import ImportSpec, import_junit
from harness.ingest.featuremap import FeatureMap
from harness.model import UNASSIGNED

HELP = "turn bare JUnit files (another CI's, a vendor's) into a cell, with the backend and build you state"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="+",
        type=Path,
        help="JUnit XML files (any dialect: pytest, Jest, Go, ...), or folders of them (their *.xml files);"
        " regular files, links are not followed",
    )
    parser.add_argument(
        "--backend",
        required=True,
        help="the build variant these results are for (e.g. cu130, rocm7.2; see `harness backends`)",
    )
    parser.add_argument(
        "--cell-id",
        required=True,
        help="the column id: letters, digits, '.', '_', '-' (a rerun with the same id replaces it)",
    )
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
    for line in done.duplicates + done.shared:
        print(f"harness: warning: {line}", file=sys.stderr)
    for report in done.files:
        print(f"{report.path}: {report.testcases} testcase(s)", file=sys.stderr)
        for problem in report.problems:
            print(f"harness: warning: {problem}", file=sys.stderr)
    for feature, count in done.rows.items():
        note = " (matched no rule of the feature map)" if feature == UNASSIGNED and args.feature_map else ""
        print(f"  {feature:<24} {count} test(s){note}", file=sys.stderr)
    if done.feature_map is not None:
        _print_rules(done.feature_map, done.rules_taken)
    print(done.cell_dir)
    print(f"merge it with: {merge_command(args.results_dir)}   (every run there)", file=sys.stderr)
    return 0


def _print_rules(feature_map: FeatureMap, taken: tuple[int, ...]) -> None:
    """How many tests each rule of the map took (the first rule that matches takes a test); a rule
    that took none is named: a glob that matches nothing as intended says so here."""
    print("feature map rules (first match wins):", file=sys.stderr)
    for index, rule in enumerate(feature_map.rules):
        globs = ", ".join(repr(p) for p in rule.patterns)
        print(f"  rule {index + 1}: {globs} -> {rule.feature}: {taken[index]} test(s)", file=sys.stderr)
    for index, rule in enumerate(feature_map.rules):
        if not taken[index]:
            globs = ", ".join(repr(p) for p in rule.patterns)
            print(f"harness: warning: rule {index + 1} ({globs} -> {rule.feature}) took no test", file=sys.stderr)
