"""`harness doctor`: what this host can run: its GPUs, the installed torch, each build variant, the install line.

What this host can run: its GPUs (driver, compute capability or gfx target, Intel family), the torch
`--python` has and whether it can use the GPU, which variants of each listed release run here, and
one exact install line with the reasons. Exit 0 whenever the report is made. See
[docs/doctor.md](docs/doctor.md), with a point-by-point comparison to uv's `--torch-backend=auto`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from harness.host.doctor import make_report, resolve_release
from harness.host.doctor_text import render_text
from harness.host.facts import detect_host, inspect_torch, root_from_env
from harness.registry import load_registry

HELP = "say what this host can run: its GPUs, the installed torch, which builds run here, and the install line"

EPILOG = (
    "Exit status: 0 whenever the report is made, also when the installed torch cannot use the GPU or is "
    "missing (the text says so; --format json has torch_verdict.fit); 2 for a --torch that names no listed "
    "release. See docs/doctor.md."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.add_argument(
        "--python", default=sys.executable, help="the interpreter whose torch to read (default: this one)"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--torch", metavar="VERSION", help="ask about another release (2.14 or 2.14.1; default: the current one)"
    )


def run(args: argparse.Namespace) -> int:
    resolve_release(load_registry(), args.torch)  # a bad --torch fails before any probing
    env = dict(os.environ)
    host = detect_host(root_from_env(env), env)
    torch = inspect_torch(args.python, env)
    report = make_report(host, torch, python=args.python, asked=args.torch)
    if args.format == "json":
        print(json.dumps(report.to_dict(), indent=2))
    else:
        sys.stdout.write(render_text(report))
    return 0
