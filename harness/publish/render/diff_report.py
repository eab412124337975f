"""Markdown for a diff report (harness/publish/column_diff.py): per column pair, features whose state moved,
then the tests by kind of change."""

from __future__ import annotations

from typing import Final

from harness.outcomes import BAD, Rollup
from harness.publish.column_diff import ChangeKind, ColumnDiff, DiffReport
from harness.publish.render.markdown import state_label
from harness.publish.render.mdtext import code, text

_TITLES: Final = {
    ChangeKind.NEWLY_FAILING: "Newly failing",
    ChangeKind.NEWLY_PASSING: "Newly passing",
    ChangeKind.NEWLY_SKIPPED: "Newly skipped",
    ChangeKind.ADDED: "Added",
    ChangeKind.REMOVED: "Removed",
    ChangeKind.CHANGED: "Other outcome changes",
}


def release_notes(column: ColumnDiff, names: dict[str, str] | None = None) -> list[str]:
    """What the newer build's release brought: its new rows, its device API against the older build's,
    and its public API where an API diff of the two releases was given (`harness diff --api-diff`)."""
    lines = []
    if column.new_features:
        rows = ", ".join(f"{text((names or {}).get(f, f))} ({code(f, table=False)})" for f in column.new_features)
        lines += ["", f"New rows in this release: {rows}."]
    api = column.device_api
    if api is not None:
        line = f"Device API: {text(api.summary(column.new.torch))} by the suites"
        if api.tested:
            line += " (" + ", ".join(code(a, table=False) for a in api.tested[:20]) + ")"
        untested = [a for a in api.added if a not in api.tested]
        if untested:
            more = f", … {len(untested) - 20} more" if len(untested) > 20 else ""
            line += "; not exercised: " + ", ".join(code(a, table=False) for a in untested[:20]) + more
        lines += ["", line + "."]
    if column.public_api is not None:
        lines += ["", f"Public API, read from the wheels: {text(column.public_api.summary())} by the suites."]
    return lines


def _pair_title(column: ColumnDiff) -> str:
    if column.old.id == column.new.id:
        torch = f" · torch {text(column.new.torch)}" if column.new.torch else ""
        if column.old.torch and column.old.torch != column.new.torch:
            torch = f" · torch {text(column.old.torch)} → {text(column.new.torch)}"
        return f"{text(column.new.display_name)} {code(column.new.id)}{torch}"
    if column.old.backend == column.new.backend and column.old.torch and column.new.torch:
        return f"{text(column.new.display_name)}: torch {text(column.old.torch)} → {text(column.new.torch)}"
    return f"{text(column.old.label())} → {text(column.new.label())}"


def render_diff_markdown(report: DiffReport, max_items: int = 200) -> str:
    lines = [
        "## Matrix diff",
        "",
        f"Baseline generated {report.old_generated_at}, new run generated {report.new_generated_at}.",
        "",
        "| Column | Newly failing | Newly passing | Newly skipped | Added | Removed | Other changes |",
        "|---|---|---|---|---|---|---|",
    ]
    for column in report.columns:
        counts = [str(len(column.changes[kind])) for kind in ChangeKind]
        lines.append(f"| {_pair_title(column)} | " + " | ".join(counts) + " |")
    for title, refs in (("Columns added", report.columns_added), ("Columns removed", report.columns_removed)):
        if refs:
            lines += [
                "",
                f"**{title}:** " + ", ".join(f"{text(c.display_name)} {code(c.id, table=False)}" for c in refs),
            ]
    for column in report.columns:
        moved = [c for c in column.features if c.changed]
        if not moved and not any(column.changes.values()) and not release_notes(column, report.feature_titles):
            continue
        lines += ["", f"### {_pair_title(column)}"]
        lines += release_notes(column, report.feature_titles)
        if moved:
            lines += ["", "| Feature | Before | After | Newly failing | Newly passing |", "|---|---|---|---|---|"]
            for change in moved:
                after = state_label(change.after)
                if change.before is Rollup.NOT_IN_RELEASE and change.after is not Rollup.NOT_IN_RELEASE:
                    after += " (arrived: the older build could not have it)"  # not a fix
                lines.append(
                    f"| {text(change.title)} ({code(change.feature)}) | {state_label(change.before)} | "
                    f"{after} | {change.newly_failing} | {change.newly_passing} |"
                )
        for kind in ChangeKind:
            entries = column.changes[kind]
            if not entries:
                continue
            lines += ["", f"**{_TITLES[kind]}** ({len(entries)})", ""]
            for entry in entries[:max_items]:
                before = entry.before.value if entry.before else "absent"
                after = entry.after.value if entry.after else "absent"
                msg = f": {text(entry.message)}" if entry.message and entry.after in BAD else ""
                lines.append(f"- {code(entry.test, table=False)} ({before} → {after}){msg}")
            if len(entries) > max_items:
                lines.append(f"- … and {len(entries) - max_items} more (see the JSON diff)")
    if report.regressions == 0 and not report.columns_removed:
        lines += ["", "No new regressions."]
    else:
        lines += ["", f"**{report.regressions} new regression(s).**"]
    return "\n".join(lines) + "\n"
