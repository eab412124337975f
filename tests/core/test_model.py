"""The matrix model (harness/model.py): what a column says about itself (heading, label, release,
data) for a device column, a cpu-only column, a NO DATA and a not-shipped column; and the JSON
round trip of every type, on real merged cells and on values with every field set."""

from __future__ import annotations

import dataclasses

import pytest

from harness.cell import CellStatus
from harness.model import (
    Column,
    ColumnState,
    Environment,
    Feature,
    FeatureCell,
    Matrix,
    Score,
    TestResult,
    TestRow,
)
from harness.outcomes import Outcome, Rollup, Scope, SkipClass
from tests.committed import releases_matrix, sample_matrices


def _column(**changes: object) -> Column:
    base = Column(
        id="cu130-h100",
        backend="cu130",
        display_name="CUDA 13.0",
        state=ColumnState.OK,
        cell_status=CellStatus.COMPLETED,
        run_id="r1",
        environment=Environment(torch="2.14.1+cu130", device="NVIDIA H100 80GB HBM3", mode="container"),
        mode="container",
    )
    return dataclasses.replace(base, **changes)


# -- what a column says about itself ------------------------------------------------------------
def test_a_device_column() -> None:
    column = _column()
    assert column.heading == "CUDA 13.0"
    assert column.label == "CUDA 13.0 · torch 2.14.1+cu130 · NVIDIA H100 80GB HBM3"
    assert column.release_series == "2.14"
    assert column.has_data and column.shipped and column.speaks_for_backend
    assert column.build_key == ("cu130", "")


def test_a_cpu_only_column_names_the_build_and_leaves_the_cpu_device_out() -> None:
    column = releases_matrix().column("cu130-2.14.1-cpu-only")
    assert column is not None
    assert column.heading == "CUDA 13.0 build, CPU only"
    assert column.label == "CUDA 13.0 build, CPU only · torch 2.14.1+cu130"
    assert column.release_series == "2.14"
    assert column.has_data and column.shipped and not column.speaks_for_backend
    assert column.build_key == ("cu130", "cpu-only")


def test_a_no_data_column_shows_no_torch_and_no_device() -> None:
    """A NO DATA column's runner torch is not its build: the label leaves it out."""
    column = sample_matrices()[1].column("rocm")
    assert column is not None and column.state is ColumnState.NO_DATA
    assert column.torch, "the runner's torch is recorded in the environment"
    assert column.heading == column.label == "ROCm 7.14"  # `--backend rocm` is the current ROCm build
    assert not column.has_data and column.shipped
    made = _column(state=ColumnState.NO_DATA, cell_status=CellStatus.INFRA_ERROR)
    assert made.label == "CUDA 13.0" and not made.has_data


def test_a_not_shipped_column_is_named_by_its_release() -> None:
    column = _column(state=ColumnState.NOT_SHIPPED, environment=Environment(), release="2.15", cell_status=None)
    assert column.release_series == "2.15"
    assert column.label == "CUDA 13.0 · torch 2.15 (not shipped)"
    assert not column.has_data and not column.shipped


@pytest.mark.parametrize(
    ("torch", "release", "series"),
    [
        ("2.15.0+cu132", None, "2.15"),
        ("2.16.0.dev20261130+cu132", None, "2.16"),
        ("2.13.0", None, "2.13"),
        ("not a version", None, None),
        (None, None, None),
        ("2.14.1+cu130", "2.15", "2.15"),  # a stated release wins
    ],
)
def test_release_series(torch: str | None, release: str | None, series: str | None) -> None:
    assert _column(environment=Environment(torch=torch), release=release).release_series == series


def test_failures_count_only_bad_outcomes() -> None:
    counts = {Outcome.PASSED: 5, Outcome.FAILED: 2, Outcome.CRASHED: 1, Outcome.TIMEOUT: 1, Outcome.XFAILED: 3}
    assert _column(counts=counts).failures == 4


# -- JSON round trips ---------------------------------------------------------------------------
def _full_result() -> TestResult:
    return TestResult(
        outcome=Outcome.SKIPPED,
        skip_class=SkipClass.KNOWN_ISSUE,
        link="https://github.com/pytorch/pytorch/issues/1",
        message="known",
        trace="Traceback ...",
        output="captured",
        duration=0.25,
        attempts=3,
        properties={"perf.x": {"value": 1.5, "unit": "x"}, "note": "n"},
        scope=Scope.MEASUREMENT,
        strict=True,
        signal="SIGSEGV",
        extra_messages=("teardown failed",),
        run="20261201T200409Z-3c9c60",
        at="2026-12-01T20:04:09Z",
    )


def test_a_result_with_every_field_set_round_trips() -> None:
    result = _full_result()
    defaults = TestResult(outcome=Outcome.PASSED)
    unset = [f.name for f in dataclasses.fields(TestResult) if getattr(result, f.name) == getattr(defaults, f.name)]
    assert unset == [], f"set these fields in _full_result too: {unset}"
    data = result.to_json()
    assert TestResult.from_json(data) == result
    assert data["outcome"] == "skipped" and data["scope"] == "measurement" and data["skip_class"] == "known-issue"


def test_a_plain_result_writes_only_its_outcome_and_time() -> None:
    result = TestResult(outcome=Outcome.PASSED, duration=0.5)
    assert result.to_json() == {"outcome": "passed", "duration": 0.5}
    assert TestResult.from_json({"outcome": "passed"}) == TestResult(outcome=Outcome.PASSED)
    assert TestResult(outcome=Outcome.FAILED, strict=False).to_json() == {"outcome": "failed", "strict": False}


