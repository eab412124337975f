"""`harness plan`: the cells to run, from the registry (GitHub Actions matrix or a table).

The GitHub Actions matrix (`{"include": [...]}`) derived from the registry; several torch versions
make a cell per backend and version (`cu130-2.14.1`); `--python` a cell per CPython (`cu132-cp315`).
`--channel` (or the version: .devYYYYMMDD is a nightly) picks the release, test or nightly index of
every cell.
"""

from __future__ import annotations

import argparse
import json
import sys

from harness.commands._args import backend_selector
from harness.plan import github_matrix, make_plan, parse_runner_labels, relabel, table
from harness.registry import CHANNELS

HELP = "list the cells to run, e.g. as the GitHub Actions matrix (--format github)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("table", "github", "json"), default="table")
    parser.add_argument(
        "--backend",
        action="append",
        type=backend_selector,
        help="only this variant (cu132) or family (cuda: every CUDA build the release ships); repeatable",
    )
    parser.add_argument(
        "--runner-labels",
        metavar="JSON",
        default="",
        help='runs-on labels per backend or family instead of the registry\'s, e.g. \'{"cuda": ["gpu-a100"], '
        '"rocm7.2": ["self-hosted", "mi300"]}\' (a workflow input passes it through)',
    )
    parser.add_argument(
        "--torch",
        action="append",
        default=[],
        metavar="VERSIONS",
        help="torch versions the images pin, comma-separated or repeated, e.g. 2.13.0,2.14.1,2.15.0: one cell per "
        "version and build its release ships, ids <backend>-<version> when there are several (default: the current "
        "release's newest version)",
    )
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="PYTHONS",
        help="the CPythons of each build: default (one cell per build, on its image's own interpreter), all (every "
        "one the release ships wheels for, free-threaded included) or a list, e.g. 3.13,3.14t (one the release does "
        "not ship is 'not shipped': no cell); a cell on another Python than the default image's carries its tag in "
        "its id (cu132-cp315)",
    )
    parser.add_argument(
        "--channel",
        choices=CHANNELS,
        help="where torch comes from: release (/whl/<variant>), test (release candidates, /whl/test/<variant>) or "
        "nightly (/whl/nightly/<variant>); default: what the version says (.devYYYYMMDD: nightly; rcN or a release "
        "the registry lists on the test channel: test)",
    )


def run(args: argparse.Namespace) -> int:
    plan = make_plan(args.backend, args.torch, args.channel, args.python)
    cells = relabel(plan.cells, parse_runner_labels(args.runner_labels))
    for note in plan.notes:
        print(f"harness plan: {note}", file=sys.stderr)
    if args.format == "github":
        sys.stdout.write(github_matrix(cells) + "\n")
    elif args.format == "json":
        sys.stdout.write(json.dumps([c.to_json() for c in cells], indent=2) + "\n")
    else:
        sys.stdout.write(table(cells))
    return 0
