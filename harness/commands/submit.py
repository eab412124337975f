"""`harness submit CELL`: pack a signed cell and its statement as one archive (`<cell dir>.cell.tar.gz`),
what `harness collect --submissions` and `harness merge` take from a folder, a URL (a release asset)
or an OCI registry. `--push oci://HOST/REPO:TAG` puts it in a registry as an OCI artifact."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.provenance.submission import SUFFIX, archive_name, pack

HELP = "pack a signed cell and its statement as one archive for a matrix to collect; optionally push it to a registry"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cell", type=Path, metavar="CELL", help="the signed cell dir (harness attest)")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        help="the archive (a name ending .cell.tar.gz) or the folder to put it in (default: here)",
    )
    parser.add_argument("--push", metavar="oci://HOST/REPO:TAG", help="also push it to an OCI registry")


def run(args: argparse.Namespace) -> int:
    push = None
    if args.push is not None:
        from harness.provenance.oci_registry import parse_reference

        push = parse_reference(args.push)  # a bad reference is refused before anything is packed
    dest = args.output or Path(".")
    if not dest.name.endswith(SUFFIX):
        dest = dest / archive_name(args.cell)
    pack(args.cell, dest)
    print(f"packed {args.cell} into {dest} ({dest.stat().st_size} bytes)")
    if push is not None:
        from harness.provenance.oci_registry import push_archive

        print(f"pushed {dest} to {push_archive(dest, push)}")
    return 0
