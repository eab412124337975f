"""`harness report`: render a matrix.json as Markdown or JSON (HTML: see render/html.py)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from harness.errors import UsageError
from harness.matrix import load_matrix
from harness.render.markdown import GITHUB_SUMMARY_LIMIT, render_markdown

HELP = "render matrix.json as markdown (job summary), json or html"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("matrix", type=Path, help="a matrix.json written by `harness merge`")
    parser.add_argument("--format", choices=("md", "json", "html"), default="md")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    parser.add_argument("--limit", type=int, default=GITHUB_SUMMARY_LIMIT, help="markdown size limit in bytes")


def render(matrix: dict, fmt: str, limit: int) -> str:
    if fmt == "md":
        return render_markdown(matrix, limit=limit)
    if fmt == "json":
        return json.dumps(matrix, indent=2) + "\n"
    try:
        html = importlib.import_module("harness.render.html")
    except ModuleNotFoundError:
        raise UsageError("the html renderer is not installed in this build") from None
    return html.render_html(matrix)


def run(args: argparse.Namespace) -> int:
    matrix = load_matrix(args.matrix)
    text = render(matrix, args.format, args.limit)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
