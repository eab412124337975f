"""Compare columns of two matrices (or two columns of one): what broke, what got fixed, what
appeared or vanished, test by test and feature by feature.

Columns are paired by id (a run against its baseline), or explicitly (release over release:
two torch builds of one backend). Per test (docs/publishing.md):
- newly failing: now failed/error/timeout/crashed, and before present with any other outcome;
- newly passing: now passed/xpassed/flaky, and before present with an outcome outside those;
- newly skipped: now skipped, before present and not skipped;
- added / removed: the test has a result in only one of the two columns. An added test that
  fails is listed as added (with its outcome) and counts as a regression;
- a column present in only one matrix is reported as a column added/removed, not per test;
- regressions are judged only where both columns have results: a column that was or is NO DATA
  (or not shipped) has nothing to regress from. A known issue (xfailed, or skipped as
  `known-issue`) is never a failing outcome, so it is never a regression either.
Per feature: the roll-up state before and after, and how many of its tests newly fail/pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Final

from harness.api_changes import ApiDiff
from harness.model import Column, ColumnState, Matrix, TestResult, TestRow
from harness.outcomes import BAD, GOOD, Outcome, Rollup
from harness.torch_build import parse_variant, parse_version, version_sort_key

_NO_RESULTS: Final = frozenset({ColumnState.NO_DATA.value, ColumnState.NOT_SHIPPED.value})


class ChangeKind(StrEnum):
    NEWLY_FAILING = "newly_failing"
    NEWLY_PASSING = "newly_passing"
    NEWLY_SKIPPED = "newly_skipped"
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


@dataclass(frozen=True, slots=True)
class Change:
    test: str
    feature: str
    before: Outcome | None
    after: Outcome | None
    message: str | None = None

    @property
    def is_regression(self) -> bool:
        return self.after in BAD and (self.before is None or self.before not in BAD)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "test": self.test,
            "feature": self.feature,
            "before": self.before.value if self.before else None,
            "after": self.after.value if self.after else None,
        }
        if self.message is not None:
            data["message"] = self.message
        return data


@dataclass(frozen=True, slots=True)
class FeatureChange:
    feature: str
    title: str
    before: Rollup | None  # None: the older column had no such row (a new feature), never "NO DATA"
    after: Rollup
    newly_failing: int
    newly_passing: int

    @property
    def changed(self) -> bool:
        return self.before is not self.after or bool(self.newly_failing or self.newly_passing)

    def to_json(self) -> dict[str, Any]:
        return {
            "feature": self.feature,
            "title": self.title,
            "before": self.before.value if self.before else None,
            "after": self.after.value,
            "newly_failing": self.newly_failing,
            "newly_passing": self.newly_passing,
        }


@dataclass(frozen=True, slots=True)
class ColumnRef:
    id: str
    backend: str
    display_name: str
    state: str
    torch: str | None

    @classmethod
    def of(cls, column: Column) -> ColumnRef:
        return cls(column.id, column.backend, column.heading, column.state.value, column.environment.torch)

    def label(self) -> str:
        return f"{self.display_name} {self.id}" + (f" (torch {self.torch})" if self.torch else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "backend": self.backend,
            "display_name": self.display_name,
            "state": self.state,
            "torch": self.torch,
        }


@dataclass(frozen=True, slots=True)
class ApiChange:
    """What the device API of the newer torch added and dropped against the older one, and which of
    the new names the suites exercise (a feature's `apis` in suites/features.toml)."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    tested: tuple[str, ...]  # of `added`

    def summary(self, version: str | None) -> str:
        """'2.15.0: 14 new device APIs, 9 tested'."""
        head = f"{version}: " if version else ""
        text = f"{head}{len(self.added)} new device API{'s' if len(self.added) != 1 else ''}, {len(self.tested)} tested"
        return text + (f", {len(self.removed)} gone" if self.removed else "")

    def to_json(self) -> dict[str, Any]:
        return {"added": list(self.added), "removed": list(self.removed), "tested": list(self.tested)}


@dataclass(frozen=True, slots=True)
class ColumnDiff:
    old: ColumnRef
    new: ColumnRef
    changes: dict[ChangeKind, list[Change]]
    features: list[FeatureChange]
    new_features: list[str] = field(default_factory=list)  # rows new in the newer column's release
    device_api: ApiChange | None = None  # None: a column says nothing of its device API
    public_api: ApiDiff | None = None  # the wheels' public API diff of these two releases, where one was given

    @property
    def id(self) -> str:
        return self.new.id

    @property
    def judged(self) -> bool:
        """Both sides have results: a column that was (or is) NO DATA has nothing to regress from."""
        return self.old.state not in _NO_RESULTS and self.new.state not in _NO_RESULTS

    @property
    def regressions(self) -> list[Change]:
        if not self.judged:
            return []
        kinds = (ChangeKind.NEWLY_FAILING, ChangeKind.ADDED)
        return [c for kind in kinds for c in self.changes[kind] if c.is_regression]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.new.id,
            "backend": self.new.backend,
            "display_name": self.new.display_name,
            "old": self.old.to_json(),
            "new": self.new.to_json(),
            "state_before": self.old.state,
            "state_after": self.new.state,
            "regressions": len(self.regressions),
            "features": [f.to_json() for f in self.features if f.changed],
            "new_features": list(self.new_features),
            "device_api": self.device_api.to_json() if self.device_api else None,
            "public_api": _public_api_json(self.public_api),
            "changes": {kind.value: [c.to_json() for c in changes] for kind, changes in self.changes.items()},
        }


