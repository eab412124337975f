"""`harness trust`: the trust file, who may vouch for which columns (docs/provenance.md). `add-key`
appends an ed25519 public key for some backends or column patterns; `add-identity` a GitHub Actions
workflow (keyless, Sigstore); `check` reads the file and lists who vouches for what; `refresh-root`
replaces the pinned Sigstore trusted root and says what changed. Every edit is checked as a whole
before the file is written (whole)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness import outputs
from harness.errors import InputError, UsageError

HELP = "the trust file (trust.toml): add a key or a workflow identity, check it, refresh the pinned Sigstore root"
DEFAULT_FILE = Path("trust.toml")


def _scope_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        action="append",
        default=[],
        metavar="ID",
        help="a family (rocm) or build variant (rocm7.14) it may vouch for (repeatable)",
    )
    parser.add_argument(
        "--column", action="append", default=[], metavar="PATTERN", help="a cell id pattern, * and ? (repeatable)"
    )
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="the trust file (default: trust.toml)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    key = sub.add_parser("add-key", help="trust an ed25519 public key (PEM) for some backends or columns")
    key.add_argument("public_key", type=Path, metavar="KEY.pub", help="the public key (openssl pkey -pubout)")
    key.add_argument("--name", help="who vouches, as the outputs name it (default: the key file's name)")
    _scope_options(key)
    ident = sub.add_parser("add-identity", help="trust a GitHub Actions workflow (keyless) for some backends")
    ident.add_argument("--repository", required=True, metavar="OWNER/NAME", help="the repository whose workflow ran")
    ident.add_argument(
        "--workflow", required=True, metavar="PATH", help="its workflow file (.github/workflows/x.yml): the caller"
    )
    ident.add_argument("--ref", help="the ref it must run from (refs/heads/main, refs/tags/v*); default: any")
    ident.add_argument("--name", required=True, help="who vouches, as the outputs name it")
    _scope_options(ident)
    check = sub.add_parser("check", help="read the trust file and list who vouches for what")
    check.add_argument("--file", type=Path, default=DEFAULT_FILE, help="the trust file (default: trust.toml)")
    root = sub.add_parser("refresh-root", help="replace the pinned Sigstore trusted root, saying what changed")
    root.add_argument("--from", dest="source", type=Path, help="a trusted_root.json to take (default: Sigstore's TUF)")


def run(args: argparse.Namespace) -> int:
    return {"add-key": _add_key, "add-identity": _add_identity, "check": _check, "refresh-root": _refresh}[args.action](
        args
    )


def _need_scope(args: argparse.Namespace) -> None:
    from harness.provenance.trust import check_backend_arguments

    if not args.backend and not args.column:
        raise UsageError("say what it may vouch for: --backend ID (a family or build variant) or --column PATTERN")
    check_backend_arguments(args.backend or [])


def _add_key(args: argparse.Namespace) -> int:
    from harness.provenance.keys import load_public_key
    from harness.provenance.trust import add_key

    _need_scope(args)
    key = load_public_key(args.public_key)
    name = args.name or args.public_key.name.removesuffix(".pub").removesuffix(".pem")
    trust = add_key(args.file, key, name=name, backends=args.backend, columns=args.column)
    entry = trust.key(key.fingerprint)
    assert entry is not None
    print(f"{args.file}: {name!r} ({key.fingerprint}) may vouch for {entry.scope.describe()}")
    return 0


def _add_identity(args: argparse.Namespace) -> int:
    from harness.provenance.trust import add_identity

    _need_scope(args)
    trust = add_identity(
        args.file,
        name=args.name,
        repository=args.repository,
        workflow=args.workflow,
        ref=args.ref,
        backends=args.backend,
        columns=args.column,
    )
    entry = next(i for i in trust.identities if i.name == args.name)
    print(f"{args.file}: {args.name!r} ({entry.describe()}) may vouch for {entry.scope.describe()}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from harness.provenance.trust import load_trust

    trust = load_trust(args.file)
    for key in trust.keys:
        print(f"key       {key.name!r} {key.fingerprint}: {key.scope.describe()}")
    for identity in trust.identities:
        print(f"identity  {identity.name!r} {identity.describe()}: {identity.scope.describe()}")
    keys, identities = len(trust.keys), len(trust.identities)
    print(
        f"{args.file}: {keys} key{'' if keys == 1 else 's'}, {identities} identit{'y' if identities == 1 else 'ies'}",
        file=sys.stderr,
    )
    return 0


def _refresh(args: argparse.Namespace) -> int:
    from harness.provenance.sigstore_bundle import TRUSTED_ROOT, check_root, current_root, root_changes
    from harness.regular_file import read_regular

    if args.source is not None:
        try:
            raw = read_regular(args.source)
        except OSError as err:
            raise InputError(f"{args.source}: cannot read: {err.strerror or err}") from None
    else:
        raw = current_root()
    where = str(args.source or "Sigstore's TUF repository")
    new = check_root(raw, where)
    old = json.loads(TRUSTED_ROOT.read_text(encoding="utf-8"))
    changes = root_changes(old, new)
    for line in changes:
        print(f"trust: {line}")
    if not changes and new == old:
        print(f"trust: the pinned root is current ({TRUSTED_ROOT})")
        return 0
    outputs.write_file(TRUSTED_ROOT, json.dumps(new, indent=2) + "\n")
    print(f"trust: wrote {TRUSTED_ROOT} ({len(changes)} change(s)); review it like code and commit it")
    return 0
