"""harness/text_table.py: aligned columns, no trailing blanks, short rows allowed."""

from __future__ import annotations

from harness.text_table import aligned


def test_columns_are_padded_to_their_widest_cell_and_lines_end_without_blanks() -> None:
    rows = [("CELL", "STATE", "USE"), ("cpu-2.13.0", "ok", ""), ("rocm", "NO DATA", "superseded")]
    assert aligned(rows) == [
        "CELL        STATE    USE",
        "cpu-2.13.0  ok",
        "rocm        NO DATA  superseded",
    ]


def test_an_indent_and_rows_of_different_lengths() -> None:
    assert aligned([("a", "bb"), ("ccc",)], indent="  ") == ["  a    bb", "  ccc"]
    assert aligned([]) == []
