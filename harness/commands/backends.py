"""`harness backends`: the registry as tables (or JSON): the build variants, then which release ships which.

The backend registry as a table.
"""

from __future__ import annotations

import argparse
import json
import shlex
from dataclasses import asdict

from harness.registry import Registry, load_registry
from harness.text_table import aligned

HELP = "list the build variants and which torch release ships which (harness/backends.toml)"

STATUS_MARK = {"stable": "stable", "experimental": "experimental", "legacy": "legacy", None: "-"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("table", "json"), default="table")


def variants_table(registry: Registry) -> list[str]:
    rows = [("ID", "NAME", "WHEEL INDEX", "EXPECTS", "DEVICE FLAGS", "RUNNER LABELS", "HEALTH CHECK")]
    for b in registry.values():
        expects = f"+{b.local_tag}" + (f", {b.build} {b.runtime_version}" if b.runtime_version else "")
        if b.min_driver:
            expects += f", driver >= {b.min_driver}"
        flags = [f"--gpus {b.gpus}"] if b.gpus else []
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
                shlex.join(b.health_check),
            )
        )
    return aligned(rows)


def releases_table(registry: Registry) -> list[str]:
    """Release x variant: stable / experimental / legacy, `-` where upstream does not ship the build."""
    variants = list(registry)
    rows = [("RELEASE", "LATEST", "CHANNEL", "RELEASED", "PYTHON", "PYPI DEFAULT", *variants)]
    for release in registry.releases.values():
        marks = tuple(STATUS_MARK[release.status(v)] for v in variants)
        current = " (current)" if release.id == registry.current_release else ""
        date = release.released or f"planned {release.planned}"
        rows.append(
            (
                release.id + current,
                release.latest,
                release.channel,
                date,
                python_span(release.python),
                release.pypi_default or "?",
                *marks,
            )
        )
    return aligned(rows)


def python_span(pythons: tuple[str, ...]) -> str:
    """3.11-3.15+3.14t,3.15t: the CPython versions a release has wheels for, short ('?' unknown)."""
    plain = [p for p in pythons if not p.endswith("t")]
    free = [p for p in pythons if p.endswith("t")]
    text = f"{plain[0]}-{plain[-1]}" if len(plain) > 1 else "".join(plain)
    return (text + ("+" + ",".join(free) if free else "")) or "?"


def run(args: argparse.Namespace) -> int:
    registry = load_registry()
    if args.format == "json":
        data = {
            "current": registry.current_release,
            "variants": {k: asdict(v) for k, v in registry.variants.items()},
            "releases": {
                r.id: {**asdict(r), "builds": dict(r.builds), "cuda_min_arch": dict(r.cuda_min_arch)}
                for r in registry.releases.values()
            },
        }
        print(json.dumps(data, indent=2))
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
