"""The pull request comment: the columns a pull request ran (the CPU cell on GitHub's runners) compared
with the last published matrix, and the columns it could not run (GPU cells) taken from that run and
marked so. Features and tests newly failing or passing, per backend. A hidden marker identifies the
comment, so every push updates the one comment in place. Kept under GitHub's 65,536 characters."""

from __future__ import annotations

from typing import Final

from harness.model import Column, Matrix
from harness.outcomes import BAD
from harness.publish.column_diff import ChangeKind, ColumnDiff, DiffReport, diff_matrices, matching_pairs
from harness.publish.render.markdown import state_label
from harness.publish.render.mdtext import code, link, text
from harness.publish.render.vouching import vouch_section

MARKER: Final = "<!-- torch-compat:pr-matrix -->"
COMMENT_LIMIT: Final = 65_536  # GitHub refuses longer comment bodies
_LIST_CAP: Final = 30  # tests listed per kind and column; the rest are counted


def _score(column: Column) -> str:
    if column.score is None:
        return "NO DATA" if column.shipped else "not shipped"
    return f"{column.score.supported}/{column.score.judged} supported"


def _torch(column: Column) -> str:
    return f" (torch {text(column.torch)})" if column.torch and column.has_data else ""


def compare(published: Matrix, pr: Matrix) -> DiffReport:
    """The pull request's columns against the published ones (`matching_pairs`)."""
    return diff_matrices(published, pr, matching_pairs(published, pr))


def render_comment(pr: Matrix, published: Matrix | None, published_url: str = "", *, cap: int = _LIST_CAP) -> str:
    """The comment's Markdown, marker first."""
    lines = [MARKER, "## PyTorch compatibility matrix: this pull request", ""]
    if published is None:
        lines += ["No published matrix to compare with yet: these are the pull request's own results.", ""]
        report = None
    else:
        where = f" ({link('page', published_url)})" if published_url else ""
        lines += [f"Compared with the last published matrix, generated {text(published.generated_at)}{where}.", ""]
        report = compare(published, pr)
    diffs = {d.new.id: d for d in report.columns} if report else {}
    lines += [
        "| Backend | Column | Results from | Features | Newly failing | Newly passing |",
        "|---|---|---|---|---|---|",
    ]
    for column in pr.columns:
        diff = diffs.get(column.id)
        failing = str(len(diff.regressions)) if diff and diff.judged else "–"
        passing = str(len(diff.changes[ChangeKind.NEWLY_PASSING])) if diff and diff.judged else "–"
        lines.append(
            f"| {text(column.heading)} | {code(column.id)} | this pull request{_torch(column)} | {_score(column)} "
            f"| {failing} | {passing} |"
        )
    ran = {d.old.id for d in report.columns} if report else set()
    for column in published.columns if published else ():
        if column.id in ran or not column.shipped:
            continue
        lines.append(
            f"| {text(column.heading)} | {code(column.id)} | _the published run_{_torch(column)} "
            f"| {_score(column)} | – | – |"
        )
    if published is not None and any(c.id not in ran and c.shipped for c in published.columns):
        lines += [
            "",
            "_Columns marked “the published run” are not run on pull requests (they need self-hosted GPU "
            "runners): their results are the last published ones, not this pull request's._",
        ]
    for diff in report.columns if report else ():
        lines += _column_section(diff, cap)
    lines += vouch_section(pr)
    if report is not None:
        total = report.regressions
        lines += [
            "",
            f"**{total} new regression(s)** against the published matrix." if total else "No new regressions.",
        ]
    return _fit("\n".join(lines) + "\n")


def _column_section(diff: ColumnDiff, cap: int) -> list[str]:
    if not diff.judged:
        state = diff.new.state if diff.new.state in ("no-data", "not-shipped") else diff.old.state
        return [
            "",
            f"### {text(diff.new.display_name)} {code(diff.new.id, table=False)}",
            "",
            f"Not compared: {state}.",
        ]
    failing = diff.regressions
    passing = diff.changes[ChangeKind.NEWLY_PASSING]
    changed = [f for f in diff.features if f.changed]
    if not (failing or passing or changed):
        return []
    title = f"{text(diff.new.display_name)} {code(diff.new.id, table=False)}"
    lines = ["", f"### {title}: {len(failing)} newly failing, {len(passing)} newly passing"]
    if changed:
        lines += [
            "",
            "| Feature | Published | This pull request | Newly failing | Newly passing |",
            "|---|---|---|---|---|",
        ]
        for change in changed:
            lines.append(
                f"| {text(change.title)} ({code(change.feature)}) | {state_label(change.before)} | "
                f"{state_label(change.after)} | {change.newly_failing} | {change.newly_passing} |"
            )
    for title_text, entries in (("Newly failing", failing), ("Newly passing", passing)):
        if not entries:
            continue
        lines += ["", f"**{title_text}** ({len(entries)})", ""]
        for entry in entries[:cap]:
            before = entry.before.value if entry.before else "absent"
            after = entry.after.value if entry.after else "absent"
            message = f": {text(entry.message)}" if entry.message and entry.after in BAD else ""
            lines.append(f"- {code(entry.test, table=False)} ({before} → {after}){message}")
        if len(entries) > cap:
            lines.append(f"- … and {len(entries) - cap} more (in the run's matrix artifact)")
    return lines


def _fit(body: str) -> str:
    """Within GitHub's limit: cut at a line, and say so."""
    if len(body) <= COMMENT_LIMIT:
        return body
    note = "\n\n… (cut to fit GitHub's comment limit; the run's matrix artifact has everything)\n"
    cut = body[: COMMENT_LIMIT - len(note)]
    return cut[: cut.rfind("\n")] + note
