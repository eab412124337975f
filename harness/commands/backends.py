"""`harness backends`: the registry as tables (or JSON): the build variants, then which release ships which.

The backend registry as a table.
"""

from __future__ import annotations

import argparse
import json

from harness.registry import load_registry, registry_json, releases_table, variants_table

HELP = "list the build variants and which torch release ships which (harness/backends.toml)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("table", "json"), default="table")


def run(args: argparse.Namespace) -> int:
    registry = load_registry()
    if args.format == "json":
        print(json.dumps(registry_json(registry), indent=2))
        return 0
    print("\n".join(variants_table(registry)))
    print()
    print("\n".join(releases_table(registry)))
    print("\n-: not shipped for that release (no cell is planned; the matrix says 'not shipped').")
    print(
        "Channels: release https://download.pytorch.org/whl/<id>, test (release candidates) .../whl/test/<id>, "
        "nightly .../whl/nightly/<id> (harness plan --channel; a .devYYYYMMDD version is a nightly)."
    )
    print("Any other build (cu136, rocm10.1, ...) is recognised from its name and runs with its family's defaults.")
    return 0
