"""`harness merge` in-process on the committed real cells: what it tells the user on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main

CELLS = Path(__file__).resolve().parents[1] / "data" / "cells"


def test_each_column_line_names_its_measurements_apart(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # linalg's three figures and compile's one are measurement tests: counted apart, never as passes.
    assert main(["merge", str(CELLS / "cpu-2.13.0"), "-o", str(tmp_path / "m.json")]) == 0
    err = capsys.readouterr().err
    (line,) = [text for text in err.splitlines() if text.startswith("cpu-2.13.0")]
    assert line.split()[1] == "cpu"
    judged, measured = line.split(None, 2)[2].split(", ")
    assert measured == "4 measured"
    assert int(judged.removesuffix(" tests")) > 200
    assert "wrote" in err and "1 columns" in err
