"""The docs' command blocks, run by Sybil (https://sybil.readthedocs.io): what a ```console block
claims (`$ command`, then the lines it prints) and what a ```bash block claims (it runs).

Conventions in the doc source (docs/README-level rules, kept here in one place):

- ```console: each `$ ` line is a command (a trailing `\\` continues it); the lines after it, up to the
  next `$ `, are what it prints (stdout and stderr together). A line `…` (or `...`) stands for any
  number of lines, and `…` inside a line for any text there (timings, hosts, hashes). A command
  ending in `# exit N` must exit N; any other, 0. A command shown without output is checked for its
  exit code only.
- ```bash: the block runs as one script (`set -e`) and must exit 0; its output is not checked.
- A block that cannot run offline has `<!-- skip: next "needs ..." -->` right before it: Sybil's own
  skip directive, shown by pytest as the reason.
- ```text (or json, toml, yaml) is output or a file, never run.
- Output the doc renders (a Markdown table the README shows as a table) has
  `<!-- output-of: COMMAND -->` right before it: the lines up to the next blank line must appear in
  COMMAND's output, in order and together (lines before and after them are cut).

Every block runs in a fresh temporary folder that holds the repository's top-level entries as links
(so `tests/data/cells` and `tools/...` resolve and what a command writes stays there), with `harness`
on PATH meaning this checkout's `python -m harness`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sybil import Document, Example, Region, Sybil
from sybil.parsers.markdown import CodeBlockParser, SkipParser

REPO: Final = Path(__file__).resolve().parents[2]
DOCUMENTS: Final = ("README.md", *sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")))
ELLIPSES: Final = ("…", "...")
_EXIT: Final = re.compile(r"\s+#\s*exit\s+(\d+)\b[^\n]*$")
TIMEOUT_S: Final = 300


@dataclass(frozen=True)
class Command:
    line: str  # as the shell gets it
    exit_code: int
    expected: tuple[str, ...]  # the lines the doc shows after it


def parse_console(source: str) -> list[Command]:
    """A ```console block's commands, each with the exit code and the output lines the doc claims."""
    commands: list[Command] = []
    pending: list[str] = []
    line = ""
    exit_code = 0
    lines = source.splitlines()
    index = 0
    while index < len(lines):
        text = lines[index]
        if text.startswith("$ "):
            if line:
                commands.append(Command(line, exit_code, tuple(pending)))
            command = text[2:]
            while command.endswith("\\") and index + 1 < len(lines):
                index += 1
                command = command[:-1].rstrip() + " " + lines[index].strip()
            found = _EXIT.search(command)
            exit_code = int(found.group(1)) if found else 0
            line, pending = (command[: found.start()] if found else command).strip(), []
        elif line:
            pending.append(text)
        else:
            raise ValueError(f"a console block starts with output, not a `$ ` command: {text!r}")
        index += 1
    if line:
        commands.append(Command(line, exit_code, tuple(pending)))
    return commands


def _line_pattern(expected: str) -> str:
    parts = re.split("|".join(map(re.escape, ELLIPSES)), expected.rstrip())
    return ".*".join(map(re.escape, parts))


def output_matches(expected: tuple[str, ...], output: str) -> bool:
    """Whether `output` is what the doc shows: exact line by line, but `…` stands for what varies."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line.strip() in ELLIPSES else _line_pattern(line) + r"[ \t]*\n" for line in expected
    )
    lines = [line.rstrip() for line in output.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return re.fullmatch(pattern, "".join(f"{line}\n" for line in lines)) is not None


def first_unprinted(expected: tuple[str, ...], output: str) -> str | None:
    """The first line the doc shows that the output holds nowhere (where to look when updating a doc)."""
    printed = [line.rstrip() for line in output.splitlines()]
    for line in expected:
        if line.strip() not in ELLIPSES and not any(re.fullmatch(_line_pattern(line), out) for out in printed):
            return line
    return None


def _workdir(work: Path) -> Path:
    """`work` with the repository's top-level entries linked in, and `harness` on its PATH."""
    for entry in REPO.iterdir():
        if entry.name not in (".git", "results", "site"):
            (work / entry.name).symlink_to(entry)
    shim = work / ".bin"
    shim.mkdir()
    (shim / "harness").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m harness "$@"\n')
    (shim / "harness").chmod(0o755)
    return work


def _environment(work: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HARNESS_", "PYTEST_"))}
    env.update(
        PATH=f"{work / '.bin'}{os.pathsep}{os.path.dirname(sys.executable)}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(REPO),
        COLUMNS="200",
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",  # stdout and stderr interleave as on a terminal
        TERM="dumb",
    )
    return env


def _run(script: str, work: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", script],
        cwd=work,
        env=_environment(work),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def _where(example: Example) -> str:
    return f"{Path(example.path).relative_to(REPO)}:{example.line}"


def evaluate_console(example: Example) -> str | None:
    with tempfile.TemporaryDirectory(prefix="doc-block-") as tmp:
        return _check_commands(example, _workdir(Path(tmp)))


def _check_commands(example: Example, work: Path, block: str | None = None) -> str | None:
    for command in parse_console(example.parsed if block is None else block):
        done = _run(command.line, work)
        problems = []
        if done.returncode != command.exit_code:
            problems.append(f"exit {done.returncode}, the doc says {command.exit_code}")
        if command.expected and not output_matches(command.expected, done.stdout):
            missing = first_unprinted(command.expected, done.stdout)
            problems.append(f"it never printed the doc's line {missing!r}" if missing else "its lines differ in order")
        if problems:
            shown = "\n".join(command.expected)
            return (
                f"{_where(example)}: `$ {command.line}`: {'; '.join(problems)}\n"
                f"--- the doc shows ('…' stands for what varies):\n{shown}\n--- it printed:\n{done.stdout}"
            )
    return None


def evaluate_bash(example: Example) -> str | None:
    with tempfile.TemporaryDirectory(prefix="doc-block-") as tmp:
        done = _run("set -e\n" + example.parsed, _workdir(Path(tmp)))
    if done.returncode != 0:
        return f"{_where(example)}: the block exited {done.returncode}:\n{done.stdout}"
    return None


_OUTPUT_OF: Final = re.compile(r"^<!-- output-of: (?P<command>.+?) -->\n(?P<lines>(?:[^\n]+\n)+)", re.MULTILINE)


def evaluate_output_of(example: Example) -> str | None:
    command, lines = example.parsed
    block = f"$ {command}\n…\n{lines}…\n"
    with tempfile.TemporaryDirectory(prefix="doc-block-") as tmp:
        return _check_commands(example, _workdir(Path(tmp)), block)


def parse_output_of(document: Document) -> list[Region]:
    """Sybil parser of `<!-- output-of: COMMAND -->` and the rendered lines that follow it."""
    return [
        Region(found.start(), found.end(), (found["command"], found["lines"]), evaluate_output_of)
        for found in _OUTPUT_OF.finditer(document.text)
    ]


DOCS: Final = Sybil(
    parsers=[
        CodeBlockParser(language="console", evaluator=evaluate_console),
        CodeBlockParser(language="bash", evaluator=evaluate_bash),
        parse_output_of,
        SkipParser(),
    ],
    path=str(REPO),
)


def blocks(document: str) -> list[tuple[str, list[Example]]]:
    """Each runnable block of a document as (id, [the directives before it..., the block]): one test
    evaluates a block together with its own `skip: next`, so each is a test of its own."""
    grouped: list[tuple[str, list[Example]]] = []
    pending: list[Example] = []
    for example in DOCS.parse(REPO / document):
        pending.append(example)
        if example.region.evaluator in (evaluate_console, evaluate_bash, evaluate_output_of):
            grouped.append((f"{document}:{example.line}", pending))
            pending = []
    return grouped
