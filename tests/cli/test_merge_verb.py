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


def test_a_composite_column_and_the_features_file_are_told(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A later partial run of cpu-2.13.0 (a sample run restated) makes it a composite; `--features` is the
    file whose releases and device families decide the rows a build cannot have."""
    import json
    import shutil

    later = tmp_path / "later"
    shutil.copytree(CELLS.parent / "cells-sample" / "publishing-new", later)
    manifest = json.loads((later / "manifest.json").read_text())
    manifest.update(
        cell_id="cpu-2.13.0", run_id="r-partial", started_at="2026-12-02T00:00:00Z", selection={"tests": ["x"]}
    )
    (later / "manifest.json").write_text(json.dumps(manifest))
    features = tmp_path / "features.toml"
    features.write_text('[features.amp]\ntitle = "AMP"\nsince = "2.14"\n')
    args = ["merge", str(CELLS / "cpu-2.13.0"), str(later), "-o", str(tmp_path / "m.json"), "--features", str(features)]
    assert main(args) == 0
    err = capsys.readouterr().err
    (line,) = [text for text in err.splitlines() if text.startswith("cpu-2.13.0")]
    assert line.endswith("(composite of 2 runs: later partial runs laid over run 20261201T200409Z-3c9c60)")
    from harness.matrix_json import load_matrix

    matrix = load_matrix(tmp_path / "m.json")
    assert matrix.cell("amp", "cpu-2.13.0").reason == "arrived in 2.14", "the file given states amp's release"
    features.write_text('[features.amp]\ntitle = "AMP"\ndevices = ["tpu"]\n')
    assert main(args) == 2
    assert "unknown device famil(ies) ['tpu']" in capsys.readouterr().err
