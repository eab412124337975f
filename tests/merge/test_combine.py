"""Merging real cells into matrix.json: identity from manifests, dedup, NO DATA, schema."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from harness.matrix_json import load_matrix, validate_matrix, write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.model import SCHEMA_VERSION
from harness.outcomes import Outcome, Rollup, Scope
from harness.plan import PlannedCell
from tests.cellfactory import run_sample_cell, write_suite
from tests.conftest import slow_fixture

FILES = {
    "alpha/test_alpha.py": """
        import pytest
        def test_ok():
            pass
        def test_also_ok():
            pass
        @pytest.mark.skip(reason="[unsupported] not on this backend")
        def test_unsupported():
            pass
    """,
    "beta/test_beta.py": """
        def test_beta_fails():
            assert False, "beta broke"
    """,
}


@pytest.fixture(scope="module")
@slow_fixture("real pytest runs of a sample suite")
def cells(tmp_path_factory):
    root = tmp_path_factory.mktemp("matrix")
    suites = write_suite(root / "suites", FILES)
    first = run_sample_cell(suites, root / "runner-a", cell_id="cpu-runner-a")
    second = run_sample_cell(suites, root / "runner-b", cell_id="cpu-runner-b")
    no_device = run_sample_cell(suites, root / "runner-c", backend="cu130", cell_id="cu130-no-gpu")
    return first.cell_dir, second.cell_dir, no_device.cell_dir


@pytest.mark.slow  # a real pytest run of a sample suite
def test_a_test_only_some_columns_ran_has_only_their_results(cells, tmp_path):
    """A column whose suite has a test the others lack (and lacks one they have): its row holds
    that column's result alone, in whichever order the cells come."""
    files = {**FILES, "alpha/test_extra.py": "def test_new():\n    pass\n"}
    del files["beta/test_beta.py"]
    extra = run_sample_cell(write_suite(tmp_path / "suites", files), tmp_path / "r", cell_id="cpu-runner-x").cell_dir
    for order in ([cells[0], extra], [extra, cells[0]]):
        matrix = merge_cell_dirs(order, jobs=1).to_json()
        rows = {t["id"]: t for t in matrix["tests"]}
        assert list(rows["alpha/test_extra.py::test_new"]["results"]) == ["cpu-runner-x"]
        assert list(rows["beta/test_beta.py::test_beta_fails"]["results"]) == ["cpu-runner-a"]
        assert list(rows["alpha/test_alpha.py::test_ok"]["results"]) == ["cpu-runner-a", "cpu-runner-x"]
        assert [t["id"] for t in matrix["tests"]] == [
            "alpha/test_alpha.py::test_also_ok",
            "alpha/test_alpha.py::test_ok",
            "alpha/test_alpha.py::test_unsupported",
            "alpha/test_extra.py::test_new",
            "beta/test_beta.py::test_beta_fails",
        ]


def test_same_file_names_stay_separate_columns(cells):
    first, second, _ = cells
    assert (first / "junit.xml").read_text().count('name="pytest"') == 1  # pytest's default suite name
    matrix = merge_cell_dirs([first, second]).to_json()
    assert [c["id"] for c in matrix["columns"]] == ["cpu-runner-a", "cpu-runner-b"]
    for column in matrix["columns"]:
        assert column["counts"] == {"passed": 2, "skipped": 1, "failed": 1}


def test_rollups_and_features_from_metadata(cells):
    matrix = merge_cell_dirs([cells[0]]).to_json()
    assert [f["id"] for f in matrix["features"]] == ["alpha", "beta"]
    assert matrix["features"][0]["title"] == "Alpha feature"
    assert matrix["cells"]["alpha"]["cpu-runner-a"]["state"] == "partial"
    assert matrix["cells"]["beta"]["cpu-runner-a"]["state"] == "failing"
    assert matrix["columns"][0]["score"] == {
        "supported": 0,
        "judged": 2,
        "features": 2,
        "states": {"partial": 1, "failing": 1},
    }


def test_column_without_device_is_no_data_not_failing(cells):
    matrix = merge_cell_dirs([cells[0], cells[2]]).to_json()
    column = next(c for c in matrix["columns"] if c["id"] == "cu130-no-gpu")
    assert column["state"] == "no-data"
    assert column["cell_status"] == "infra-error"
    assert column["score"] is None
    assert "cu130" in column["error"] and "cpu build" in column["error"]
    assert {matrix["cells"][f]["cu130-no-gpu"]["state"] for f in ("alpha", "beta")} == {"no-data"}
    validate_matrix(matrix)


