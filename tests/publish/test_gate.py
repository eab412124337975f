from __future__ import annotations

import copy
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import UsageError
from harness.matrix_json import load_matrix, validate_matrix, write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix
from harness.publish.gate import evaluate_gate
from tests.publishing_cells import REGRESSED, real_cells


def _with_second_backend(matrix: Matrix | dict) -> dict:
    """Derive a cu130 column from the real cpu column (same results), to gate per backend."""
    out = matrix.to_json() if isinstance(matrix, Matrix) else copy.deepcopy(matrix)
    column = copy.deepcopy(next(c for c in out["columns"] if c["id"] == "cpu"))
    column.update(id="cu130", backend="cu130", display_name="CUDA 13.0")
    out["columns"].append(column)
    for cells in out["cells"].values():
        if "cpu" in cells:
            cells["cu130"] = copy.deepcopy(cells["cpu"])
    for test in out["tests"]:
        if "cpu" in test["results"]:
            test["results"]["cu130"] = copy.deepcopy(test["results"]["cpu"])
    validate_matrix(out)
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    cells = real_cells()
    out = tmp_path_factory.mktemp("gate")
    base = merge_cell_dirs([cells.base]).to_json()
    new = merge_cell_dirs([cells.new, cells.nodata]).to_json()
    new_two = _with_second_backend(merge_cell_dirs([cells.new]))
    # The baseline's cu130 column is the baseline cpu results: only cpu regressed since.
    base_two = _with_second_backend(base)
    for test in new_two["tests"]:
        if "cpu" in test["results"] and test["id"] in {t["id"] for t in base_two["tests"]}:
            base_result = next(t for t in base_two["tests"] if t["id"] == test["id"])["results"].get("cu130")
            if base_result:
                test["results"]["cu130"] = copy.deepcopy(base_result)
    paths = {"base": base, "new": new, "base_two": base_two, "new_two": new_two}
    for name, matrix in paths.items():
        write_matrix(Matrix.from_json(matrix), out / f"{name}.json")
    return {name: out / f"{name}.json" for name in paths}


def test_new_regressions_fail_only_when_there_is_a_new_failure(files, capsys) -> None:
    assert main(["gate", str(files["new"]), "--baseline", str(files["base"]), "--new-regressions"]) == 1
    captured = capsys.readouterr()
    assert f"cpu: new regression {REGRESSED} (passed -> failed)" in captured.out
    assert "gate failed" in captured.err
    # The baseline itself has failing tests (known_bad, markup), but none is new: the gate passes.
    assert main(["gate", str(files["base"]), "--baseline", str(files["base"]), "--new-regressions"]) == 0
    assert "gate: PASS on cpu" in capsys.readouterr().out


def test_any_failure_fails_on_existing_failures(files, capsys) -> None:
    assert main(["gate", str(files["base"]), "--any-failure"]) == 1
    out = capsys.readouterr().out
    assert "cpu: 3 failing test(s)" in out and "test_known_bad (failed)" in out
    assert main(["gate", str(files["base"])]) == 1, "--any-failure is the default condition"


def test_gate_per_backend(files, capsys) -> None:
    args = ["gate", str(files["new_two"]), "--baseline", str(files["base_two"]), "--new-regressions"]
    assert main([*args, "--backend", "cu130"]) == 0
    assert "gate: PASS on cu130" in capsys.readouterr().out
    assert main([*args, "--backend", "cpu"]) == 1
    out = capsys.readouterr().out
    assert REGRESSED in out and "cu130" not in out


def test_no_data_condition(files, capsys) -> None:
    assert main(["gate", str(files["new"]), "--no-data", "--backend", "rocm"]) == 1
    assert "rocm: NO DATA" in capsys.readouterr().out
    assert main(["gate", str(files["new"]), "--no-data", "--backend", "cpu"]) == 0
    capsys.readouterr()
    assert main(["gate", str(files["base"]), "--no-data", "--backend", "xpu"]) == 1
    assert "xpu: no column" in capsys.readouterr().out


def test_bad_input_and_usage(files, tmp_path: Path, capsys) -> None:
    assert main(["gate", str(tmp_path / "missing.json")]) == 4
    assert "no such matrix file" in capsys.readouterr().err
    assert main(["gate", str(files["new"]), "--new-regressions"]) == 2
    assert "--baseline" in capsys.readouterr().err
    with pytest.raises(UsageError):
        evaluate_gate(load_matrix(files["new"]))
