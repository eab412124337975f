"""Text from results, made safe for GitHub-flavoured Markdown (table cells, list items).

Everything that comes from input (test ids, feature ids and titles, messages, properties,
runner names) goes through `text()` or `code()`: a `|` cannot end a table cell, a backtick
run cannot open or close a code span, `<script>` is shown, not run; the characters are kept
and shown as they are, not replaced by look-alikes.
"""

from __future__ import annotations

import re
from typing import Any, Final

# ASCII punctuation that Markdown may read as markup; a backslash makes each one literal.
_MARKUP: Final = re.compile(r"([\\`*_{}\[\]|~])")
_BACKTICKS: Final = re.compile(r"`+")


def one_line(value: Any) -> str:
    return str(value if value is not None else "").replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def text(value: Any) -> str:
    """Plain text in a table cell or list item: markup characters escaped, `<` and `&` as entities."""
    escaped = _MARKUP.sub(r"\\\1", one_line(value))
    return escaped.replace("&", "&amp;").replace("<", "&lt;")


def code(value: Any, *, table: bool = True) -> str:
    """A code span holding the value verbatim (a fence longer than any backtick run inside it).

    In a table a `|` still ends the cell even inside a code span, so there it is written `\\|`,
    which GitHub shows as `|`; outside a table (`table=False`) a code span takes no escapes."""
    body = one_line(value)
    if table:
        body = body.replace("|", "\\|")
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def link(label: str, url: Any) -> str:
    """[label](url) for http(s) URLs only; anything else is shown as text."""
    target = one_line(url).strip()
    if re.match(r"^https?://[^\s()<>]+$", target):
        return f"[{label}]({target})"
    return f"{label} {text(target)}"


def first_line(value: str | None, limit: int) -> str:
    line = (value or "").strip().splitlines()[0] if (value or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
