"""The quality gate: does a matrix meet the chosen failure conditions, per backend?

Conditions: any failing test (`any_failure`), new regressions against a baseline
(`new_regressions`, see harness/publish/diff.py for what counts), a selected column with NO DATA
(`no_data`). The gate returns its reasons; the caller turns "any reason" into exit 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.errors import UsageError
from harness.model import Column, ColumnState, Matrix
from harness.publish.diff import diff_matrices, regressions


@dataclass
class GateResult:
    reasons: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # column ids the gate looked at
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.reasons)


def select_columns(matrix: Matrix, backends: Sequence[str] | None) -> tuple[list[Column], list[str]]:
    """Columns whose backend or id is named (all when none are); names that match no column.

    A backend's name selects its real columns only: a build run without its device (a CPU-only
    column of a CUDA build) never stands in for the backend; name such a column by its id."""

    def picked(column: Column, name: str) -> bool:
        return column.id == name or (column.backend == name and column.speaks_for_backend)

    pool = [c for c in matrix.columns if c.shipped]  # a build upstream does not ship is never judged
    if not backends:
        return pool, []
    chosen = [c for c in pool if any(picked(c, b) for b in backends)]
    unmatched = [b for b in backends if not any(picked(c, b) for c in pool)]
    return chosen, unmatched


def evaluate_gate(
    matrix: Matrix,
    *,
    baseline: Matrix | None = None,
    any_failure: bool = False,
    new_regressions: bool = False,
    no_data: bool = False,
    backends: Sequence[str] | None = None,
) -> GateResult:
    if not (any_failure or new_regressions or no_data):
        raise UsageError("the gate needs a condition: --any-failure, --new-regressions or --no-data")
    if new_regressions and baseline is None:
        raise UsageError("--new-regressions needs --baseline OLD_MATRIX")
    columns, unmatched = select_columns(matrix, backends)
    result = GateResult(checked=[c.id for c in columns])
    for name in unmatched:
        message = f"{name}: no column in this matrix (the cell did not report)"
        (result.reasons if no_data else result.warnings).append(message)
    if any_failure:
        for column in columns:
            tests = [f"{row.id} ({res.outcome.value})" for row, res in matrix.results(column.id) if res.is_bad]
            if tests:
                more = f" and {len(tests) - 3} more" if len(tests) > 3 else ""
                result.reasons.append(f"{column.id}: {len(tests)} failing test(s): {', '.join(tests[:3])}{more}")
    if new_regressions and baseline is not None:
        report = diff_matrices(baseline, matrix)
        for column_id, change in regressions(report, [c.id for c in columns]):
            before = change.before.value if change.before else "absent"
            after = change.after.value if change.after else "absent"
            result.reasons.append(f"{column_id}: new regression {change.test} ({before} -> {after})")
    if no_data:
        for column in columns:
            if column.state is ColumnState.NO_DATA:
                result.reasons.append(f"{column.id}: NO DATA ({column.error or 'no test results'})")
    return result