def test_figures_are_the_perf_properties_holding_a_value() -> None:
    result = TestResult(
        outcome=Outcome.PASSED,
        properties={"perf.a": {"value": 1}, "perf.b": {"unit": "x"}, "perf.c": 3, "other": {"value": 2}},
    )
    assert list(result.figures()) == [("a", {"value": 1})]


def test_feature_round_trips_and_defaults_its_title() -> None:
    feature = Feature(id="hub", title="Hub", since="2.12", claim="c", source="https://x", scope=Scope.HOST)
    assert Feature.from_json(feature.to_json()) == feature
    assert feature.to_json()["scope"] == "host"
    plain = Feature(id="graphs", title="Graphs")
    assert plain.to_json() == {"id": "graphs", "title": "Graphs"}
    assert Feature.from_json({"id": "graphs"}) == Feature(id="graphs", title="graphs")


def test_a_column_with_every_field_set_round_trips() -> None:
    env = Environment(**{name: f"v-{name}" for name in Environment.__dataclass_fields__ if name != "device_count"})
    env = dataclasses.replace(env, device_count=2, mode="native")
    column = Column(
        id="c",
        backend="cu130",
        display_name="CUDA 13.0",
        state=ColumnState.PARTIAL_RUN,
        cell_status=CellStatus.CRASHED,
        run_id="r",
        run_attempt=2,
        error="worker died",
        exit={"code": -9, "signal": "SIGKILL", "meaning": "SIGKILL"},
        environment=env,
        errors=("events.jsonl: line 3 unreadable",),
        counts={Outcome.PASSED: 3, Outcome.CRASHED: 1},
        score=Score(supported=1, judged=2, features=3, states={Rollup.SUPPORTED: 1, Rollup.FAILING: 1}),
        source="results/c-1",
        mode="native",
        variant="cpu-only",
        variant_reason="no device",
        reproduce="harness run",
        release="2.14",
    )
    assert Column.from_json(column.to_json()) == column


def test_feature_cell_and_row_round_trip() -> None:
    cell = FeatureCell(
        state=Rollup.PARTIAL,
        counts={Outcome.PASSED: 1, Outcome.SKIPPED: 2},
        skips={SkipClass.HARDWARE: 2},
        host_tests=1,
        measurements=1,
    )
    assert FeatureCell.from_json(cell.to_json()) == cell
    row = TestRow(
        id="a/test_a.py::t", feature="a", results={"c1": _full_result(), "c2": TestResult(outcome=Outcome.PASSED)}
    )
    assert TestRow.from_json(row.to_json()) == row


@pytest.mark.parametrize("which", ["releases", "sample-base", "sample-new"])
def test_real_matrices_round_trip(which: str) -> None:
    matrix = {"releases": releases_matrix(), "sample-base": sample_matrices()[0], "sample-new": sample_matrices()[1]}[
        which
    ]
    assert Matrix.from_json(matrix.to_json()) == matrix


def test_lookups() -> None:
    matrix = releases_matrix()
    first = matrix.columns[0]
    assert matrix.column(first.id) is first and matrix.column("nope") is None
    assert matrix.feature("linalg") is not None and matrix.feature("nope") is None
    assert matrix.cell("linalg", first.id) is matrix.cells["linalg"][first.id]
    assert matrix.cell("nope", first.id) is None
    results = list(matrix.results(first.id))
    assert results and all(row.results[first.id] is result for row, result in results)
    assert len(results) == sum(first.id in row.results for row in matrix.tests)


def test_trim_keeps_the_head_and_most_of_the_tail_of_a_long_text() -> None:
    """One rule for the merge (what a cell's texts store) and the page (what it shows)."""
    from harness.model import trim

    assert trim(None, 10) is None and trim("short", 10) == "short"
    text = "H" * 100 + "T" * 300
    cut = trim(text, 200)
    assert cut is not None and cut.startswith("H" * 50 + "\n") and cut.endswith("\n" + "T" * 150)
    assert "[200 characters trimmed; full text in the cell's files]" in cut


def test_a_column_records_its_channel_and_an_old_matrix_has_none() -> None:
    nightly = _column(id="cu130-2.16.0.dev20261130", channel="nightly")
    data = nightly.to_json()
    assert data["channel"] == "nightly" and Column.from_json(data).channel == "nightly"
    old = _column().to_json()
    assert "channel" not in old and Column.from_json(old).channel is None


def test_a_columns_provenance_round_trips_and_is_absent_when_not_checked() -> None:
    import dataclasses

    from harness.model import Column, ColumnState, Provenance, ProvenanceState

    column = Column(id="c", backend="cpu", display_name="CPU", state=ColumnState.OK, cell_status=None, run_id="r")
    assert "provenance" not in column.to_json()
    for provenance in (
        Provenance(state=ProvenanceState.VERIFIED, by="lab", signer="key sha256:ab", run_url="https://x/run/1"),
        Provenance(state=ProvenanceState.INVALID, reason="junit.xml changed since it was signed"),
    ):
        signed = dataclasses.replace(column, provenance=provenance)
        assert Column.from_json(signed.to_json()) == signed
    verified = Provenance(state=ProvenanceState.VERIFIED, by="lab", signer="key sha256:ab")
    assert verified.describe() == "verified: lab (key sha256:ab)"
    assert Provenance(state=ProvenanceState.UNVERIFIED, reason="no statement").describe() == "unverified: no statement"