def test_environment_comes_from_the_manifest(cells):
    column = merge_cell_dirs([cells[0]]).to_json()["columns"][0]
    env = column["environment"]
    assert env["torch"].startswith("2.") and env["python"] and env["runner"]
    assert env["mode"] == "native" and env["started_at"]
    assert column["backend"] == "cpu" and column["display_name"] == "CPU"


def test_duplicate_upload_merged_once_and_latest_attempt_wins(cells, tmp_path):
    first = cells[0]
    duplicate = tmp_path / "download-1" / "cell"
    shutil.copytree(first, duplicate)
    retry = tmp_path / "download-2" / "cell"
    shutil.copytree(first, retry)
    manifest = json.loads((retry / "manifest.json").read_text())
    manifest.update(run_id="retry-run", run_attempt=2)
    (retry / "manifest.json").write_text(json.dumps(manifest))
    matrix = merge_cell_dirs([first, duplicate, retry]).to_json()
    assert len(matrix["columns"]) == 1
    assert matrix["columns"][0]["run_id"] == "retry-run"
    notes = " ".join(n["note"] for n in matrix["notes"])
    assert "merged once" in notes and "superseded" in notes


def test_unreadable_input_is_reported_and_others_kept(cells, tmp_path):
    bogus = tmp_path / "not-a-cell"
    bogus.mkdir()
    matrix = merge_cell_dirs([bogus, cells[0]]).to_json()
    assert [c["id"] for c in matrix["columns"]] == ["cpu-runner-a"]
    assert matrix["input_errors"][0]["source"] == str(bogus)
    assert "no manifest.json" in matrix["input_errors"][0]["message"]


def _without_time(matrix: dict) -> dict:
    return {k: v for k, v in matrix.items() if k != "generated_at"}


@pytest.mark.parametrize("jobs", [1, 3])
def test_the_order_cells_come_in_does_not_change_the_matrix(cells, tmp_path, jobs):
    """Cells are read in parallel and added as they arrive; the matrix (rows, each row's results,
    features, and the row of a test that two columns put in different features) follows column
    order, never the order given or finished."""
    first, second, no_device = cells
    moved = tmp_path / "runner-b"
    shutil.copytree(second, moved)
    collected = json.loads((moved / "collected.json").read_text())
    moving = "alpha/test_alpha.py::test_ok"
    for group in collected["groups"]:
        if moving in group["tests"]:
            group["tests"].remove(moving)
    # runner-b's suite put it in another feature
    collected["groups"].append({"feature": "beta", "scope": "backend", "tests": [moving]})
    (moved / "collected.json").write_text(json.dumps(collected))
    forward = merge_cell_dirs([first, moved, no_device], jobs=jobs).to_json()
    backward = merge_cell_dirs([no_device, moved, first], jobs=jobs).to_json()
    assert _without_time(forward) == _without_time(backward)
    assert [c["id"] for c in forward["columns"]] == ["cpu-runner-a", "cpu-runner-b", "cu130-no-gpu"]
    row = next(t for t in backward["tests"] if t["id"] == "alpha/test_alpha.py::test_ok")
    assert row["feature"] == "alpha", "the row of its first column (cpu-runner-a)"
    assert list(row["results"]) == ["cpu-runner-a", "cpu-runner-b"]
    assert forward["cells"]["beta"]["cpu-runner-b"]["counts"] == {"passed": 1, "failed": 1}


@pytest.mark.skipif(sys.platform != "linux", reason="the merge forks its workers on Linux only")
def test_a_worker_that_dies_loses_only_its_cell(cells, monkeypatch):
    """A cell that kills the process reading it (out of memory, a crash in a parser) is one
    input error; the cells its death took down with the pool are read again."""
    import os

    from harness.merge import combine as matrix_module

    first, second, no_device = cells
    read = matrix_module._ingest

    def dies_on_runner_b(path):
        if path == second:
            os._exit(9)
        return read(path)

    monkeypatch.setattr(matrix_module, "_ingest", dies_on_runner_b)  # workers are forked: they see it
    matrix = merge_cell_dirs([first, second, no_device], jobs=3).to_json()
    assert [c["id"] for c in matrix["columns"]] == ["cpu-runner-a", "cu130-no-gpu"]
    assert matrix["columns"][0]["counts"] == {"passed": 2, "skipped": 1, "failed": 1}
    [problem] = matrix["input_errors"]
    assert problem["source"] == str(second) and "killed its worker process" in problem["message"]


