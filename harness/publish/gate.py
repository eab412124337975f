"""The quality gate: does a matrix meet the chosen failure conditions, per backend?

Conditions: any failing test (`any_failure`), new regressions against a baseline
(`new_regressions`, see harness/publish/column_diff.py for what counts), a selected column with NO DATA
(`no_data`), a selected column nobody trusted vouches for (`require_verified`: unverified or invalid,
docs/provenance.md). The gate returns its reasons; the caller turns "any reason" into exit 1.

A gate never passes on nothing: a name that matches no backend or column, a selection that holds
no column to judge, or a matrix without one is a UsageError (exit 2), never "PASS". Columns upstream
does not ship are never judged; a build run without its device (a CPU-only column) never stands in
for its backend, only for itself when named by its id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.errors import UsageError
from harness.model import Column, ColumnState, Matrix
from harness.publish.column_diff import diff_matrices, matching_pairs, regressions
from harness.registry import FAMILIES, load_registry


@dataclass
class GateResult:
    reasons: list[tuple[str, str]] = field(default_factory=list)  # (column id or backend, why)
    checked: list[str] = field(default_factory=list)  # the column ids the gate selected
    notes: list[str] = field(default_factory=list)  # what a reader of a PASS should know
    # selected columns no condition could judge, with why (NO DATA under --any-failure, not in the baseline)
    not_judged: dict[str, str] = field(default_factory=dict)

    @property
    def judged(self) -> list[str]:
        """The selected columns some condition judged: the ones a PASS speaks for."""
        return [c for c in self.checked if c not in self.not_judged]

    @property
    def failed(self) -> bool:
        return bool(self.reasons)

    @property
    def failing(self) -> list[str]:
        """The columns (or backends without a column) that failed, in the order judged."""
        return list(dict.fromkeys(name for name, _ in self.reasons))


@dataclass(frozen=True)
class Selection:
    columns: list[Column]
    missing: list[str]  # backends named that have no column on their device (judged only by --no-data)
    why_missing: dict[str, str] = field(default_factory=dict)


def _ids(columns: Sequence[Column]) -> str:
    return ", ".join(c.id for c in columns) or "none"


def _backend_of(name: str) -> tuple[str, ...] | None:
    """The backend ids a name stands for: a variant (cu130, rocm as rocm7.2), a family (cuda), or None."""
    registry = load_registry()
    if name in FAMILIES:
        return (*tuple(b.id for b in registry.values() if b.build == name), name)
    backend = registry.get(name)
    return (backend.id,) if backend is not None else None


def select_columns(matrix: Matrix, backends: Sequence[str] | None, *, no_data: bool = False) -> Selection:
    """The columns to judge. Each name is a column id, a backend (its real columns) or a family."""
    shipped = [c for c in matrix.columns if c.shipped]
    if not backends:
        if not shipped:
            raise UsageError(
                f"this matrix has no column to judge (columns: {_ids(matrix.columns)})",
                hint="merge cells into it first, or check the plan",
            )
        return Selection(shipped, [])
    chosen: dict[str, Column] = {}
    missing: list[str] = []
    why: dict[str, str] = {}
    for name in backends:
        by_id = [c for c in matrix.columns if c.id == name]
        ids = _backend_of(name)
        of_backend = [c for c in matrix.columns if ids and (c.backend in ids or c.backend == name)]
        if not by_id and not of_backend and ids is None:
            raise UsageError(
                f"--backend {name}: no backend, family or column of that name (columns here: {_ids(matrix.columns)})"
            )
        named = by_id or of_backend
        if named and not [c for c in named if c.shipped]:
            raise UsageError(
                f"--backend {name} selects only columns upstream does not ship ({_ids(named)}): nothing to judge"
            )
        real = [c for c in by_id if c.shipped] or [c for c in of_backend if c.shipped and c.speaks_for_backend]
        if real:
            chosen.update((c.id, c) for c in real)
            continue
        apart = [c for c in of_backend if c.shipped]
        if apart:
            reason = (
                f"its columns here ran without its device ({_ids(apart)}) and never speak for "
                f"{apart[0].display_name}; name one by its id to judge it"
            )
        else:
            reason = f"no column in this matrix (the cell did not report; columns here: {_ids(matrix.columns)})"
        if not no_data:
            raise UsageError(f"--backend {name} selects no column: {reason}")
        missing.append(name)
        why[name] = reason
    return Selection(list(chosen.values()), missing, why)


def evaluate_gate(
    matrix: Matrix,
    *,
    baseline: Matrix | None = None,
    any_failure: bool = False,
    new_regressions: bool = False,
    no_data: bool = False,
    backends: Sequence[str] | None = None,
    by_build: bool = False,
    require_verified: bool = False,
) -> GateResult:
    if not (any_failure or new_regressions or no_data or require_verified):
        raise UsageError(
            "the gate needs a condition: --any-failure, --new-regressions, --no-data or --require-verified"
        )
    if require_verified and not any(c.provenance for c in matrix.columns):
        raise UsageError(
            "--require-verified: this matrix was merged without a trust file, so no column says who vouches for it",
            hint="merge with --trust trust.toml",
        )
    if new_regressions and baseline is None:
        raise UsageError("--new-regressions needs --baseline OLD_MATRIX")
    selection = select_columns(matrix, backends, no_data=no_data)
    columns = selection.columns
    regress_unjudged: dict[str, str] = {}
    result = GateResult(checked=[c.id for c in columns])
    for name in selection.missing:
        result.reasons.append((name, selection.why_missing[name]))
    if any_failure:
        for column in columns:
            tests = [f"{row.id} ({res.outcome.value})" for row, res in matrix.results(column.id) if res.is_bad]
            if tests:
                more = f" and {len(tests) - 3} more" if len(tests) > 3 else ""
                result.reasons.append((column.id, f"{len(tests)} failing test(s): {', '.join(tests[:3])}{more}"))
    if new_regressions and baseline is not None:
        report = diff_matrices(baseline, matrix, matching_pairs(baseline, matrix) if by_build else None)
        for column_id, change in regressions(report, result.checked):
            before = change.before.value if change.before else "absent"
            after = change.after.value if change.after else "absent"
            result.reasons.append((column_id, f"new regression {change.test} ({before} -> {after})"))
        judged = {c.new.id for c in report.columns if c.judged}
        paired = {c.new.id: c.old.id for c in report.columns}
        unjudged: dict[str, list[str]] = {}
        for column in columns:
            old = baseline.column(paired.get(column.id, column.id))
            if column.id in judged:
                continue
            if old is None:
                why = "not in the baseline, so nothing of them can be new"
            elif not old.has_data:
                why = "NO DATA in the baseline, so nothing of them can be new"
            else:
                why = "NO DATA now, so they show no regression"
            unjudged.setdefault(why, []).append(column.id)
        result.notes += [f"{', '.join(ids)}: {why}" for why, ids in unjudged.items()]
        regress_unjudged = {cid: why for why, ids in unjudged.items() for cid in ids}
        if not judged.intersection(result.checked) and not (any_failure or no_data):
            raise UsageError(
                "--new-regressions compared nothing: no selected column has results both here and in the baseline "
                f"({'; '.join(result.notes)})"
            )
    if no_data:
        for column in columns:
            if column.state is ColumnState.NO_DATA:
                result.reasons.append((column.id, f"NO DATA ({column.error or 'no test results'})"))
    if require_verified:
        for column in columns:
            if column.provenance is None:
                result.reasons.append((column.id, "unverified: no cell arrived, so nothing vouches for it"))
            elif not column.provenance.verified:
                result.reasons.append((column.id, column.provenance.describe()))
    for column in columns:  # what no condition could judge (--no-data, --require-verified judge every one)
        if no_data or require_verified:
            continue
        why = None
        if new_regressions and column.id in regress_unjudged and not (any_failure and column.has_data):
            why = regress_unjudged[column.id]
        elif any_failure and not new_regressions and not column.has_data:
            why = "NO DATA: no test results to judge"
        if why:
            result.not_judged[column.id] = why
    # A note is for a column judged otherwise; a column nothing judged is named once, on the PASS line.
    grouped: dict[str, list[str]] = {}
    for cid, why in regress_unjudged.items():
        if cid not in result.not_judged:
            grouped.setdefault(why, []).append(cid)
    result.notes = [f"{', '.join(ids)}: new regressions not judged: {why}" for why, ids in grouped.items()]
    if not result.judged and not result.reasons:
        raise UsageError(
            "the gate judged no column: " + "; ".join(f"{cid}: {why}" for cid, why in result.not_judged.items()),
            hint="merge cells with results, or add --no-data to fail on NO DATA",
        )
    if not backends:
        for column in matrix.columns:
            if not column.shipped:
                result.not_judged[column.id] = "not shipped upstream: nothing ran"
    return result
