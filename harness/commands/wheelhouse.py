"""`harness wheelhouse --backend X -o DIR`: download torch for backend X and everything its image
installs, for the image's Python and platform, into DIR, for an air-gapped `harness build`.

Download torch for `X` and everything its image installs, for the image's Python and glibc, for an
offline `harness build --wheelhouse DIR --build-network none`; prints the count and size.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.commands._args import BACKEND_HELP, backend, python_version
from harness.commands._build_options import CHANNEL_HELP
from harness.images import recipes, wheelhouse
from harness.registry import CHANNELS

HELP = "download the wheels an offline image build of one backend needs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", required=True, type=backend, help=f"whose wheels to get: {BACKEND_HELP}")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the wheelhouse folder (made if absent)")
    parser.add_argument("--torch", help=f"torch version or requirement (default {recipes.DEFAULT_TORCH})")
    parser.add_argument("--channel", choices=CHANNELS, help=CHANNEL_HELP)
    parser.add_argument("--index-url", help="torch wheel index (default: the registry's of the channel, or a mirror)")
    parser.add_argument("--package-index-url", help=f"index for everything else (default {wheelhouse.PYPI})")
    parser.add_argument("--base-image", help="the image's base, to know its Python and glibc (default: the registry's)")
    parser.add_argument(
        "--python",
        "--python-version",
        dest="python_version",
        type=python_version,
        help="the image's Python, e.g. 3.11, 3.15 or 3.14t (free-threaded: cp314t wheels); default: the base image's",
    )
    parser.add_argument("--glibc", help="the image's glibc, e.g. 2.36 (default: from the base image)")


def run(args: argparse.Namespace) -> int:
    made = wheelhouse.make_wheelhouse(
        args.backend,
        args.output,
        torch=args.torch,
        base_image=args.base_image,
        python=args.python_version,
        glibc=args.glibc,
        index_url=args.index_url,
        package_index_url=args.package_index_url,
        channel=args.channel,
        progress=_stderr,
    )
    runtime = f", CUDA {made.torch.cuda}" if made.torch.cuda else f", HIP {made.torch.hip}" if made.torch.hip else ""
    print(
        f"wheelhouse {made.path}: {made.wheels} wheels, {made.size / 1e9:.1f} GB "
        f"(torch {made.torch.version}{runtime})\n"
        f"build offline: harness build --backend {args.backend.id} --wheelhouse {made.path} --build-network none"
    )
    return 0


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