def test_json_round_trip_validates(cells, tmp_path):
    matrix = merge_cell_dirs(list(cells))
    path = tmp_path / "matrix.json"
    write_matrix(matrix, path)
    loaded = load_matrix(path).to_json()
    validate_matrix(loaded)
    assert loaded == matrix.to_json(), "matrix.json holds the model, all of it"
    assert loaded["schema_version"] == SCHEMA_VERSION
    assert loaded["alignment"]["aligned"] is True
    tests = {t["id"]: t for t in loaded["tests"]}
    assert tests["beta/test_beta.py::test_beta_fails"]["results"]["cpu-runner-a"]["message"].startswith(
        "AssertionError"
    )


def test_matrix_json_is_the_same_without_orjson(cells, tmp_path, monkeypatch):
    """orjson is a speed-up only: the stdlib encoder writes the same bytes."""
    from harness import jsonio

    matrix = merge_cell_dirs(list(cells))
    write_matrix(matrix, tmp_path / "fast.json")
    monkeypatch.setattr(jsonio, "orjson", None)
    write_matrix(matrix, tmp_path / "stdlib.json")
    fast = (tmp_path / "fast.json").read_bytes()
    assert b'"message":"AssertionError' in fast  # rows are written compact, one per line
    assert (tmp_path / "stdlib.json").read_bytes() == fast


def test_the_schema_row_is_what_the_fast_row_check_assumes():
    """validate_json passes rows that are plainly valid without the compiled schema: this pins
    the schema's row to what that check assumes (change both together)."""
    from harness.matrix_json import SCHEMA_PATH

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["properties"]["tests"] == {"type": "array", "items": {"$ref": "#/$defs/test"}}
    assert schema["$defs"]["test"] == {
        "type": "object",
        "required": ["id", "feature", "results"],
        "additionalProperties": False,
        "properties": {
            "id": {"type": "string"},
            "feature": {"type": "string"},
            "results": {"type": "object", "additionalProperties": {"$ref": "#/$defs/result"}},
        },
    }


def _break_duration(tests: list) -> None:
    # A valid duration 1 is met first: True (equal to 1 in Python) must still be checked.
    tests[0]["results"]["cpu-runner-a"] = {"outcome": "passed", "duration": 1}
    tests[1]["results"]["cpu-runner-a"] = {"outcome": "passed", "duration": True}


@pytest.mark.parametrize(
    ("damage", "where"),
    [
        (_break_duration, "data.tests[1].results.cpu-runner-a.duration must be number"),
        (
            lambda t: t[1]["results"].update({"cpu-runner-a": {"outcome": "great"}}),
            "data.tests[1].results.cpu-runner-a.outcome must be one of",
        ),
        (
            lambda t: t[2]["results"].update({"cpu-runner-a": {"outcome": ["passed"]}}),
            "data.tests[2].results.cpu-runner-a.outcome must be one of",
        ),
        (
            lambda t: t[1]["results"].update({"cpu-runner-a": "passed"}),
            "data.tests[1].results.cpu-runner-a must be object",
        ),
        (
            lambda t: t[1]["results"].update({"cpu-runner-a": {"outcome": "failed", "message": 4}}),
            "data.tests[1].results.cpu-runner-a.message must be string",
        ),
        (
            lambda t: t[1]["results"].update({"cpu-runner-a": {"outcome": "passed", "colour": "red"}}),
            "data.tests[1].results.cpu-runner-a must not contain",
        ),
        (lambda t: t[2].update({"id": 3}), "data.tests[2].id must be string"),
        (lambda t: t[2].update({"extra": 1}), "data.tests[2] must not contain"),
        (lambda t: t[2].pop("feature"), "data.tests[2] must contain"),
        (lambda t: t[2].update({"results": []}), "data.tests[2].results must be object"),
        (lambda t: t.append("a row"), "data.tests[4] must be object"),
    ],
)
def test_validation_names_each_bad_value(cells, damage, where):
    from harness.errors import InputError

    matrix = merge_cell_dirs([cells[0]]).to_json()
    validate_matrix(matrix)
    assert len(matrix["tests"]) == 4
    damage(matrix["tests"])
    with pytest.raises(InputError, match=r"not a valid matrix\.json") as caught:
        validate_matrix(matrix)
    assert where in str(caught.value)


