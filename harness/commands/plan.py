"""`harness plan`: the cells to run, from the registry (GitHub Actions matrix or a table)."""

from __future__ import annotations

import argparse
import json
import sys

from harness.plan import github_matrix, plan_cells, table
from harness.registry import load_registry

HELP = "list the cells to run, e.g. as the GitHub Actions matrix (--format github)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("table", "github", "json"), default="table")
    parser.add_argument(
        "--backend", action="append", choices=list(load_registry()), help="only this backend (repeatable)"
    )
    parser.add_argument(
        "--torch",
        action="append",
        default=[],
        metavar="VERSIONS",
        help="torch versions the images pin, comma-separated or repeated, e.g. 2.13.0,2.14.1: one cell per backend "
        "and version, ids <backend>-<version> when there are several (default: the images' default torch)",
    )


def run(args: argparse.Namespace) -> int:
    cells = plan_cells(args.backend, args.torch)
    if args.format == "github":
        sys.stdout.write(github_matrix(cells) + "\n")
    elif args.format == "json":
        sys.stdout.write(json.dumps([c.to_json() for c in cells], indent=2) + "\n")
    else:
        sys.stdout.write(table(cells))
    return 0
