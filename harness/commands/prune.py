"""`harness prune`: remove the harness's old images beyond a disk budget (self-hosted runners).

On a long-lived runner: remove the harness's own oldest images beyond a disk budget, never one a
container uses; says what went and the space freed.
"""

from __future__ import annotations

import argparse
import os

from harness.errors import UsageError
from harness.images import docker_engine
from harness.images.prune import ENV_BUDGET, HARNESS_LABEL, describe, parse_size, prune

HELP = "remove the harness's own old images beyond a disk budget, newest kept, never one a container uses"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--budget",
        help=f"disk the harness's images may keep, e.g. 50GB, 800MB, 1.5TiB, 0 (env {ENV_BUDGET})",
    )
    parser.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="KEY[=VALUE]",
        help=f"only images that also carry this label (repeatable), e.g. {HARNESS_LABEL}=cu130",
    )


def run(args: argparse.Namespace) -> int:
    text = args.budget if args.budget is not None else os.environ.get(ENV_BUDGET, "")
    if not text.strip():
        raise UsageError("no budget given", hint=f"pass --budget 50GB or set {ENV_BUDGET}")
    budget = parse_size(text)
    client = docker_engine.connect()
    try:
        report = prune(client, budget, dry_run=args.dry_run, labels=args.label)
    finally:
        client.close()
    print("\n".join(describe(report)))
    return 0
