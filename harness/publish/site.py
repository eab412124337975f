"""Publish a matrix as a static site:

    index.html            the page (holding its test data when small; else data/ beside it)
    data/                 the page's parts (harness/publish/render/page_parts.py), rewritten each time
    matrix.json.gz        the matrix, always; matrix.json too while it stays under SITE_FILE_LIMIT
    diff.md, diff.json    the changes since the previous publication (its matrix is the baseline)
    badges/*.svg          one per column and one for the matrix
    history/              one summary and the per-test results per run, appended, never rewritten

The run's summary is appended to history/ (never rewriting an earlier one) before the page is drawn,
so the page's trend includes this run. With $GITHUB_STEP_SUMMARY set, the Markdown summary is
appended there within GitHub's 1 MiB limit. No file of the site exceeds SITE_FILE_LIMIT: GitHub
warns at 50 MB per file and refuses 100 MB.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from harness import jsonio
from harness.matrix_json import write_matrix, write_matrix_gzip
from harness.model import Matrix
from harness.publish.diff import ChangeKind, DiffReport, diff_matrices
from harness.publish.history import RunResults, RunSummary, append_run, load_history, load_results
from harness.publish.render.badge import badges
from harness.publish.render.diffmd import render_diff_markdown
from harness.publish.render.html import DATA_DIR, DEFAULT_STALE_AFTER_HOURS, HISTORY_WINDOW, render_page
from harness.publish.render.markdown import GITHUB_SUMMARY_LIMIT, render_markdown

SITE_FILE_LIMIT: Final = 25 * 1024 * 1024  # no site file above this (GitHub warns at 50 MB, refuses 100)
INLINE_LIMIT: Final = 4 * 1024 * 1024  # the page holds its test data up to this size, else data/ beside it
_SUMMARY_NOTE_RESERVE = 512  # bytes kept free for the "no room" note


@dataclass
class Published:
    site: Path
    files: list[Path] = field(default_factory=list)
    history_entry: Path | None = None  # None when this run was already recorded
    history_runs: int = 0
    summary_bytes: int = 0
    diff: DiffReport | None = None  # against the baseline, when there was one
    page_parts: int = 0  # files in data/ (0: the page holds its data)
    problems: list[str] = field(default_factory=list)


def write_step_summary(matrix: Matrix, path: Path, page_url: str = "", diff: DiffReport | None = None) -> int:
    """Append the Markdown summary to the step summary file, keeping the file within 1 MiB."""
    used = path.stat().st_size if path.exists() else 0
    room = GITHUB_SUMMARY_LIMIT - used
    link = f"\nFull matrix: {page_url}\n" if page_url else ""
    since = _diff_line(diff, page_url)
    reserved = len(link.encode()) + len(since.encode())
    if room < _SUMMARY_NOTE_RESERVE + reserved:
        return 0
    text = render_markdown(matrix, limit=room - reserved) + since + link
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)
    return len(text.encode("utf-8"))


def _diff_line(diff: DiffReport | None, page_url: str) -> str:
    if diff is None:
        return ""
    passing = sum(len(c.changes[ChangeKind.NEWLY_PASSING]) for c in diff.columns)
    where = f" ({page_url}diff.md)" if page_url.endswith("/") else ""
    return (
        f"\nSince the previous publication ({diff.old_generated_at}): {diff.regressions} new regression(s), "
        f"{passing} test(s) newly passing{where}.\n"
    )


def _write_diff(site: Path, diff: DiffReport | None) -> list[Path]:
    paths = [site / "diff.json", site / "diff.md"]
    if diff is None:  # nothing to compare with: an old diff must not pass for this run's
        for path in paths:
            path.unlink(missing_ok=True)
        return []
    jsonio.write_atomic(paths[0], lambda handle: handle.write(jsonio.dumps_pretty(diff.to_json()) + b"\n"))
    text = render_diff_markdown(diff)
    jsonio.write_atomic(paths[1], lambda handle: handle.write(text.encode("utf-8")))
    return paths


def _write_matrix(site: Path, matrix: Matrix) -> list[Path]:
    """matrix.json.gz always; matrix.json as well while it is under the limit (else an older one goes)."""
    write_matrix_gzip(matrix, site / "matrix.json.gz")
    plain = site / "matrix.json"
    write_matrix(matrix, plain)
    if plain.stat().st_size > SITE_FILE_LIMIT:
        plain.unlink()
        return [site / "matrix.json.gz"]
    return [site / "matrix.json.gz", plain]


def _write_page(site: Path, html: str, files: dict[str, bytes]) -> list[Path]:
    data = site / DATA_DIR
    fresh = site / f".{DATA_DIR}.new"
    shutil.rmtree(fresh, ignore_errors=True)
    written = []
    if files:
        fresh.mkdir()
        for name, body in files.items():
            (fresh / f"{name}.json").write_bytes(body)
            written.append(data / f"{name}.json")
    # The parts first, then the page that names them: a reader never meets a page without its data.
    shutil.rmtree(data, ignore_errors=True)
    if files:
        os.replace(fresh, data)
    page = site / "index.html"
    body = html.encode("utf-8")
    jsonio.write_atomic(page, lambda handle: handle.write(body))
    return [*written, page]


def publish(
    matrix: Matrix,
    site: Path,
    *,
    stale_after_hours: float = DEFAULT_STALE_AFTER_HOURS,
    history: bool = True,
    page_url: str = "",
    baseline: Matrix | None = None,
    inline_limit: int = INLINE_LIMIT,
) -> Published:
    site.mkdir(parents=True, exist_ok=True)
    result = Published(site=site)
    runs: list[RunSummary] = []
    results: list[RunResults | None] = []
    if history:
        result.history_entry = append_run(site / "history", matrix)
        runs = load_history(site / "history", problems=result.problems)
        result.history_runs = len(runs)
        window = runs[-HISTORY_WINDOW:]
        results = [None] * (len(runs) - len(window)) + load_results(site / "history", window, result.problems)
    if baseline is not None:
        result.diff = diff_matrices(baseline, matrix)
    result.files += _write_diff(site, result.diff)
    result.files += _write_matrix(site, matrix)
    badge_dir = site / "badges"
    badge_dir.mkdir(exist_ok=True)
    for name, svg in badges(matrix).items():
        (badge_dir / name).write_text(svg, encoding="utf-8")
        result.files.append(badge_dir / name)
    page = render_page(
        matrix,
        history=runs,
        results=results,
        stale_after_hours=stale_after_hours,
        inline_limit=inline_limit,
        site=True,
    )
    result.page_parts = len(page.files)
    result.files += _write_page(site, page.html, page.files)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        result.summary_bytes = write_step_summary(matrix, Path(summary), page_url, result.diff)
    return result