def test_future_schema_is_refused(tmp_path):
    from harness.errors import InputError

    path = tmp_path / "matrix.json"
    path.write_text(json.dumps({"schema_version": "2.0"}))
    with pytest.raises(InputError, match="not supported"):
        load_matrix(path)


HOST_SCOPE_FILES = {
    "alpha/test_kernels.py": """
        import pytest
        @pytest.mark.skip(reason="[unsupported] no kernels on this backend")
        def test_kernel():
            pass
    """,
    "alpha/test_format.py": """
        import pytest
        pytestmark = pytest.mark.host
        def test_format_one():
            pass
        def test_format_two():
            pass
    """,
    "beta/test_api.py": """
        import pytest
        @pytest.mark.host
        def test_api_present():
            pass
    """,
}


def test_host_scope_tests_do_not_decide_the_state(sample_suite, tmp_path):
    """Host-side checks pass on any build; the backend is judged by its own tests (alpha:
    unsupported), and by host checks only where nothing else exists (beta: supported)."""
    suites = sample_suite(HOST_SCOPE_FILES)
    outcome = run_sample_cell(suites, tmp_path / "r", cell_id="cpu-host")
    collected = json.loads((outcome.cell_dir / "collected.json").read_text())
    scopes = {n.split("::")[-1]: g["scope"] for g in collected["groups"] for n in g["tests"]}
    assert scopes == {
        "test_kernel": "backend",
        "test_format_one": "host",
        "test_format_two": "host",
        "test_api_present": "host",
    }
    matrix = merge_cell_dirs([outcome.cell_dir]).to_json()
    alpha = matrix["cells"]["alpha"]["cpu-host"]
    assert alpha["state"] == "unsupported"
    assert alpha["counts"] == {"passed": 2, "skipped": 1} and alpha["host_tests"] == 2
    assert matrix["cells"]["beta"]["cpu-host"]["state"] == "supported"
    result = next(t for t in matrix["tests"] if t["id"].endswith("test_format_one"))["results"]["cpu-host"]
    assert result["scope"] == "host"
    validate_matrix(matrix)


MEASUREMENT_FILES = {
    "alpha/test_speed.py": """
        import json
        import pytest

        def test_correct():
            pass

        @pytest.mark.measurement
        def test_speedup(record_property):
            record_property("perf.speedup", json.dumps({"value": 1.04, "unit": "x", "label": "batched vs loop"}))

        @pytest.mark.measurement
        def test_timing_crashes():
            raise RuntimeError("the measured kernel failed")
    """,
    "beta/test_hub.py": """
        def test_trust_prompt():
            pass
    """,
}


def test_measurements_are_figures_and_host_features_are_not_scored(sample_suite, tmp_path):
    """A measurement that ran is a figure, not a pass; one that broke still counts. A feature
    marked scope = "host" in features.toml is shown but never in the column's score."""
    features = {
        "alpha": {"title": "Alpha", "since": "2.12"},
        "beta": {"title": "Beta (backend-independent)", "since": "2.11", "scope": "host"},
    }
    suites = sample_suite(MEASUREMENT_FILES, features)
    outcome = run_sample_cell(suites, tmp_path / "r", cell_id="cpu-measure")
    matrix = merge_cell_dirs([outcome.cell_dir])
    alpha = matrix.cell("alpha", "cpu-measure")
    assert alpha.measurements == 1
    assert alpha.counts == {Outcome.PASSED: 1, Outcome.FAILED: 1}, "the passing measurement is not a pass"
    assert alpha.state is Rollup.PARTIAL
    speed = next(r for row, r in matrix.results("cpu-measure") if row.id.endswith("test_speedup"))
    assert speed.scope is Scope.MEASUREMENT and dict(speed.figures())["speedup"]["value"] == 1.04
    assert matrix.feature("beta").scope is Scope.HOST
    score = matrix.column("cpu-measure").score
    assert (score.supported, score.judged, score.features) == (0, 1, 1), "beta is shown, never scored"
    assert matrix.cell("beta", "cpu-measure").state is Rollup.SUPPORTED