@dataclass(frozen=True, slots=True)
class DiffReport:
    old_generated_at: str
    new_generated_at: str
    columns: list[ColumnDiff]
    columns_added: list[ColumnRef] = field(default_factory=list)
    columns_removed: list[ColumnRef] = field(default_factory=list)
    feature_titles: dict[str, str] = field(default_factory=dict)  # of the newer matrix, for the text

    @property
    def regressions(self) -> int:
        return sum(len(c.regressions) for c in self.columns)

    def to_json(self) -> dict[str, Any]:
        return {
            "old_generated_at": self.old_generated_at,
            "new_generated_at": self.new_generated_at,
            "columns_added": [c.to_json() for c in self.columns_added],
            "columns_removed": [c.to_json() for c in self.columns_removed],
            "columns": [c.to_json() for c in self.columns],
            "regressions": self.regressions,
        }


def classify(old: TestResult | None, new: TestResult | None) -> ChangeKind | None:
    """The change kind for one (column, test) pair, or None when nothing changed."""
    if old is None and new is None:
        return None
    if old is None:
        return ChangeKind.ADDED
    if new is None:
        return ChangeKind.REMOVED
    before, after = old.outcome, new.outcome
    if before is after:
        return None
    if after in BAD:
        return ChangeKind.NEWLY_FAILING if before not in BAD else ChangeKind.CHANGED
    if after in GOOD:
        return ChangeKind.NEWLY_PASSING if before not in GOOD else ChangeKind.CHANGED
    if after is Outcome.SKIPPED:
        return ChangeKind.NEWLY_SKIPPED
    return ChangeKind.CHANGED


def _first_line(text: str | None) -> str | None:
    if not text or not text.strip():
        return None
    return text.strip().splitlines()[0][:300]


def _changes(
    old: Matrix, old_id: str, new: Matrix, new_id: str, old_rows: dict[str, TestRow]
) -> list[tuple[str, str, TestResult | None, TestResult | None]]:
    """(test, feature, before, after) for every test whose result differs between the two columns,
    by test id. One pass over each matrix's rows: 20 column pairs x 50,000 tests take a second."""
    found: list[tuple[str, str, TestResult | None, TestResult | None]] = []
    seen: set[str] = set()
    for row in new.tests:
        after = row.results.get(new_id)
        old_row = old_rows.get(row.id)
        before = old_row.results.get(old_id) if old_row is not None else None
        if old_row is not None:
            seen.add(row.id)
        if before is after or (before is not None and after is not None and before.outcome is after.outcome):
            continue  # unchanged (or absent from both)
        found.append((row.id, row.feature, before, after))
    for row in old.tests:
        if row.id not in seen:
            before = row.results.get(old_id)
            if before is not None:
                found.append((row.id, row.feature, before, None))
    found.sort(key=lambda change: change[0])
    return found


