"""Shared by verbs that print a document: to a file with -o, else to stdout."""

from __future__ import annotations

import sys
from pathlib import Path


def emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    print(f"wrote {output}", file=sys.stderr)
