"""`harness report`: render a matrix.json as Markdown or JSON (HTML: see render/html.py).

Render the matrix: the job-summary Markdown (kept under GitHub's 1 MiB), the JSON, or the
self-contained web page.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from harness import jsonio
from harness.commands._output import emit
from harness.errors import UsageError
from harness.matrix_json import load_matrix
from harness.model import Matrix
from harness.publish.render import DEFAULT_STALE_AFTER_HOURS
from harness.publish.render.markdown import GITHUB_SUMMARY_LIMIT, render_markdown

HELP = "render matrix.json as markdown (job summary), json or html"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("matrix", type=Path, help="a matrix.json written by `harness merge`")
    parser.add_argument("--format", choices=("md", "json", "html"), default="md")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    parser.add_argument("--limit", type=int, default=GITHUB_SUMMARY_LIMIT, help="markdown size limit in bytes")
    parser.add_argument(
        "--stale-after",
        type=float,
        default=DEFAULT_STALE_AFTER_HOURS,
        metavar="HOURS",
        help="html: mark columns older than this STALE",
    )


def render(matrix: Matrix, fmt: str, limit: int, stale_after: float = DEFAULT_STALE_AFTER_HOURS) -> str:
    if fmt == "md":
        return render_markdown(matrix, limit=limit)
    if fmt == "json":
        return jsonio.dumps_pretty(matrix.to_json()).decode() + "\n"
    try:
        html = importlib.import_module("harness.publish.render.html")
    except ModuleNotFoundError:
        raise UsageError("the html renderer is not installed in this build") from None
    return html.render_html(matrix, stale_after_hours=stale_after)


def run(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError(f"--limit must be a positive number of bytes, not {args.limit}")
    matrix = load_matrix(args.matrix)
    if args.stale_after <= 0:
        raise UsageError("--stale-after must be a positive number of hours")
    text = render(matrix, args.format, args.limit, args.stale_after)
    emit(text, args.output)
    return 0
