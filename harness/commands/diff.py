"""`harness diff OLD NEW`: per cell, what newly fails, passes, is skipped, added or removed."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness import jsonio
from harness.commands._output import emit
from harness.diff import diff_matrices
from harness.matrix import load_matrix
from harness.render.diffmd import render_diff_markdown

HELP = "compare two matrix.json files: newly failing/passing/skipped, added, removed (markdown or json)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, help="the baseline matrix.json")
    parser.add_argument("new", type=Path, help="the newer matrix.json")
    parser.add_argument("--format", choices=("md", "json"), default="md")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")


def run(args: argparse.Namespace) -> int:
    report = diff_matrices(load_matrix(args.old), load_matrix(args.new))
    text = (
        render_diff_markdown(report) if args.format == "md" else jsonio.dumps_pretty(report.to_json()).decode() + "\n"
    )
    emit(text, args.output)
    return 0
