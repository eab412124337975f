"""`harness backends`: the registry as a table (or JSON)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from harness.registry import load_registry

HELP = "list the backends of the registry (harness/backends.toml)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("table", "json"), default="table")


def run(args: argparse.Namespace) -> int:
    backends = load_registry()
    if args.format == "json":
        print(json.dumps({k: asdict(v) for k, v in backends.items()}, indent=2))
        return 0
    rows = [("ID", "NAME", "WHEEL INDEX", "EXPECTS", "DEVICE FLAGS", "RUNNER LABELS", "HEALTH CHECK")]
    for b in backends.values():
        expects = f"+{b.local_tag}" + (f", {b.build} {b.runtime_version}" if b.runtime_version else "")
        flags = []
        if b.gpus:
            flags.append(f"--gpus {b.gpus}")
        flags += [f"--device {d}" for d in b.devices]
        flags += [f"--group-add {g}" for g in b.group_add]
        flags += [f"--security-opt {s}" for s in b.security_opt]
        rows.append(
            (
                b.id,
                b.display_name,
                b.wheel_index,
                expects,
                " ".join(flags) or "-",
                ",".join(b.runner_labels),
                " ".join(b.health_check),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return 0
