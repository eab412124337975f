"""`harness plan`: the cells to run, from the registry (GitHub Actions matrix or a table).

The GitHub Actions matrix (`{"include": [...]}`) derived from the registry; several torch versions
make a cell per backend and version (`cu130-2.14.1`). `--channel` (or the version: .devYYYYMMDD is a
nightly) picks the release, test or nightly index of every cell.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence

from harness.commands._args import backend_selector
from harness.errors import UsageError
from harness.plan import PlannedCell, github_matrix, is_self_hosted, make_plan, table
from harness.registry import CHANNELS, FAMILIES, load_registry

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
        "--channel",
        choices=CHANNELS,
        help="where torch comes from: release (/whl/<variant>), test (release candidates, /whl/test/<variant>) or "
        "nightly (/whl/nightly/<variant>); default: what the version says (.devYYYYMMDD: nightly; rcN or a release "
        "the registry lists on the test channel: test)",
    )


def runner_labels(text: str) -> dict[str, tuple[str, ...]]:
    """The --runner-labels JSON: an object of backend or family -> a list of labels (or one label)."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as err:
        raise UsageError(f"--runner-labels is not JSON ({err})", hint='e.g. {"cuda": ["gpu-a100"]}') from None
    if not isinstance(data, dict):
        raise UsageError("--runner-labels must be a JSON object of backend -> labels")
    out: dict[str, tuple[str, ...]] = {}
    registry = load_registry()
    for key, labels in data.items():
        if key not in FAMILIES and registry.get(key) is None:
            raise UsageError(f"--runner-labels names {key!r}, which is no backend or family")
        labels = [labels] if isinstance(labels, str) else labels
        if not isinstance(labels, list) or not labels or not all(isinstance(x, str) and x for x in labels):
            raise UsageError(f"--runner-labels {key}: give a label or a non-empty list of labels")
        out[key] = tuple(labels)
    return out


def relabel(cells: Sequence[PlannedCell], labels: dict[str, tuple[str, ...]]) -> list[PlannedCell]:
    """Each cell on the labels given for its variant, else for its family, else the registry's."""
    registry = load_registry()
    out = []
    for cell in cells:
        backend = registry.get(cell.backend)
        chosen = labels.get(cell.backend) or (labels.get(backend.build) if backend else None)
        if chosen:
            cell = dataclasses.replace(cell, runner_labels=chosen, self_hosted=is_self_hosted(chosen))
        out.append(cell)
    return out


def run(args: argparse.Namespace) -> int:
    plan = make_plan(args.backend, args.torch, args.channel)
    cells = relabel(plan.cells, runner_labels(args.runner_labels))
    for note in plan.notes:
        print(f"harness plan: {note}", file=sys.stderr)
    if args.format == "github":
        sys.stdout.write(github_matrix(cells) + "\n")
    elif args.format == "json":
        sys.stdout.write(json.dumps([c.to_json() for c in cells], indent=2) + "\n")
    else:
        sys.stdout.write(table(cells))
    return 0
