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
    assert capsys.readouterr().out == "gate: PASS on cu130 (no new regression)\n"
    assert main([*args, "--backend", "cpu"]) == 1
    captured = capsys.readouterr()
    assert REGRESSED in captured.out and "cu130" not in captured.out + captured.err
    assert captured.err == "harness: error: gate failed on cpu (1 reason(s))\n"


def test_a_failure_names_the_failing_columns_and_a_pass_the_judged_ones(files, capsys) -> None:
    """Two columns judged, one fails: the closing line names that one, never both."""
    args = ["gate", str(files["new_two"]), "--baseline", str(files["base_two"]), "--new-regressions"]
    assert main(args) == 1
    captured = capsys.readouterr()
    fails = [line for line in captured.out.splitlines() if line.startswith("gate: FAIL")]
    assert fails == [f"gate: FAIL cpu: new regression {REGRESSED} (passed -> failed)"]
    assert captured.err == "harness: error: gate failed on cpu (1 reason(s))\n"
    assert main(["gate", str(files["base_two"]), "--baseline", str(files["base_two"]), "--new-regressions"]) == 0
    assert capsys.readouterr().out == "gate: PASS on cpu, cu130 (no new regression)\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--backend", "nosuch"], "--backend nosuch: no backend, family or column of that name (columns here: cpu,"),
        (["--backend", "xpu"], "--backend xpu selects no column: no column in this matrix (the cell did not report;"),
        (["--backend", "cu13O", "--new-regressions"], "--backend cu13O: no backend, family or column of that name"),
    ],
)
def test_unknown_or_empty_selections_are_errors_never_a_pass(files, capsys, argv, message) -> None:
    """A typo in a workflow's --backend must not pass silently: exit 2 and one line."""
    assert main(["gate", str(files["new"]), "--baseline", str(files["base"]), *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "PASS" not in captured.err
    assert captured.err.startswith(f"harness: error: {message}") and captured.err.count("\n") == 1, captured.err


def test_a_matrix_without_columns_to_judge_is_an_error(files, tmp_path: Path, capsys) -> None:
    data = load_matrix(files["new"]).to_json()
    data.update(columns=[], tests=[], cells={fid: {} for fid in data["cells"]})
    write_matrix(Matrix.from_json(data), tmp_path / "empty.json")
    assert main(["gate", str(tmp_path / "empty.json")]) == 2
    assert "this matrix has no column to judge" in capsys.readouterr().err


def test_no_data_in_the_baseline_is_never_a_regression(files, tmp_path: Path, capsys) -> None:
    """A column that was NO DATA had nothing to regress from: its failing tests now are not new regressions.
    A gate whose columns were all NO DATA compared nothing: exit 2, never a pass."""
    base = load_matrix(files["base_two"]).to_json()
    for column in base["columns"]:
        if column["id"] == "cu130":
            column.update(state="no-data", score=None, counts={})
    for test in base["tests"]:
        test["results"].pop("cu130", None)
    write_matrix(Matrix.from_json(base), tmp_path / "nodata-base.json")
    args = ["gate", str(files["new_two"]), "--baseline", str(tmp_path / "nodata-base.json"), "--new-regressions"]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "gate: not judged: cu130: NO DATA in the baseline, so nothing of them can be new" in captured.out
    assert [line for line in captured.out.splitlines() if "FAIL" in line] == [
        f"gate: FAIL cpu: new regression {REGRESSED} (passed -> failed)"
    ], "cu130's failing tests (known_bad, markup) are not new: it had no data before"
    assert main([*args, "--backend", "cu130"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error: --new-regressions compared nothing: no selected column has results both")
    assert "PASS" not in err and err.count("\n") == 1


def test_a_known_issue_is_never_a_regression(files, tmp_path: Path, capsys) -> None:
    """The same regressed test, marked a known issue (xfailed with a link, or skipped as known-issue): no gate."""
    for outcome, extra in (("xfailed", {}), ("skipped", {"skip_class": "known-issue"})):
        new = load_matrix(files["new"]).to_json()
        row = next(t for t in new["tests"] if t["id"] == REGRESSED)
        row["results"]["cpu"] = {"outcome": outcome, "link": "https://github.com/pytorch/pytorch/issues/1", **extra}
        write_matrix(Matrix.from_json(new), tmp_path / f"known-{outcome}.json")
        args = ["gate", str(tmp_path / f"known-{outcome}.json"), "--baseline", str(files["base"]), "--new-regressions"]
        assert main([*args, "--backend", "cpu"]) == 0, capsys.readouterr()
        assert capsys.readouterr().out.endswith("gate: PASS on cpu (no new regression)\n")


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


def test_by_build_compares_a_pull_requests_column_with_the_nightlys_of_the_same_build(files, tmp_path, capsys):
    """A pull request's `cpu` against a nightly of two torch versions (`cpu-2.13.0` with results, `cpu-2.14.1`
    NO DATA): by id nothing pairs (exit 2); by build the column of the same torch build does."""
    base = load_matrix(files["base"]).to_json()
    (cpu,) = base["columns"]
    later = copy.deepcopy(cpu) | {"id": "cpu-2.14.1", "state": "no-data", "score": None, "counts": {}}
    later["environment"] = {**cpu["environment"], "torch": None}
    cpu["id"] = "cpu-2.13.0"
    base["columns"].append(later)
    for cells in base["cells"].values():
        cells["cpu-2.13.0"] = cells.pop("cpu")
        cells["cpu-2.14.1"] = {"state": "no-data", "counts": {}}
    for test in base["tests"]:
        test["results"] = {"cpu-2.13.0": test["results"]["cpu"]} if "cpu" in test["results"] else {}
    write_matrix(Matrix.from_json(base), tmp_path / "nightly.json")
    args = ["gate", str(files["new"]), "--baseline", str(tmp_path / "nightly.json"), "--new-regressions"]
    assert main([*args, "--backend", "cpu"]) == 2
    assert "compared nothing" in capsys.readouterr().err
    assert main([*args, "--backend", "cpu", "--by-build"]) == 1
    assert f"gate: FAIL cpu: new regression {REGRESSED} (passed -> failed)" in capsys.readouterr().out


def test_the_pass_line_names_only_the_judged_columns_and_why_the_others_were_not(files, capsys) -> None:
    """The issue's case: columns the baseline lacks are not judged by --new-regressions; the PASS line
    says so instead of naming them as judged."""
    args = ["gate", str(files["base_two"]), "--baseline", str(files["base"]), "--new-regressions"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out == (
        "gate: PASS on cpu (no new regression); "
        "not judged: cu130 (not in the baseline, so nothing of them can be new)\n"
    )


def test_a_no_data_column_is_not_judged_by_any_failure_and_nothing_judged_is_no_pass(files, tmp_path, capsys) -> None:
    data = load_matrix(files["base_two"]).to_json()
    for column in data["columns"]:
        if column["id"] == "cu130":
            column.update(state="no-data", score=None, counts={})
    for test in data["tests"]:
        test["results"].pop("cu130", None)
        if "cpu" in test["results"] and test["results"]["cpu"]["outcome"] in ("failed", "error"):
            test["results"]["cpu"] = {"outcome": "passed"}
    write_matrix(Matrix.from_json(data), tmp_path / "m.json")
    assert main(["gate", str(tmp_path / "m.json"), "--any-failure"]) == 0
    assert capsys.readouterr().out == (
        "gate: PASS on cpu (no failing test); not judged: cu130 (NO DATA: no test results to judge)\n"
    )
    assert main(["gate", str(tmp_path / "m.json"), "--any-failure", "--backend", "cu130"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error: the gate judged no column: cu130: NO DATA") and "PASS" not in err
    assert main(["gate", str(tmp_path / "m.json"), "--any-failure", "--no-data"]) == 1  # asked about: a FAIL


def test_require_verified_fails_on_each_column_nobody_trusted_vouches_for() -> None:
    """A matrix merged with a trust file: a verified column passes; an unverified, an invalid and a
    planned column no cell arrived for each fail, named; a matrix merged without one is exit 2."""
    import dataclasses

    from harness.model import Provenance, ProvenanceState
    from tests.committed import sample_matrices

    matrix = sample_matrices()[1]
    cpu, rocm = matrix.columns
    verified = Provenance(state=ProvenanceState.VERIFIED, by="lab", signer="key sha256:1")
    with pytest.raises(UsageError, match="merged without a trust file"):
        evaluate_gate(matrix, require_verified=True)
    ok = dataclasses.replace(matrix, columns=(dataclasses.replace(cpu, provenance=verified), rocm))
    result = evaluate_gate(ok, require_verified=True, backends=["cpu"])
    assert not result.failed and result.judged == ["cpu"]
    assert evaluate_gate(ok, require_verified=True).reasons == [
        ("rocm", "unverified: no cell arrived, so nothing vouches for it")
    ]
    invalid = Provenance(state=ProvenanceState.INVALID, reason="manifest.json changed since it was signed")
    unsigned = Provenance(state=ProvenanceState.UNVERIFIED, reason="no statement")
    bad = dataclasses.replace(
        matrix,
        columns=(dataclasses.replace(cpu, provenance=unsigned), dataclasses.replace(rocm, provenance=invalid)),
    )
    assert evaluate_gate(bad, require_verified=True).reasons == [
        ("cpu", "unverified: no statement"),
        ("rocm", "invalid: manifest.json changed since it was signed"),
    ]
    both = evaluate_gate(bad, require_verified=True, any_failure=True, backends=["cpu"])
    assert [why for _, why in both.reasons][-1] == "unverified: no statement" and len(both.reasons) == 2
