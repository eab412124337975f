"""The quality gate: does a matrix meet the chosen failure conditions, per backend?

Conditions: any failing test (`any_failure`), new regressions against a baseline
(`new_regressions`, see harness/diff.py for what counts), a selected column with NO DATA
(`no_data`). The gate returns its reasons; the caller turns "any reason" into exit 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.diff import diff_matrices, regressions
from harness.errors import UsageError
from harness.outcomes import BAD

_BAD = frozenset(o.value for o in BAD)


@dataclass
class GateResult:
    reasons: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # column ids the gate looked at
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.reasons)


def select_columns(matrix: dict[str, Any], backends: Sequence[str] | None) -> tuple[list[dict[str, Any]], list[str]]:
    """Columns whose backend or id is named (all when none are); names that match no column."""
    if not backends:
        return list(matrix["columns"]), []
    chosen = [c for c in matrix["columns"] if c["backend"] in backends or c["id"] in backends]
    unmatched = [b for b in backends if not any(c["backend"] == b or c["id"] == b for c in matrix["columns"])]
    return chosen, unmatched


def evaluate_gate(
    matrix: dict[str, Any],
    *,
    baseline: dict[str, Any] | None = None,
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
    result = GateResult(checked=[c["id"] for c in columns])
    for name in unmatched:
        message = f"{name}: no column in this matrix (the cell did not report)"
        (result.reasons if no_data else result.warnings).append(message)
    if any_failure:
        failing: dict[str, list[str]] = {}
        for test in matrix["tests"]:
            for column_id, res in test["results"].items():
                if res["outcome"] in _BAD:
                    failing.setdefault(column_id, []).append(f"{test['id']} ({res['outcome']})")
        for column in columns:
            tests = failing.get(column["id"], [])
            if tests:
                more = f" and {len(tests) - 3} more" if len(tests) > 3 else ""
                result.reasons.append(f"{column['id']}: {len(tests)} failing test(s): {', '.join(tests[:3])}{more}")
    if new_regressions and baseline is not None:
        report = diff_matrices(baseline, matrix)
        for column_id, entry in regressions(report, [c["id"] for c in columns]):
            before = entry["before"] or "absent"
            result.reasons.append(f"{column_id}: new regression {entry['test']} ({before} -> {entry['after']})")
    if no_data:
        for column in columns:
            if column["state"] == "no-data":
                why = column.get("error") or "no test results"
                result.reasons.append(f"{column['id']}: NO DATA ({why})")
    return result
