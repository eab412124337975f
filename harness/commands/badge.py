"""`harness badge MATRIX`: SVG badges per column and for the whole matrix.

One SVG per backend (`cu130 | 27/30 features`) and one for the matrix.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness import outputs
from harness.matrix_json import load_matrix
from harness.publish.render.badge import badges

HELP = "write SVG badges (one per backend column and one for the matrix) into a folder"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("matrix", type=Path, help="a matrix.json written by `harness merge`")
    parser.add_argument("-o", "--output", type=Path, default=Path("badges"), help="folder (default: ./badges)")


def run(args: argparse.Namespace) -> int:
    files = badges(load_matrix(args.matrix))
    outputs.sweep(args.output)  # temp files of a killed earlier run
    for name, svg in files.items():
        outputs.write_file(args.output / name, svg)  # a README's badge is never a 0-byte file
        print(f"wrote {args.output / name}", file=sys.stderr)
    return 0