def diff_columns(
    old: Matrix, old_column: Column, new: Matrix, new_column: Column, old_rows: dict[str, TestRow] | None = None
) -> ColumnDiff:
    """Every change between one column of `old` and one column of `new`."""
    rows = old_rows if old_rows is not None else {row.id: row for row in old.tests}
    changes: dict[ChangeKind, list[Change]] = {kind: [] for kind in ChangeKind}
    per_feature: dict[str, list[int]] = {}
    for test_id, feature, old_result, new_result in _changes(old, old_column.id, new, new_column.id, rows):
        kind = classify(old_result, new_result)
        if kind is None:
            continue
        message = _first_line(new_result.message) if new_result is not None and new_result.is_bad else None
        change = Change(
            test=test_id,
            feature=feature,
            before=old_result.outcome if old_result else None,
            after=new_result.outcome if new_result else None,
            message=message,
        )
        changes[kind].append(change)
        tally = per_feature.setdefault(feature, [0, 0])
        if change.is_regression:
            tally[0] += 1
        elif kind is ChangeKind.NEWLY_PASSING:
            tally[1] += 1
    features = []
    for feature in new.features:
        old_cell, new_cell = old.cell(feature.id, old_column.id), new.cell(feature.id, new_column.id)
        failing, passing = per_feature.get(feature.id, (0, 0))
        features.append(
            FeatureChange(
                feature=feature.id,
                title=feature.title,
                before=old_cell.state if old_cell else None,
                after=new_cell.state if new_cell else Rollup.NO_DATA,
                newly_failing=failing,
                newly_passing=passing,
            )
        )
    return ColumnDiff(
        old=ColumnRef.of(old_column),
        new=ColumnRef.of(new_column),
        changes=changes,
        features=features,
        new_features=new_in_release(new, old_column, new_column),
        device_api=api_change(new, old_column, new_column),
    )


def new_in_release(matrix: Matrix, old: Column, new: Column) -> list[str]:
    """Feature rows the newer column's release introduced (`since` is that release, and the older
    column is of an earlier one)."""
    release, before = new.release_series, old.release_series
    if not release or release == before:
        return []
    return [f.id for f in matrix.features if f.since == release]


def api_change(matrix: Matrix, old: Column, new: Column) -> ApiChange | None:
    """The device API the newer torch added and dropped, and which new names the suites exercise."""
    if not old.device_api or not new.device_api:
        return None
    before, after = old.device_api_names(), new.device_api_names()
    if before == after:
        return None  # the same device API: nothing to say
    exercised = {api for feature in matrix.features for api in feature.apis}
    added = sorted(after - before)
    return ApiChange(
        added=tuple(added), removed=tuple(sorted(before - after)), tested=tuple(a for a in added if a in exercised)
    )


def diff_matrices(old: Matrix, new: Matrix, pairs: Sequence[tuple[str, str]] | None = None) -> DiffReport:
    """Columns paired by id (or by `pairs` of old id -> new id)."""
    old_columns = {c.id: c for c in old.columns}
    new_columns = {c.id: c for c in new.columns}
    if pairs is None:
        pairs = [(cid, cid) for cid in new_columns if cid in old_columns]
    paired_old = {a for a, _ in pairs}
    paired_new = {b for _, b in pairs}
    same = old is new  # builds of one matrix compared with each other: nothing comes or goes
    rows = {row.id: row for row in old.tests}
    return DiffReport(
        old_generated_at=old.generated_at,
        new_generated_at=new.generated_at,
        columns=[diff_columns(old, old_columns[a], new, new_columns[b], rows) for a, b in pairs],
        columns_added=[] if same else [ColumnRef.of(c) for cid, c in new_columns.items() if cid not in paired_new],
        columns_removed=[] if same else [ColumnRef.of(c) for cid, c in old_columns.items() if cid not in paired_old],
        feature_titles={f.id: f.title for f in new.features},
    )


