"""Shared by verbs that print a document: to a file with -o, else to stdout."""

from __future__ import annotations

import sys
from pathlib import Path

from harness import outputs


def emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    outputs.sweep(output.parent)  # temp files of a killed earlier run
    outputs.write_file(output, text)  # whole or not at all: a killed run leaves the old file
    print(f"wrote {output}", file=sys.stderr)
