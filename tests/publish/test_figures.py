"""Measured figures (harness/publish/render/figures.py): values shown with their units, malformed
figures left out, and a real matrix's measurements listed per feature in row order, by figure and
then column order, capped per feature."""

from __future__ import annotations

import math

import pytest

from harness.publish.render.figures import feature_figures, figure_row, format_value
from tests.committed import releases_matrix


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (1.04, "x", "1.0x"),
        (250.0, "x", "250x"),
        (0.0123, "s", "12.3 ms"),
        (2.5, "s", "2.5 s"),
        (512, "MB", "512 MB"),
        (123456.0, "ops", "123,456 ops"),
        (0.000123456, "", "0.000123"),
        (math.inf, "x", "inf x"),
        (math.nan, "", "nan"),
    ],
)
def test_format_value(value: float, unit: str, text: str) -> None:
    assert format_value(value, unit) == text


@pytest.mark.parametrize("value", [None, True, "1.5", [1]], ids=["missing", "bool", "text", "list"])
def test_a_figure_without_a_number_is_left_out(value: object) -> None:
    assert figure_row("f", "t", "c", "speedup", {"value": value, "unit": "x"}) is None


def test_a_figure_row_defaults_its_label_from_its_name() -> None:
    row = figure_row("linalg", "t", "c", "eigh_batched_speedup", {"value": 3, "unit": "x", "claim": "up to 100x"})
    assert row is not None
    assert (row.label, row.value, row.value_text, row.claim, row.shape) == (
        "eigh batched speedup",
        3.0,
        "3.0x",
        "up to 100x",
        "",
    )


def test_a_real_matrix_lists_its_measurements_per_feature() -> None:
    matrix = releases_matrix()
    found = feature_figures(matrix)
    row_order = [f.id for f in matrix.features]
    ids = [feature.id for feature, _ in found]
    assert ids and ids == sorted(ids, key=row_order.index), "features in row order"
    columns = [c.id for c in matrix.columns]
    for feature, rows in found:
        assert all(r.feature == feature.id for r in rows)
        keys = [(r.label, r.test, columns.index(r.column)) for r in rows]
        assert keys == sorted(keys)
    measured = {
        (row.id, column)
        for row in matrix.tests
        for column, result in row.results.items()
        if any(True for _ in result.figures())
    }
    assert {(r.test, r.column) for _, rows in found for r in rows} == measured


def test_each_feature_is_capped() -> None:
    found = feature_figures(releases_matrix(), limit=2)
    assert found and all(len(rows) == 2 for _, rows in found)