def release_pairs(matrix: Matrix, backend: str | None = None) -> list[tuple[str, str]]:
    """Release over release: each column paired with the column of the previous torch version on
    the same release line (where the tests ran: the CPU for the CPU build and every CPU-only
    column, else the family and the device; see Column.release_line). Of several columns of that
    previous version, the one of the same backend, else the first in the matrix's order. With
    `backend` (a variant id or family name), only steps into that backend's columns.

    A release candidate (test channel) or a final release stands beside the previous *final*
    release, never beside a nightly: 2.16.0's candidate is compared with 2.15.0. A nightly steps
    from the version before it, nightly or final."""
    lines: dict[tuple[str, str, str], dict[tuple, list[Column]]] = {}
    for column in matrix.columns:
        if column.has_data and column.torch:
            # Builds of one torch version (2.13.0+cpu, 2.13.0+cu130) are one step of the line.
            key = version_sort_key(column.torch.partition("+")[0])
            lines.setdefault(column.release_line, {}).setdefault(key, []).append(column)
    pairs: list[tuple[str, str]] = []
    for versions in lines.values():
        ordered = [versions[key] for key in sorted(versions)]
        for index, newer in enumerate(ordered[1:], start=1):
            for column in newer:
                if backend is not None and backend not in (column.backend, _family(column.backend)):
                    continue
                earlier = ordered[:index] if channel_of(column) == "nightly" else _finals(ordered[:index])
                if not earlier:
                    continue
                older = earlier[-1]
                previous = next((c for c in older if c.backend == column.backend), older[0])
                pairs.append((previous.id, column.id))
    return pairs


def channel_of(column: Column) -> str:
    """The column's channel as recorded, else as its torch version says (.devN: nightly; rcN: test)."""
    if column.channel:
        return column.channel
    version = parse_version(column.torch)
    if version is not None and version.dev >= 0:
        return "nightly"
    return "test" if version is not None and version.pre else "release"


def _finals(groups: Sequence[list[Column]]) -> list[list[Column]]:
    """The groups' final-release columns (groups without one left out)."""
    kept = [[c for c in group if channel_of(c) == "release"] for group in groups]
    return [group for group in kept if group]


def _family(backend: str) -> str:
    variant = parse_variant(backend)
    return variant.family if variant else backend


def build_pairs(old: Matrix, new: Matrix) -> list[tuple[str, str]]:
    """Columns of two matrices paired by backend and variant (each build key once in each)."""
    olds: dict[tuple[str, str], list[Column]] = {}
    for column in old.columns:
        olds.setdefault(column.build_key, []).append(column)
    news: dict[tuple[str, str], list[Column]] = {}
    for column in new.columns:
        news.setdefault(column.build_key, []).append(column)
    return [(olds[key][-1].id, cols[-1].id) for key, cols in news.items() if key in olds]


def matching_pairs(old: Matrix, new: Matrix) -> list[tuple[str, str]]:
    """Each column of `new` with its counterpart in `old`: the column of the same id; else, of the same
    backend and variant, the one with the same torch build; else the newest of them with results (a
    pull request's `cpu` column against a nightly's `cpu-2.13.0`). Each old column pairs once."""
    taken: set[str] = set()
    pairs: list[tuple[str, str]] = []
    by_id = {c.id: c for c in old.columns}
    for column in new.columns:
        found = by_id.get(column.id)
        if found is None or found.id in taken:
            same = [c for c in old.columns if c.build_key == column.build_key and c.id not in taken]
            found = next((c for c in same if column.torch and c.torch == column.torch), None) or next(
                (c for c in reversed(same) if c.has_data), None
            )
        if found is not None:
            taken.add(found.id)
            pairs.append((found.id, column.id))
    return pairs


def regressions(report: DiffReport, columns: Iterable[str] | None = None) -> list[tuple[str, Change]]:
    """(column id, change) for every newly failing or added-and-failing test."""
    wanted = set(columns) if columns is not None else None
    return [
        (column.id, change)
        for column in report.columns
        if wanted is None or column.id in wanted
        for change in column.regressions
    ]


def _public_api_json(diff: ApiDiff | None) -> dict[str, Any] | None:
    if diff is None:
        return None
    return {"old": diff.old_version, "new": diff.new_version, "added": diff.added, "tested": diff.tested}


def with_public_api(report: DiffReport, diffs: Sequence[ApiDiff]) -> DiffReport:
    """The report with each column pair given the API diff (`harness api-diff`) of its two torch
    versions, where one of `diffs` is for exactly those two (local tags such as +cu130 aside)."""
    columns = []
    for column in report.columns:
        old, new = column.old.torch, column.new.torch
        found = next((d for d in diffs if old and new and d.is_for(old, new)), None)
        columns.append(replace(column, public_api=found) if found is not None else column)
    return replace(report, columns=columns)
