"""`harness diff OLD NEW`: per cell, what newly fails, passes, is skipped, added or removed.

Per column pair: each feature's state before and after, then the tests newly failing, newly passing,
newly skipped, added, removed. Columns pair by id, by backend with `--by-build`, or, with
`--releases`, each torch build of a backend with its previous build in one matrix ("cu130: linalg
partial → supported, 3 tests newly failing"). `--api-diff` adds each release's public API, read from
its wheels by `harness api-diff` ("2.15.0: 152 new public APIs, 10 tested").
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness import jsonio
from harness.api_changes import load_api_diff
from harness.commands._output import emit
from harness.errors import UsageError
from harness.matrix_json import load_matrix
from harness.publish.column_diff import build_pairs, diff_matrices, release_pairs, with_public_api
from harness.publish.render.diff_report import render_diff_markdown

HELP = "compare two matrices, or the torch builds of one: newly failing/passing/skipped, per feature (md or json)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, help="the baseline matrix.json (with --releases: the one matrix)")
    parser.add_argument("new", type=Path, nargs="?", help="the newer matrix.json")
    pairing = parser.add_mutually_exclusive_group()
    pairing.add_argument(
        "--releases",
        action="store_true",
        help="release over release in one matrix: each torch build of a backend against its previous build",
    )
    pairing.add_argument(
        "--by-build",
        action="store_true",
        help="pair columns of the two matrices by backend (and variant) instead of by column id",
    )
    parser.add_argument("--backend", metavar="ID", help="with --releases: only this backend")
    parser.add_argument(
        "--api-diff",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="a `harness api-diff --format json` file: column pairs of its two releases say "
        "'N new public APIs, M tested' (repeatable)",
    )
    parser.add_argument("--format", choices=("md", "json"), default="md")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")


def run(args: argparse.Namespace) -> int:
    if args.releases:
        if args.new is not None:
            raise UsageError("--releases compares the builds inside one matrix: give one matrix.json")
        matrix = load_matrix(args.old)
        pairs = release_pairs(matrix, args.backend)
        if not pairs:
            raise UsageError(
                "no backend in this matrix has two torch builds to compare"
                + (f" (backend {args.backend})" if args.backend else ""),
                hint="run the cells with two torch versions (harness plan --torch 2.13.0,2.14.1), then merge them",
            )
        report = diff_matrices(matrix, matrix, pairs)
    else:
        if args.new is None:
            raise UsageError("give OLD and NEW matrix.json files (or one with --releases)")
        old, new = load_matrix(args.old), load_matrix(args.new)
        report = diff_matrices(old, new, build_pairs(old, new) if args.by_build else None)
    if args.api_diff:
        report = with_public_api(report, [load_api_diff(path) for path in args.api_diff])
    if args.format == "md":
        text = render_diff_markdown(report)
    else:
        text = jsonio.dumps_pretty(report.to_json()).decode() + "\n"
    emit(text, args.output)
    return 0
