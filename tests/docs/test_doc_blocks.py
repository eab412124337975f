"""Docs tested, not trusted: every command block of README.md and docs/*.md runs here (through Sybil,
tests/docs/transcript.py says how a block states its output and exit code), against the committed
cells; a block that cannot run offline says why in the doc source and is skipped with that reason."""

from __future__ import annotations

import re

import pytest
from sybil import Example

from tests.docs.transcript import (
    DOCUMENTS,
    REPO,
    blocks,
    output_matches,
    parse_console,
)

BLOCKS = [block for document in DOCUMENTS for block in blocks(document)]
FENCE = re.compile(r"^ *```(\S*)", re.MULTILINE)
# what a block's first line starts with when it is a command someone would type
COMMAND_START = re.compile(r"^\s*(\$ |harness(?=\s|$)|python|pip|tools/|docker\b|act\b|tox\b|bash\b|git\b|sudo\b)")
KINDS = ("console", "bash", "text", "json", "toml", "yaml")


@pytest.mark.slow  # starts the commands the docs show
@pytest.mark.parametrize("examples", [examples for _, examples in BLOCKS], ids=[name for name, _ in BLOCKS])
def test_the_docs_command_block_does_what_the_doc_says(examples: list[Example]) -> None:
    for example in examples:  # its own `skip: next` (if any), then the block
        example.evaluate()


def test_every_fenced_block_says_what_it_is_and_commands_are_run() -> None:
    """An untagged block would escape the runner: each is console/bash (run), or text/json/toml/yaml
    (output and files); a block of commands is never tagged as text."""
    for document in DOCUMENTS:
        text = (REPO / document).read_text(encoding="utf-8")
        fences = FENCE.findall(text)
        openings = fences[0::2]
        assert len(fences) % 2 == 0, document
        untagged = [kind for kind in openings if kind not in KINDS]
        assert not untagged, f"{document}: tag each block as one of {KINDS}, found {untagged}"
        for match in re.finditer(r"^ *```(text|json|toml|yaml)\n(.*?)^ *```", text, re.MULTILINE | re.DOTALL):
            first = match.group(2).splitlines()[0] if match.group(2) else ""
            synopsis = " [" in first  # `harness run [-h] [--backend BACKEND] ...`: a usage line, not a command
            assert synopsis or not COMMAND_START.match(first), (
                f"{document}: a block of commands tagged {match.group(1)}: {first}"
            )


def test_the_docs_have_runnable_blocks() -> None:
    """The runner finds the blocks (an empty list would pass everything)."""
    names = [name for name, _ in BLOCKS]
    assert any(name.startswith("README.md:") for name in names) and len(names) >= 10, names


def test_a_console_block_states_commands_exit_codes_and_output() -> None:
    commands = parse_console(
        "$ harness gate m.json --any-failure   # exit 1: it found failures\nFAIL …\n$ ls \\\n  -l\n"
    )
    assert [(c.line, c.exit_code, c.expected) for c in commands] == [
        ("harness gate m.json --any-failure", 1, ("FAIL …",)),
        ("ls -l", 0, ()),
    ]
    with pytest.raises(ValueError, match="starts with output"):
        parse_console("output first\n$ ls\n")


@pytest.mark.parametrize(
    ("expected", "output", "matches"),
    [
        (("a", "b"), "a\nb\n", True),
        (("a", "b"), "a\nc\n", False),  # exact on what the doc claims
        (("a", "b"), "a\nb\nc\n", False),  # a line the doc does not show, with no `…` for it
        (("a", "…"), "a\nb\nc\n", True),  # `…` alone: any number of lines
        (("…", "c"), "a\nb\nc\n", True),
        (("…", "c"), "a\nb\n", False),
        (("wrote m.json in … s",), "wrote m.json in 0.3 s\n", True),  # `…` in a line: what varies there
        (("wrote m.json in … s",), "wrote x.json in 0.3 s\n", False),
        (("tag …:...",), "tag torch-compat/cpu:abc\n", True),  # `...` too (the docs use both)
        (("a  ",), "a\n\n\n", True),  # trailing blanks and blank lines at the end are not claims
    ],
)
def test_output_matching_is_exact_but_for_the_ellipses(expected: tuple[str, ...], output: str, matches: bool) -> None:
    assert output_matches(expected, output) is matches


INTERNAL_NOTES = re.compile(r"\(issue \d+\)|\bthe lead\b|/tmp/research")


def test_user_docs_hold_no_internal_notes() -> None:
    """Notes for the people who wrote them (issue numbers, who rewrites what, a file on one machine)
    mean nothing to a reader."""
    for document in (*DOCUMENTS, "suites/README.md"):
        text = (REPO / document).read_text(encoding="utf-8")
        assert not INTERNAL_NOTES.findall(text), (document, INTERNAL_NOTES.findall(text))
