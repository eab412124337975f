"""`harness build --backend X`: build (or reuse) the backend's image through the Docker SDK.

The tag is `torch-compat/<backend>:<hash of the build inputs>`, so an unchanged image is
reused, not rebuilt. Progress goes to stderr; the image reference is the one line on stdout.
`--dry-run` prints the build plan instead (Dockerfiles, build arguments, tag inputs, steps) and
needs no engine. `--push REGISTRY` builds once for every runner: the image goes to the registry and
the one line is its pullable `REGISTRY/torch-compat/<backend>@sha256:...`; an image the registry
holds already (same tag: same inputs) is neither built nor pushed again.

Build the backend's image through the Docker SDK; the tag is a hash of the build inputs, so an
unchanged image is reused; every library its wheels bundle must load. See `docs/containers.md`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from harness.commands._args import BACKEND_HELP, PYTHON_HELP, backend, python_version
from harness.commands._build_options import add_build_arguments, spec_from_args
from harness.images import docker_engine, image_build, recipes

HELP = "build the image of one backend (reused when its inputs are unchanged); --push: once, to a registry, by digest"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", required=True, type=backend, help=f"whose image to build: {BACKEND_HELP}")
    parser.add_argument(
        "--python",
        type=python_version,
        help=f"the image's Python: {PYTHON_HELP}; it is part of the tag, and the image proves it (version, ABI, "
        f"free-threading) or is refused (default: the base image's python3; env {recipes.ENV_PYTHON_VERSION})",
    )
    parser.add_argument("--json", action="store_true", help="print the image facts as JSON instead of its reference")
    parser.add_argument(
        "--push",
        metavar="REGISTRY",
        help="push the image to REGISTRY (e.g. ghcr.io/OWNER, 127.0.0.1:5000) and print REGISTRY/...@sha256:DIGEST; "
        "skipped when the registry has this tag already",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the build plan (Dockerfiles, build arguments, tag inputs, steps); build nothing, need no engine",
    )
    add_build_arguments(parser)


def run(args: argparse.Namespace) -> int:
    spec = spec_from_args(args, args.backend)
    if args.dry_run:
        plan = recipes.plan_build(spec)
        print(json.dumps(recipes.plan_facts(plan), indent=2) if args.json else "\n".join(recipes.render_plan(plan)))
        return 0
    if args.push:
        from harness.images.push import check_registry

        check_registry(args.push)  # a wrong registry says so before any engine is asked
    client = docker_engine.connect()
    try:
        if args.push:
            return _push(args, spec, client)
        result = image_build.ensure_image(spec, client, rebuild=args.rebuild, progress=_stderr, verbose=args.build_log)
        if args.json:
            facts = recipes.describe_image(client.images.get(result.ref), result.ref)
            print(json.dumps({**facts, "reused": result.reused}, indent=2))
        else:
            print(result.ref)
    finally:
        client.close()
    return 0


def _push(args: argparse.Namespace, spec: recipes.BuildSpec, client: Any) -> int:
    """Build once for every runner: the registry's digest reference is the one line on stdout."""
    from harness.images.push import publish_image

    done = publish_image(spec, client, args.push, rebuild=args.rebuild, progress=_stderr, verbose=args.build_log)
    if args.json:
        print(json.dumps({"ref": done.ref, "tag": done.tag, "built": done.built, "pushed": done.pushed}, indent=2))
    else:
        print(done.ref)
    return 0


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
