"""Check that the torch in an image is the build its backend claims; the last step of every image build.

Copied into the build context by harness/images.py and run inside the image as
`python verify_torch.py --backend cu126 --local-tag cu126 --build cuda --runtime 12.6 [--version 2.13.0]`.
It needs no device (torch.version.* are compile-time facts) and imports only the stdlib at
module level, so importing it from the harness never imports torch. Exit 0: the image is what
it claims; exit 1: one line per mismatch, each starting with FAILED_PREFIX, so the build log
says exactly why the image was refused.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from typing import Any

FAILED_PREFIX = "image verification failed:"


def torch_facts() -> dict[str, Any]:
    import torch  # only ever inside the image

    version = str(torch.__version__)
    return {
        "version": version,
        "local_tag": version.partition("+")[2],
        "cuda": getattr(torch.version, "cuda", None),
        "hip": getattr(torch.version, "hip", None),
        "xpu": getattr(torch.version, "xpu", None),
    }


def build_of(facts: dict[str, Any]) -> str:
    if facts.get("hip"):
        return "rocm"
    if facts.get("cuda"):
        return "cuda"
    if facts.get("xpu"):
        return "xpu"
    return "cpu"


def mismatches(
    facts: dict[str, Any], *, backend: str, local_tag: str, build: str, runtime: str, version: str = ""
) -> list[str]:
    """Every way the installed torch differs from what the backend expects (empty: it is right)."""
    found = build_of(facts)
    have = facts["version"]
    problems: list[str] = []
    if local_tag and facts.get("local_tag") != local_tag:
        problems.append(
            f"torch {have} carries +{facts.get('local_tag') or '(no tag)'}, backend {backend} needs +{local_tag}"
        )
    if found != build:
        problems.append(f"torch {have} is a {found} build, backend {backend} needs a {build} build")
    runtime_have = facts.get("cuda") if build == "cuda" else facts.get("hip") if build == "rocm" else None
    if runtime and not str(runtime_have or "").startswith(runtime):
        kind = "torch.version.cuda" if build == "cuda" else "torch.version.hip"
        problems.append(f"{kind} is {runtime_have}, backend {backend} needs {runtime}.x")
    if version and have.partition("+")[0] != version:
        problems.append(f"torch {have} installed, {version} was asked for")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", required=True)
    parser.add_argument("--local-tag", default="")
    parser.add_argument("--build", required=True)
    parser.add_argument("--runtime", default="")
    parser.add_argument("--version", default="", help="exact torch version asked for (empty: any)")
    parser.add_argument("--write", help="also write the facts as JSON to this file")
    args = parser.parse_args(argv)
    try:
        facts = torch_facts()
    except Exception as err:  # a wheel that does not import is the clearest failure of all
        print(f"{FAILED_PREFIX} import torch failed: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    problems = mismatches(
        facts,
        backend=args.backend,
        local_tag=args.local_tag,
        build=args.build,
        runtime=args.runtime,
        version=args.version,
    )
    if not (shutil.which("g++") or shutil.which("c++")):
        problems.append("no C++ compiler (g++) in the image; torch.compile (Inductor) needs one")
    for problem in problems:
        print(f"{FAILED_PREFIX} {problem}", file=sys.stderr)
    if problems:
        return 1
    if args.write:
        with open(args.write, "w", encoding="utf-8") as handle:
            json.dump({"backend": args.backend, **facts}, handle)
    print(f"image verified: torch {facts['version']} is the {args.backend} build")
    return 0


if __name__ == "__main__":
    sys.exit(main())
