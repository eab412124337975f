"""Thin CLI: parse arguments, hand over to one verb module, map errors to exit codes."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from harness import __version__, commands
from harness.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, HarnessError, did_you_mean

# The order verbs are listed in `harness --help`; any other module in harness/commands follows.
VERB_ORDER = (  # the loop first (run, merge, report), then what feeds it, then what publishes and guards it
    "run", "merge", "import", "report", "doctor", "backends", "upstream", "build", "wheelhouse",
    "plan", "collect", "attest", "submit", "trust", "diff", "api-diff", "gate", "badge", "publish", "history",
    "comment", "prune", "cells",
)  # fmt: skip


def _verb(module_name: str) -> str:
    """A module's verb is its name; `import_` (a keyword as a name) is `import`; `api_diff` is `api-diff`."""
    return module_name.rstrip("_").replace("_", "-")


def verbs() -> list[tuple[str, str]]:
    """(verb, module name) in help order."""
    found = {_verb(m.name): m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")}
    order = [v for v in VERB_ORDER if v in found] + sorted(v for v in found if v not in VERB_ORDER)
    return [(v, found[v]) for v in order]


DEBUG = "--debug"
_INVALID_CHOICE = re.compile(r"^argument ([^:]+): invalid choice: '([^']*)'")
_UNRECOGNIZED = "unrecognized arguments: "


class OneLineParser(argparse.ArgumentParser):
    """Usage errors are one line, `harness run: error: ...`, with a near miss named and `--help` for the
    rest (argparse's default prints the whole usage block first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}{self._suggestion(message)}; see {self.prog} --help\n")

    def _suggestion(self, message: str) -> str:
        choice = _INVALID_CHOICE.match(message)
        if choice:  # argparse names the argument as "/".join(its flags), else its metavar or dest
            named, word = choice.groups()
            for action in self._actions:
                if action.choices and named in ("/".join(action.option_strings), action.metavar, action.dest):
                    return did_you_mean(word, [str(c) for c in action.choices])
            return ""
        if message.startswith(_UNRECOGNIZED):
            options = [flag for action in self._actions for flag in action.option_strings]
            for word in message[len(_UNRECOGNIZED) :].split():
                hint = did_you_mean(word.split("=", 1)[0], options) if word.startswith("-") else ""
                if hint:
                    return hint
        return ""


def _verb_parser(parser: argparse.ArgumentParser, raw: list[str]) -> argparse.ArgumentParser:
    """The parser of the verb a command line names (the top parser when it names none)."""
    for action in parser._actions:  # argparse has no public accessor for its subparsers
        if isinstance(action, argparse._SubParsersAction):
            verb = _chosen_verb(raw)
            if verb in action.choices:
                return action.choices[verb]
    return parser


def build_parser(only: str | None = None) -> OneLineParser:
    """The CLI. With `only`, just that verb's module is imported (the others are listed by name):
    a merge in CI then starts without importing the Docker SDK, the image builder or the page."""
    parser = OneLineParser(
        prog="harness",
        description="Run the shared PyTorch feature suites per backend and publish the backend x feature matrix.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(DEBUG, action="store_true", help="show tracebacks for errors (anywhere on the line)")
    sub = parser.add_subparsers(dest="verb", metavar="COMMAND")
    for verb, module_name in verbs():
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
    words = [a for a in raw if a != DEBUG]
    known = {verb for verb, _ in verbs()}
    return words[0] if words and words[0] in known else None


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    # --debug anywhere on the line (`harness gate m.json --debug`), as the docs say: taken out here,
    # so no verb's parser has to know it.
    debug = DEBUG in raw
    raw = [a for a in raw if a != DEBUG]
    if not raw or (raw[0].startswith("-") and raw[0] not in ("-h", "--help", "--version")):
        raw = ["run", *raw]  # `harness` alone is the main job
    parser = build_parser(_chosen_verb(raw))
    args, extra = parser.parse_known_args(raw)
    if getattr(args, "handler", None) is None:
        args, extra = parser.parse_known_args([*raw, "run"])
    if extra:  # named by the verb's own parser: `harness run: error: ... (did you mean --backend?)`
        _verb_parser(parser, [*raw, "run"] if _chosen_verb(raw) is None else raw).error(
            f"unrecognized arguments: {' '.join(extra)}"
        )
    try:
        return int(args.handler(args))
    except HarnessError as err:
        if debug or os.environ.get("HARNESS_DEBUG"):
            traceback.print_exc()  # the traceback for the developer; the exit code stays the documented one
        print(f"harness: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("harness: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
