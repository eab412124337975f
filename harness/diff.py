"""Compare two matrices cell by cell: what broke, what got fixed, what appeared or vanished.

A result is keyed by (column id, test id). Rules (docs/publishing.md):
- newly failing: now failed/error/timeout/crashed, and before present with any other outcome;
- newly passing: now passed/xpassed/flaky, and before present with an outcome outside those;
- newly skipped: now skipped, before present and not skipped;
- added / removed: the test has a result on that column in only one of the two matrices. An
  added test that fails is listed as added (with its outcome) and counts as a regression;
- a column present in only one matrix is reported as a column added/removed, not per test.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from harness.outcomes import BAD, GOOD, Outcome
from harness.render.markdown import escape_cell, escape_code

CHANGE_KINDS: Final = ("newly_failing", "newly_passing", "newly_skipped", "added", "removed", "changed")
_BAD: Final = frozenset(o.value for o in BAD)
_GOOD: Final = frozenset(o.value for o in GOOD)


def _results(matrix: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """column id -> test id -> result."""
    by_column: dict[str, dict[str, dict[str, Any]]] = {c["id"]: {} for c in matrix["columns"]}
    for test in matrix["tests"]:
        for column_id, result in test["results"].items():
            by_column.setdefault(column_id, {})[test["id"]] = result | {"feature": test["feature"]}
    return by_column


def _entry(test_id: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any]:
    latest = new or old or {}
    entry: dict[str, Any] = {
        "test": test_id,
        "feature": latest.get("feature"),
        "before": old["outcome"] if old else None,
        "after": new["outcome"] if new else None,
    }
    if new and new.get("message"):
        entry["message"] = new["message"].strip().splitlines()[0][:300] if new["message"].strip() else ""
    return entry


def classify(old: dict[str, Any] | None, new: dict[str, Any] | None) -> str | None:
    """The change kind for one (column, test) pair, or None when nothing changed."""
    if old is None and new is None:
        return None
    if old is None:
        return "added"
    if new is None:
        return "removed"
    before, after = old["outcome"], new["outcome"]
    if before == after:
        return None
    if after in _BAD:
        return "newly_failing" if before not in _BAD else "changed"
    if after in _GOOD:
        return "newly_passing" if before not in _GOOD else "changed"
    if after == Outcome.SKIPPED.value:
        return "newly_skipped"
    return "changed"


def diff_matrices(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A JSON-ready report: per column, the changed tests by kind; columns added/removed."""
    old_results, new_results = _results(old), _results(new)
    old_columns = {c["id"]: c for c in old["columns"]}
    new_columns = {c["id"]: c for c in new["columns"]}
    columns: list[dict[str, Any]] = []
    for column_id, column in new_columns.items():
        if column_id not in old_columns:
            continue
        before, after = old_results.get(column_id, {}), new_results.get(column_id, {})
        changes: dict[str, list[dict[str, Any]]] = {kind: [] for kind in CHANGE_KINDS}
        for test_id in sorted(set(before) | set(after)):
            kind = classify(before.get(test_id), after.get(test_id))
            if kind:
                changes[kind].append(_entry(test_id, before.get(test_id), after.get(test_id)))
        regressions = len(changes["newly_failing"]) + sum(1 for e in changes["added"] if e["after"] in _BAD)
        columns.append(
            {
                "id": column_id,
                "backend": column["backend"],
                "display_name": column["display_name"],
                "state_before": old_columns[column_id]["state"],
                "state_after": column["state"],
                "regressions": regressions,
                "changes": changes,
            }
        )
    return {
        "old_generated_at": old.get("generated_at"),
        "new_generated_at": new.get("generated_at"),
        "columns_added": [_column_ref(c) for cid, c in new_columns.items() if cid not in old_columns],
        "columns_removed": [_column_ref(c) for cid, c in old_columns.items() if cid not in new_columns],
        "columns": columns,
        "regressions": sum(c["regressions"] for c in columns),
    }


def _column_ref(column: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": column["id"],
        "backend": column["backend"],
        "display_name": column["display_name"],
        "state": column["state"],
    }


def regressions(report: dict[str, Any], columns: Iterable[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(column id, entry) for every newly failing or added-and-failing test."""
    wanted = set(columns) if columns is not None else None
    found = []
    for column in report["columns"]:
        if wanted is not None and column["id"] not in wanted:
            continue
        for entry in column["changes"]["newly_failing"]:
            found.append((column["id"], entry))
        for entry in column["changes"]["added"]:
            if entry["after"] in _BAD:
                found.append((column["id"], entry))
    return found


_TITLES: Final = {
    "newly_failing": "Newly failing",
    "newly_passing": "Newly passing",
    "newly_skipped": "Newly skipped",
    "added": "Added",
    "removed": "Removed",
    "changed": "Other outcome changes",
}


def render_diff_markdown(report: dict[str, Any], max_items: int = 200) -> str:
    lines = [
        "## Matrix diff",
        "",
        f"Baseline generated {report['old_generated_at']}, new run generated {report['new_generated_at']}.",
        "",
        "| Column | Newly failing | Newly passing | Newly skipped | Added | Removed | Other changes |",
        "|---|---|---|---|---|---|---|",
    ]
    for column in report["columns"]:
        counts = [str(len(column["changes"][kind])) for kind in CHANGE_KINDS]
        lines.append(f"| {escape_cell(column['display_name'])} `{column['id']}` | " + " | ".join(counts) + " |")
    for title, refs in (("Columns added", report["columns_added"]), ("Columns removed", report["columns_removed"])):
        if refs:
            lines += ["", f"**{title}:** " + ", ".join(f"{escape_cell(c['display_name'])} `{c['id']}`" for c in refs)]
    for column in report["columns"]:
        if not any(column["changes"].values()):
            continue
        lines += ["", f"### {escape_cell(column['display_name'])} `{column['id']}`"]
        for kind in CHANGE_KINDS:
            entries = column["changes"][kind]
            if not entries:
                continue
            lines += ["", f"**{_TITLES[kind]}** ({len(entries)})", ""]
            for entry in entries[:max_items]:
                move = f"{entry['before'] or 'absent'} → {entry['after'] or 'absent'}"
                msg = f": {escape_cell(entry['message'])}" if entry.get("message") and entry["after"] in _BAD else ""
                lines.append(f"- `{escape_code(entry['test'])}` ({move}){msg}")
            if len(entries) > max_items:
                lines.append(f"- … and {len(entries) - max_items} more (see the JSON diff)")
    if report["regressions"] == 0 and not report["columns_removed"]:
        lines += ["", "No new regressions."]
    else:
        lines += ["", f"**{report['regressions']} new regression(s).**"]
    return "\n".join(lines) + "\n"
