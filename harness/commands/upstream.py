"""`harness upstream`: the registry compared with what the package indexes serve.

Reads pip's index (PyPI, or the mirror or proxy pip is configured with) through `pip index versions`
and its PEP 691 JSON page, and PyTorch's release, test and nightly channel pages; prints each
difference (new releases and patch releases, upload dates, Python versions, new or missing variants,
a release that left the test channel) with where it was read. `--write FILE` writes backends.toml
with the plain facts applied (validated first, written atomically; FILE may be the registry itself);
what needs a person (a new variant's status) is listed. Each source says what it gave; offline, or with
a page that did not answer (pip then answers from its other sources), it says so and exits 3: it never
says "the registry matches the indexes" about what it could not read.
`--record DIR` saves every response; `--responses DIR` replays them instead of the network.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

from harness.errors import InfrastructureError, InputError, RegistryError
from harness.images import upstream
from harness.jsonio import write_atomic
from harness.registry import CHANNELS, REGISTRY_PATH, load_registry

HELP = "compare the registry with what PyPI and PyTorch's channel indexes serve; --write proposes the change"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--index-url",
        help="pip's index to read releases from (default: pip's own: PIP_INDEX_URL, pip config, else PyPI)",
    )
    parser.add_argument(
        "--channel",
        action="append",
        choices=CHANNELS,
        help="PyTorch channel pages to read (repeatable; default: release, test and nightly)",
    )
    parser.add_argument(
        "--registry", type=Path, default=REGISTRY_PATH, help="the registry to compare (default: the harness's)"
    )
    parser.add_argument(
        "--write",
        type=Path,
        metavar="FILE",
        help="write the registry with the differences that are plain facts applied (FILE may be the registry)",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--record", type=Path, metavar="DIR", help="save every index response under DIR")
    source.add_argument(
        "--responses", type=Path, metavar="DIR", help="replay responses saved with --record instead of the network"
    )


def run(args: argparse.Namespace) -> int:
    try:
        registry = load_registry(args.registry.resolve())
    except RegistryError as err:  # a file named on the command line that cannot be read: exit 4, as any
        if args.registry.resolve() == REGISTRY_PATH.resolve():
            raise
        raise InputError(str(err)) from None
    source: upstream.Source
    if args.responses:
        source = upstream.Recorded(args.responses)
        index = args.index_url or upstream.PYPI
    else:
        source = upstream.Live(record=args.record)
        index = args.index_url or upstream.pip_index_url()
    try:
        found = upstream.compare(registry, source, index.rstrip("/"), args.channel or upstream.CHANNEL_PAGES)
    except upstream.Offline as err:
        raise InfrastructureError(upstream.offline_line(err)) from None
    for where, what in found.gave.items():  # per source what it gave, and what could not be read
        print(f"harness upstream: read {where}: {what}", file=sys.stderr)
    for where, why in found.unread.items():
        print(f"harness upstream: not read {where}: {why}", file=sys.stderr)
    for note in found.notes:
        print(f"harness upstream: {note}", file=sys.stderr)
    for diff in found.differences:
        print(diff.line())
    read = ", ".join(found.read)
    if not found.differences and found.complete:
        print(f"the registry matches the indexes (read: {read})")
    elif found.differences:
        print(f"{len(found.differences)} difference(s) (read: {read})", file=sys.stderr)
    if args.write:
        today = datetime.datetime.now(datetime.UTC).date().isoformat()
        text, left = upstream.propose(args.registry.read_text(encoding="utf-8"), registry, found.differences, today)
        for line in left:
            print(f"harness upstream: for a person (not written): {line}", file=sys.stderr)
        if text == args.registry.read_text(encoding="utf-8"):
            print(f"nothing to write: no difference is a plain fact ({args.write} unchanged)", file=sys.stderr)
        else:
            write_atomic(args.write, lambda handle: handle.write(text.encode("utf-8")))
            print(f"wrote {args.write}: the registry with the plain facts applied", file=sys.stderr)
    if not found.complete:  # never "matches" on what was not read: the answer is unknown
        raise InfrastructureError(
            f"could not check {len(found.unread)} source(s) ({', '.join(found.unread)}); "
            f"{len(found.differences)} difference(s) in what was read"
        )
    return 0
