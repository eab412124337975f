"""Thin CLI: parse arguments, hand over to one verb module, map errors to exit codes."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence

from harness import __version__, commands
from harness.errors import EXIT_INTERRUPTED, EXIT_OK, HarnessError

# The order verbs are listed in `harness --help`; any other module in harness/commands follows.
VERB_ORDER = (
    "run", "merge", "import", "report", "backends", "build", "wheelhouse",
    "plan", "collect", "diff", "api-diff", "gate", "badge", "publish", "history", "comment", "prune",
)  # fmt: skip


def _verb(module_name: str) -> str:
    """A module's verb is its name; `import_` (a keyword as a name) is `import`; `api_diff` is `api-diff`."""
    return module_name.rstrip("_").replace("_", "-")


def _verbs() -> list[tuple[str, str]]:
    """(verb, module name) in help order."""
    found = {_verb(m.name): m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")}
    order = [v for v in VERB_ORDER if v in found] + sorted(v for v in found if v not in VERB_ORDER)
    return [(v, found[v]) for v in order]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The CLI. With `only`, just that verb's module is imported (the others are listed by name):
    a merge in CI then starts without importing the Docker SDK, the image builder or the page."""
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Run the shared PyTorch feature suites per backend and publish the backend x feature matrix.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="verb", metavar="COMMAND")
    for verb, module_name in _verbs():
        if only is not None and verb != only:
            sub.add_parser(verb)
            continue
        module = importlib.import_module(f"harness.commands.{module_name}")
        verb_parser = sub.add_parser(verb, help=module.HELP, description=module.HELP)
        module.add_arguments(verb_parser)
        verb_parser.set_defaults(handler=module.run)
    return parser


def _chosen_verb(raw: list[str]) -> str | None:
    """The verb a command line names (None: help or no verb)."""
    words = [a for a in raw if a != "--debug"]
    known = {verb for verb, _ in _verbs()}
    return words[0] if words and words[0] in known else None


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    if not raw or (raw[0].startswith("-") and raw[0] not in ("-h", "--help", "--version", "--debug")):
        raw = ["run", *raw]  # `harness` alone is the main job
    if raw == ["--debug"]:
        raw = ["--debug", "run"]
    parser = build_parser(_chosen_verb(raw))
    args = parser.parse_args(raw)
    if getattr(args, "handler", None) is None:
        args = parser.parse_args([*raw, "run"])
    try:
        return int(args.handler(args))
    except HarnessError as err:
        if args.debug or os.environ.get("HARNESS_DEBUG"):
            raise
        print(f"harness: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("harness: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
