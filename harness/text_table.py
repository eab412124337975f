"""Rows of text as aligned columns, for the terminal: `harness plan`, `doctor`, `backends`, `cells`."""

from __future__ import annotations

from collections.abc import Sequence


def aligned(rows: Sequence[Sequence[str]], indent: str = "") -> list[str]:
    """Each row as one line, every column padded to its widest cell, two spaces apart, no trailing
    blanks. Rows may differ in length: a column's width counts only the rows that have it."""
    widths: list[int] = []
    for row in rows:
        for i, cell in enumerate(row):
            if i == len(widths):
                widths.append(0)
            widths[i] = max(widths[i], len(cell))
    return [indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)).rstrip() for row in rows]
