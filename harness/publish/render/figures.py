"""Measured figures (the suites' `perf.<name>` properties) as readable rows with units.

A suite records e.g. `perf.eigh_batched_speedup` = {"value": 1.04, "unit": "x", "label":
"eigh batched vs loop", "shape": "48 x 100 x 100", "dtype": "float32", "claim": "up to 100x
on CUDA"}; the summary and the page show it as "1.0x" in a table per feature, beside the
release note's claim, instead of raw JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from harness.model import Feature, Matrix

MAX_ROWS_PER_FEATURE: Final = 60


@dataclass(frozen=True, slots=True)
class FigureRow:
    feature: str
    test: str
    column: str
    name: str
    label: str
    value: float
    unit: str
    value_text: str
    shape: str
    dtype: str
    claim: str
    note: str


def format_value(value: float, unit: str) -> str:
    """1.04 'x' -> '1.0x'; 0.0123 's' -> '12.3 ms'; 512 'MB' -> '512 MB'."""
    if not math.isfinite(value):
        return f"{value} {unit}".strip()
    if unit == "x":
        return f"{value:.1f}x" if abs(value) < 100 else f"{value:.0f}x"
    if unit == "s" and abs(value) < 1:
        return f"{value * 1000:.3g} ms"
    number = f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{number} {unit}".strip()


def figure_row(feature: str, test: str, column: str, name: str, data: Mapping[str, Any]) -> FigureRow | None:
    value = data.get("value")
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    unit = str(data.get("unit") or "")
    return FigureRow(
        feature=feature,
        test=test,
        column=column,
        name=name,
        label=str(data.get("label") or name.replace("_", " ")),
        value=float(value),
        unit=unit,
        value_text=format_value(float(value), unit),
        shape=str(data.get("shape") or ""),
        dtype=str(data.get("dtype") or ""),
        claim=str(data.get("claim") or ""),
        note=str(data.get("note") or ""),
    )


def feature_figures(matrix: Matrix, limit: int = MAX_ROWS_PER_FEATURE) -> list[tuple[Feature, list[FigureRow]]]:
    """Per feature (in row order), its figures: by figure, then column order."""
    order = {c.id: i for i, c in enumerate(matrix.columns)}
    rows: dict[str, list[FigureRow]] = {}
    for test in matrix.tests:
        for column_id, result in test.results.items():
            for name, data in result.figures():
                row = figure_row(test.feature, test.id, column_id, name, data)
                if row is not None:
                    rows.setdefault(test.feature, []).append(row)
    out = []
    for feature in matrix.features:
        found = rows.get(feature.id)
        if found:
            found.sort(key=lambda r: (r.label, r.test, order.get(r.column, len(order))))
            out.append((feature, found[:limit]))
    return out
