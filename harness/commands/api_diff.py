"""`harness api-diff OLD NEW`: the public API a torch release adds and removes, read from its wheels.

OLD and NEW are wheel files or versions (fetched once into a cache with `pip download --no-deps`).
Nothing is installed or imported: the wheels' Python sources are parsed (harness/images/wheel_api.py). The
added names the suites exercise are marked tested; `--format json` writes the file `harness diff
--releases --api-diff` reads for the release view's "N new public APIs, M tested".
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness import jsonio
from harness.api_changes import check_namespaces, diff_apis
from harness.commands._output import emit
from harness.images.wheel_api import public_modules, read_wheel_api
from harness.images.wheel_cache import default_cache, wheel_for
from harness.run.suite_apis import exercised_apis

HELP = "list the public APIs a torch wheel adds and removes against another, per namespace, and which the suites test"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", help="the older wheel file, or a torch version to fetch (2.14.1)")
    parser.add_argument("new", help="the newer wheel file, or a torch version to fetch (2.15.0)")
    parser.add_argument(
        "--namespace",
        action="append",
        default=[],
        metavar="MODULE",
        help="only this namespace and the modules under it (repeatable; default: every public module)",
    )
    parser.add_argument(
        "--cache", type=Path, help="where fetched wheels are kept (default: $XDG_CACHE_HOME/torch-compat/wheels)"
    )
    parser.add_argument(
        "--suites", type=Path, default=Path("suites"), help="the suites whose APIs count as tested (default: ./suites)"
    )
    parser.add_argument("--format", choices=("md", "json"), default="md")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")


def run(args: argparse.Namespace) -> int:
    exercised = exercised_apis(args.suites)  # the suites first: a bad features file before any download
    cache = args.cache or default_cache()
    old_wheel, new_wheel = wheel_for(args.old, cache), wheel_for(args.new, cache)
    # a namespace typo is told from the wheels' file lists, before their sources are parsed
    check_namespaces(args.namespace, public_modules(old_wheel) | public_modules(new_wheel), "either wheel")
    diff = diff_apis(read_wheel_api(old_wheel), read_wheel_api(new_wheel), exercised, tuple(args.namespace))
    text = diff.to_markdown() if args.format == "md" else jsonio.dumps_pretty(diff.to_json()).decode() + "\n"
    emit(text, args.output)
    return 0
