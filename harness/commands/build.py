"""`harness build --backend X`: build (or reuse) the backend's image through the Docker SDK.

The tag is `torch-compat/<backend>:<hash of the build inputs>`, so an unchanged image is
reused, not rebuilt. Progress goes to stderr; the image reference is the one line on stdout.
`--dry-run` prints the build plan instead (Dockerfiles, build arguments, tag inputs, steps) and
needs no engine.

Build the backend's image through the Docker SDK; the tag is a hash of the build inputs, so an
unchanged image is reused; every library its wheels bundle must load. See `docs/containers.md`.
"""

from __future__ import annotations

import argparse
import json
import sys

from harness.commands._args import BACKEND_HELP, backend_id
from harness.commands._build_options import add_build_arguments, spec_from_args
from harness.run import docker_engine, image_build, images

HELP = "build the image of one backend (reused when its inputs are unchanged)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", required=True, type=backend_id, help=f"whose image to build: {BACKEND_HELP}")
    parser.add_argument("--json", action="store_true", help="print the image facts as JSON instead of its reference")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the build plan (Dockerfiles, build arguments, tag inputs, steps); build nothing, need no engine",
    )
    add_build_arguments(parser)


def run(args: argparse.Namespace) -> int:
    spec = spec_from_args(args, args.backend)
    if args.dry_run:
        plan = images.plan_build(spec)
        print(json.dumps(images.plan_facts(plan), indent=2) if args.json else "\n".join(images.render_plan(plan)))
        return 0
    client = docker_engine.connect()
    try:
        result = image_build.ensure_image(spec, client, rebuild=args.rebuild, progress=_stderr, verbose=args.build_log)
        if args.json:
            facts = images.describe_image(client.images.get(result.ref), result.ref)
            print(json.dumps({**facts, "reused": result.reused}, indent=2))
        else:
            print(result.ref)
    finally:
        client.close()
    return 0


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