def test_a_result_survives_the_trip_from_a_worker_with_every_field():
    """TestResult.__reduce__ names its fields by hand: a field added to the model and not there
    would be lost between a worker and the merge."""
    import dataclasses
    import pickle

    from harness.model import TestResult
    from harness.outcomes import SkipClass

    result = TestResult(
        outcome=Outcome.SKIPPED,
        skip_class=SkipClass.UNSUPPORTED,
        link="https://example.invalid/1",
        message="m",
        trace="t",
        output="o",
        duration=1.5,
        attempts=2,
        properties={"perf.x": {"value": 1}},
        scope=Scope.HOST,
        strict=True,
        signal="SIGSEGV",
        extra_messages=("e",),
        run="r2",
        at="2026-12-01T20:04:09Z",
    )
    defaults = TestResult(outcome=Outcome.PASSED)
    assert all(getattr(result, f.name) != getattr(defaults, f.name) for f in dataclasses.fields(TestResult))
    assert pickle.loads(pickle.dumps(result)) == result


def test_columns_record_their_channel_and_a_planned_nightly_that_never_ran_keeps_it(tmp_path):
    """A planned cell that sent nothing is NO DATA with the plan's channel; the committed real cells (no
    channel in their manifests) get what their torch version implies; matrix.json validates."""
    from tests.committed import cell_dirs

    expected = [PlannedCell("cu130-2.16.0.dev20261130", backend="cu130", torch="2.16.0.dev20261130", channel="nightly")]
    matrix = merge_cell_dirs(cell_dirs(), expected, jobs=1)
    channels = {c.id: (c.state.value, c.channel) for c in matrix.columns}
    assert channels["cu130-2.16.0.dev20261130"] == ("no-data", "nightly")
    assert channels["cpu-2.13.0"] == ("ok", "release")
    write_matrix(matrix, tmp_path / "matrix.json")
    assert load_matrix(tmp_path / "matrix.json").column("cu130-2.16.0.dev20261130").channel == "nightly"


# -- provenance: what a merge given a trust file does with each column's verdict -----------------------
def _provenance(state: str, **kw: str):
    from harness.model import Provenance, ProvenanceState

    return Provenance(state=ProvenanceState(state), **kw)


def test_a_columns_provenance_is_its_runs_worst_and_verified_names_every_signer() -> None:
    from harness.merge.combine import vouch

    a, b = _provenance("verified", by="A", signer="key a"), _provenance("verified", by="B", signer="key b")
    assert vouch([a, b]).by == "A, B" and vouch([a, a]).by == "A" and vouch([a, b]).signer == "key a"
    unsigned, bad = _provenance("unverified", reason="no statement"), _provenance("invalid", reason="x changed")
    assert vouch([a, unsigned]) == unsigned and vouch([unsigned, bad, a]) == bad


def test_an_invalid_run_is_its_columns_error_and_a_later_partial_run_unsigned_leaves_it_unverified(tmp_path):
    """Real committed cells: cpu-2.13.0 with a later partial run of it (a composite column), and a CUDA
    build's cell whose statement failed."""
    from harness.model import ColumnState, ProvenanceState
    from harness.plan import PlannedCell
    from tests.committed import CELLS, SAMPLES

    later = shutil.copytree(SAMPLES / "publishing-new", tmp_path / "later")
    manifest = json.loads((later / "manifest.json").read_text())
    manifest.update(
        cell_id="cpu-2.13.0", run_id="r-partial", started_at="2026-12-02T00:00:00Z", selection={"tests": ["x"]}
    )
    (later / "manifest.json").write_text(json.dumps(manifest))
    base, cuda = CELLS / "cpu-2.13.0", CELLS / "cu130-2.14.1-cpu-only"
    verdicts = {
        base: _provenance("verified", by="A"),
        later: _provenance("unverified", reason="no statement"),
        cuda: _provenance("invalid", reason="junit.xml changed since it was signed"),
    }
    planned = [PlannedCell(cell_id="cu130-2.14.1-cpu-only", backend="cu130")]
    matrix = merge_cell_dirs([base, later, cuda], planned, jobs=1, provenance=verdicts)
    assert [c.id for c in matrix.columns] == ["cpu-2.13.0", "cu130-2.14.1-cpu-only"], "no planned twin"
    cpu, refused = matrix.columns
    assert cpu.composite and cpu.provenance.state is ProvenanceState.UNVERIFIED
    assert refused.state is ColumnState.NO_DATA and refused.run_id and refused.environment.torch == "2.14.1+cu130"
    assert refused.error == "provenance invalid: junit.xml changed since it was signed"
    assert refused.provenance == verdicts[cuda]
    assert not any(refused.id in row.results for row in matrix.tests)
    validate_matrix(matrix.to_json())
