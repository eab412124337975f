"""`harness attest CELL`: sign a cell's statement (docs/provenance.md). With `--key KEY.pem` (an ed25519
key, as `openssl genpkey -algorithm ed25519` writes it) the statement is a DSSE envelope; without one,
in GitHub Actions with `permissions: id-token: write`, it is signed keyless with the workflow's
identity (Sigstore). Either way the cell gets `provenance.json`, written whole. Everything is read and
checked before anything is written: a bad key or cell is one line, exit 4, and the cell as it was."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from harness.errors import UsageError
from harness.provenance.attestation import attest_cell
from harness.provenance.keys import load_private_key
from harness.provenance.statement import suites_tree_digest

HELP = "sign a cell's statement: with an ed25519 key, or keyless with the GitHub Actions workflow's identity"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cells", nargs="+", type=Path, metavar="CELL", help="cell dirs to sign")
    parser.add_argument(
        "--key",
        type=Path,
        metavar="KEY.pem",
        help="the ed25519 private key (PEM); without it, keyless in GitHub Actions (needs id-token: write)",
    )
    parser.add_argument(
        "--suites",
        type=Path,
        metavar="DIR",
        help="the suites folder the cell ran: its tree's digest goes in the statement",
    )
    parser.add_argument("--run-url", help="the run to name in the statement (default: the manifest's)")


def run(args: argparse.Namespace) -> int:
    key = load_private_key(args.key) if args.key is not None else None
    keyless = None
    if key is None:
        if not os.environ.get("ACTIONS_ID_TOKEN_REQUEST_URL"):
            raise UsageError(
                "no --key, and no GitHub Actions OIDC identity here to sign keyless",
                hint="pass --key KEY.pem (openssl genpkey -algorithm ed25519 -out KEY.pem), or run in GitHub "
                "Actions with `permissions: id-token: write`",
            )
        from harness.provenance.sigstore_bundle import sign_keyless

        keyless = sign_keyless
    if args.suites is not None and not args.suites.is_dir():
        raise UsageError(f"--suites {args.suites}: not a folder")
    tree = suites_tree_digest(args.suites) if args.suites is not None else None
    for cell in args.cells:
        done = attest_cell(cell, key=key, keyless=keyless, suites_tree=tree, run_url=args.run_url)
        print(f"signed {cell} ({done.files} files, sha256 {done.digest[:12]}…) with {done.signer}: {done.path}")
    if len(args.cells) > 1:
        print(f"attest: {len(args.cells)} cells signed", file=sys.stderr)
    return 0
