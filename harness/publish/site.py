"""Publish a matrix as a static site: index.html, matrix.json, badges/*.svg and history/.

The run's summary is appended to history/ (never rewriting an earlier one) before the page is
drawn, so the page's trend includes this run. With $GITHUB_STEP_SUMMARY set, the Markdown
summary is appended there within GitHub's 1 MiB limit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from harness import jsonio
from harness.matrix_json import write_matrix
from harness.model import Matrix
from harness.publish.history import RunSummary, append_run, load_history
from harness.publish.render.badge import badges
from harness.publish.render.html import DEFAULT_STALE_AFTER_HOURS, render_html
from harness.publish.render.markdown import GITHUB_SUMMARY_LIMIT, render_markdown

_SUMMARY_NOTE_RESERVE = 512  # bytes kept free for the "no room" note


@dataclass
class Published:
    site: Path
    files: list[Path] = field(default_factory=list)
    history_entry: Path | None = None  # None when this run was already recorded
    history_runs: int = 0
    summary_bytes: int = 0
    problems: list[str] = field(default_factory=list)


def write_step_summary(matrix: Matrix, path: Path, page_url: str = "") -> int:
    """Append the Markdown summary to the step summary file, keeping the file within 1 MiB."""
    used = path.stat().st_size if path.exists() else 0
    room = GITHUB_SUMMARY_LIMIT - used
    link = f"\nFull matrix: {page_url}\n" if page_url else ""
    if room < _SUMMARY_NOTE_RESERVE + len(link.encode()):
        return 0
    text = render_markdown(matrix, limit=room - len(link.encode("utf-8"))) + link
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)
    return len(text.encode("utf-8"))


def publish(
    matrix: Matrix,
    site: Path,
    *,
    stale_after_hours: float = DEFAULT_STALE_AFTER_HOURS,
    history: bool = True,
    page_url: str = "",
) -> Published:
    site.mkdir(parents=True, exist_ok=True)
    result = Published(site=site)
    runs: list[RunSummary] = []
    if history:
        result.history_entry = append_run(site / "history", matrix)
        runs = load_history(site / "history", problems=result.problems)
        result.history_runs = len(runs)
    write_matrix(matrix, site / "matrix.json")
    result.files.append(site / "matrix.json")
    badge_dir = site / "badges"
    badge_dir.mkdir(exist_ok=True)
    for name, svg in badges(matrix).items():
        (badge_dir / name).write_text(svg, encoding="utf-8")
        result.files.append(badge_dir / name)
    page = site / "index.html"
    html = render_html(matrix, history=runs, stale_after_hours=stale_after_hours).encode("utf-8")
    jsonio.write_atomic(page, lambda handle: handle.write(html))
    result.files.append(page)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        result.summary_bytes = write_step_summary(matrix, Path(summary), page_url)
    return result
