"""What `harness run` is told, checked before anything is written.

A run puts its cell dir in place before its tests start, and the merge takes the newest run of a
cell id: a value that cannot work must stop the run before the cell exists, or a typo leaves a
cell that hides the good run under it (docs/reliability.md, "A user's mistake"). Each check is one
rule and one line (a UsageError, exit 2): the workers, the time limits, the cell id, the pytest
arguments (the -k and -m expressions in pytest's grammar), the tests `--test` names (their file,
and the function or class in it, read from the source without importing it), and the channel
against the installed torch.
"""

from __future__ import annotations

import ast
import difflib
import math
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path

from harness.cell import Selection, argument_cell_id
from harness.errors import UsageError
from harness.registry import load_registry
from harness.run.match_expression import ExpressionError, check_expression


def check_workers(text: str) -> str:
    """`auto`, or a whole number of at least 1 (as given)."""
    if text == "auto":
        return text
    try:
        count = int(text)
    except (TypeError, ValueError):
        raise UsageError(f"--workers must be a number or 'auto', not {text!r}") from None
    if count < 1:
        raise UsageError(f"--workers must be at least 1, not {count}")
    return text


def check_seconds(option: str, value: float) -> float:
    """A time limit: a positive, finite number of seconds."""
    if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise UsageError(f"{option} must be a positive number of seconds, not {value:g}")
    return float(value)


def check_cell_id(text: str | None) -> str | None:
    return None if text is None else argument_cell_id(text)


def split_pytest_args(text: str) -> tuple[str, ...]:
    """`--pytest-args`, one shell-quoted string, as pytest's arguments."""
    try:
        return tuple(shlex.split(text))
    except ValueError as err:  # shlex: "No closing quotation", "No escaped character"
        raise UsageError(f"--pytest-args {text!r}: {str(err).lower()}", hint="quote it as a shell would") from None


def check_expressions(pytest_args: Sequence[str]) -> None:
    """The -k and -m expressions parse as pytest's (under xdist a bad one is an INTERNALERROR)."""
    selection = Selection.of((), pytest_args)
    for option, text in (("-k", selection.keyword), ("-m", selection.markexpr)) if selection else ():
        try:
            check_expression(text or "")
        except ExpressionError as err:
            raise UsageError(f"{option} {text!r}: not a pytest expression: {err}") from None


def check_tests(suites_dir: Path, tests: Sequence[str]) -> None:
    """Each `--test` id names a file of the suites and, when it names one, a function or class
    defined in it (did you mean ...?). A parameter in brackets is left to pytest: a run that
    selects no test then ends as `not-started` (harness/run/execute.py)."""
    for nodeid in tests:
        _check_test(suites_dir, nodeid)


def _check_test(suites_dir: Path, nodeid: str) -> None:
    path, *names = nodeid.lstrip("/").split("::")
    file = suites_dir / path
    if not path or ".." in Path(path).parts or not file.exists():
        known = [p.relative_to(suites_dir).as_posix() for p in suites_dir.rglob("test_*.py")]
        raise UsageError(f"--test {nodeid}: no such file in the suites ({suites_dir}){_closest(path, known)}")
    if not names or not file.is_file():
        return
    module = _parse(file)
    if module is None:
        return  # pytest says what is wrong with the file
    top = _strip(names[0])
    defined = _names(module.body)
    if top not in defined:
        tests = [n for n in defined if n.startswith(("test", "Test"))]
        raise UsageError(f"--test {nodeid}: {path} has no test {top}{_closest(top, tests, f'{path}::')}")
    cls = next((n for n in module.body if isinstance(n, ast.ClassDef) and n.name == top), None)
    if cls is None or len(names) < 2 or cls.bases:
        return  # a method of a base class is collected too: pytest decides
    method = _strip(names[1])
    methods = _names(cls.body)
    if method not in methods:
        tests = [n for n in methods if n.startswith("test")]
        raise UsageError(f"--test {nodeid}: {top} has no test {method}{_closest(method, tests, f'{path}::{top}::')}")


def _strip(name: str) -> str:
    return name.split("[", 1)[0]


def _parse(file: Path) -> ast.Module | None:
    try:
        return ast.parse(file.read_bytes(), filename=str(file))
    except (OSError, SyntaxError, ValueError):
        return None


def _names(body: Iterable[ast.stmt]) -> set[str]:
    """The names a module or class body binds: defs, classes, assignments and imports (pytest
    collects an imported test function too)."""
    found: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
    return found


def _closest(word: str, candidates: Sequence[str], prefix: str = "") -> str:
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {prefix}{close[0]}?)" if close else ""


def check_channel(asked: str | None, torch_version: str | None) -> None:
    """The channel asked for must be one the installed torch can come from: a .devYYYYMMDD is a
    nightly and nothing else is; a release candidate never comes from the release channel."""
    if not asked or not torch_version:
        return
    implied = load_registry().channel_of(torch_version)
    if (asked == "nightly") != (implied == "nightly") or (asked == "release" and implied == "test"):
        raise UsageError(
            f"--channel {asked}: the installed torch {torch_version} comes from the {implied} channel",
            hint=f"drop --channel (the column records {implied}), or install torch from the {asked} channel",
        )
