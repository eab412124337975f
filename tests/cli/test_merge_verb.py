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
    assert main(args) == 4  # a features file that cannot be read: an input, as a feature map is
    assert "unknown device famil(ies) ['tpu']" in capsys.readouterr().err


def test_no_readable_cell_is_exit_4_and_the_matrix_stays(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 42: `harness merge reslts -o results/matrix.json` wrote an empty matrix over a good one."""
    out = tmp_path / "results" / "matrix.json"
    assert main(["merge", str(CELLS / "cpu-2.13.0"), "-o", str(out)]) == 0
    before = out.read_bytes()
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "reslts"), "-o", str(out)]) == 4
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("harness: error:")]
    assert errors == [
        f"harness: error: no cell could be read from {tmp_path / 'reslts'}: {tmp_path / 'reslts'}: not a directory "
        f"(pass cell dirs written by `harness run`); {out} left as it was"
    ]
    assert out.read_bytes() == before and "wrote" not in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["merge", str(empty), "-o", str(out)]) == 4 and out.read_bytes() == before


def test_the_default_output_is_results_never_a_tracked_file(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["merge", str(CELLS / "cpu-2.13.0")]) == 0
    assert (tmp_path / "results" / "matrix.json").is_file() and not (tmp_path / "matrix.json").exists()
    assert "wrote results/matrix.json" in capsys.readouterr().err


def test_a_note_about_many_runs_is_printed_once(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 42: three superseded runs printed the same "superseded" note three times."""
    import json
    import shutil

    for n in range(3):
        older = tmp_path / f"older{n}"
        shutil.copytree(CELLS / "cpu-2.13.0", older)
        manifest = json.loads((older / "manifest.json").read_text())
        manifest.update(run_id=f"r{n}", started_at=f"2026-11-0{n + 1}T00:00:00Z")
        (older / "manifest.json").write_text(json.dumps(manifest))
    assert main(["merge", str(CELLS / "cpu-2.13.0"), *(str(tmp_path / f"older{n}") for n in range(3)),
                 "-o", str(tmp_path / "m.json")]) == 0  # fmt: skip
    notes = [line for line in capsys.readouterr().err.splitlines() if "superseded" in line]
    assert notes == ["harness: note: cpu-2.13.0: superseded by run 20261201T200409Z-3c9c60 (3 runs)"]
