"""Text from input made safe for GitHub Markdown (harness/publish/render/mdtext.py): markup
characters escaped and kept (never replaced by look-alikes), `<` and `&` as entities, one line
always; code spans fenced longer than any backtick run inside; links only for http(s)."""

from __future__ import annotations

import pytest

from harness.publish.render.mdtext import code, first_line, link, one_line, text


@pytest.mark.parametrize(
    ("value", "escaped"),
    [
        ("plain words", "plain words"),
        ("a|b", "a\\|b"),
        ("*bold* _it_ ~s~", "\\*bold\\* \\_it\\_ \\~s\\~"),
        ("[x](http://y)", "\\[x\\](http://y)"),
        ("`tick`", "\\`tick\\`"),
        ("back\\slash {}", "back\\\\slash \\{\\}"),
        ("<script>&amp;", "&lt;script>&amp;amp;"),
        ("two\nlines\r\nand\rmore", "two lines and more"),
        (None, ""),
        (12.5, "12.5"),
        ("ünïcödé ✓ 日本語", "ünïcödé ✓ 日本語"),
    ],
)
def test_text(value: object, escaped: str) -> None:
    assert text(value) == escaped


@pytest.mark.parametrize(
    ("value", "span"),
    [
        ("a::b", "`a::b`"),
        ("has `one` tick", "``has `one` tick``"),
        ("two `` ticks", "```two `` ticks```"),
        ("`starts", "`` `starts ``"),
        ("ends`", "`` ends` ``"),
        ("", "`  `"),  # spaces only: shown as they are, never an empty span
        ("a|b", "`a\\|b`"),
        ("line\nbreak", "`line break`"),
    ],
)
def test_code_in_a_table(value: str, span: str) -> None:
    assert code(value) == span


def test_code_outside_a_table_takes_no_escapes() -> None:
    assert code("a|b <i>", table=False) == "`a|b <i>`"


@pytest.mark.parametrize(
    ("url", "out"),
    [
        ("https://github.com/o/r/actions/runs/1", "[run](https://github.com/o/r/actions/runs/1)"),
        ("http://ci.example/x?y=1", "[run](http://ci.example/x?y=1)"),
        ("javascript:alert(1)", "run javascript:alert(1)"),
        ("https://x.example/a b", "run https://x.example/a b"),
        ("https://x.example/)[evil](y", "run https://x.example/)\\[evil\\](y"),
        (None, "run "),
    ],
)
def test_links_only_for_http(url: object, out: str) -> None:
    assert link("run", url) == out


def test_first_line_and_one_line() -> None:
    assert first_line("  first\nsecond", 80) == "first"
    assert first_line("abcdef", 4) == "abc…"
    assert first_line("abcd", 4) == "abcd"
    assert first_line(None, 10) == first_line("   ", 10) == ""
    assert one_line("a\r\nb\nc") == "a b c"
