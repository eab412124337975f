"""Publish a matrix as a static site:

    index.html            the page (holding its test data when small; else data/ beside it)
    data/                 the page's parts (harness/publish/render/page_parts.py), rewritten each time
    matrix.json           the matrix, split (schema 1.4): the head and the list of its parts, each
    matrix-parts/         with its sha256 digest; the rows, a few MB gzip'd per part, rewritten each time
    diff.md, diff.json    the changes since the previous publication (its matrix is the baseline)
    badges/*.svg          one per column and one for the matrix
    history/              one summary and the per-test results per run, appended, never rewritten

The site is published as one switch: the new one is built whole in a folder beside the old (the old
one's files taken over as hard links: nothing is ever written in place), then the two are swapped in
one rename (harness/outputs.py), under a lock beside the site, so the folder is at every instant
wholly the last publication or wholly this one, and the next run's baseline is always a whole one.

The run's summary is appended to history/ (never rewriting an earlier one) before the page is drawn,
so the page's trend includes this run. With $GITHUB_STEP_SUMMARY set, the Markdown summary is
appended there within GitHub's 1 MiB limit. No file of the site exceeds SITE_FILE_LIMIT: GitHub
warns at 50 MB per file and refuses 100 MB.

Memory: the matrix held is read without its traces and captured output (`load_matrix(results="lean")`);
the page's details and the matrix's parts are written from its rows read again one at a time
(`full_rows`), and the page's parts are written as they are made, so a publication holds the lean
matrix, the baseline's outcomes and one part at a time.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from harness import jsonio, outputs
from harness.errors import WriteError
from harness.matrix_json import PARTS_FOLDER, write_matrix_split
from harness.model import Matrix, TestRow
from harness.publish.column_diff import ChangeKind, DiffReport, diff_matrices
from harness.publish.history import RunResults, RunSummary, append_run, load_history, load_results
from harness.publish.render.badge import badges
from harness.publish.render.diff_report import render_diff_markdown
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
    diff_kept: bool = False  # the site held this very matrix already: its diff was kept


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
            outputs.remove(path)
        return []
    jsonio.write_atomic(paths[0], lambda handle: handle.write(jsonio.dumps_pretty(diff.to_json()) + b"\n"))
    outputs.write_file(paths[1], render_diff_markdown(diff))
    return paths


def _write_matrix(site: Path, matrix: Matrix, rows: Iterable[TestRow] | None) -> list[Path]:
    """matrix.json split (its parts in matrix-parts/, none over SITE_FILE_LIMIT); an older
    publication's matrix.json.gz is not carried over (`_not_carried`)."""
    written = write_matrix_split(matrix, site / "matrix.json", rows=rows)
    too_large = [p for p in written if p.stat().st_size > SITE_FILE_LIMIT]
    if too_large:  # a part is a few MB: only a test with a result of hundreds of MB could do it
        raise WriteError(
            f"cannot write {too_large[0]}: larger than {SITE_FILE_LIMIT >> 20} MB",
            path=str(too_large[0]),
            reason="larger than the limit",
        )
    return written


# Leftovers of publications by earlier versions of the harness, which wrote in place (never carried on).
_OLD_TEMP_RE: Final = re.compile(r"^\.(?:.+\.\d+\.tmp|data\.new|[^/]+\.(?:json|gz|md|html)\.[a-z0-9_]{8})$")


def _not_carried(rel: Path) -> bool:
    """What the next publication does not take over from the last: what it rewrites whole (the
    page's parts, the matrix's parts) and temp files."""
    return rel.name.startswith(outputs.TEMP_PREFIX) or bool(_OLD_TEMP_RE.match(rel.name)) or rel in _REWRITTEN


# Rewritten whole by every publication (a part of the last one must not linger), and the whole
# matrix.json.gz older publications wrote (the split matrix.json replaces it).
_REWRITTEN: Final = frozenset({Path(DATA_DIR), Path(PARTS_FOLDER), Path("matrix.json.gz")})


def same_publication(a: Matrix, b: Matrix) -> bool:
    """Whether two matrices are one merge's result (a rerun publishing what is already published)."""
    key = lambda m: (m.generated_at, [(c.id, c.run_id, c.run_attempt) for c in m.columns])  # noqa: E731
    return key(a) == key(b)


@contextlib.contextmanager
def site_lock(site: Path, timeout: float = outputs.DEFAULT_LOCK_TIMEOUT) -> Iterator[None]:
    """One publisher at a time: the lock file sits beside the site (the site folder itself is swapped)."""
    site = served_path(site)
    with outputs.locked(site.parent, timeout=timeout, what=f"the site {site}"):
        yield


def served_path(site: Path) -> Path:
    """The folder that is served: a site given as a symbolic link is published where it points."""
    return Path(os.path.realpath(site)) if site.is_symlink() else Path(os.path.abspath(site))


def publish(
    matrix: Matrix,
    site: Path,
    *,
    stale_after_hours: float = DEFAULT_STALE_AFTER_HOURS,
    history: bool = True,
    page_url: str = "",
    baseline: Matrix | None = None,
    inline_limit: int = INLINE_LIMIT,
    lock_timeout: float = outputs.DEFAULT_LOCK_TIMEOUT,
    full_rows: Callable[[], Iterable[TestRow]] | None = None,
) -> Published:
    """Build the new site completely in a folder beside the old one, then swap them in one rename:
    at every instant `site` is wholly the last publication or wholly this one. `full_rows`: the
    matrix's rows with every result whole, each call a new pass, where `matrix` was read "lean"
    (harness/matrix_json.py's `iter_tests`); default `matrix.tests`."""
    given = site
    with site_lock(site, lock_timeout):
        site = served_path(site)
        if os.path.lexists(site) and not site.is_dir():
            raise WriteError(f"cannot write {site}: it is a file, not a folder", path=str(site), reason="not a folder")
        outputs.restore_switched(site)  # a switch cut between its two renames (no renameat2)
        # Under the lock every temp folder of this site is a dead publisher's.
        outputs.sweep(site.parent, also=lambda p: p.name.endswith(f"-{site.name}") or f"-{site.name}.old" in p.name)
        staging = outputs.staging_dir(site)
        try:
            if site.is_dir():
                outputs.link_tree(site, staging, skip=_not_carried)
            result = _build(matrix, staging, stale_after_hours, history, baseline, inline_limit, full_rows)
            outputs.clear_temp_files(staging)
            outputs.sync_tree(staging)
            old = outputs.switch_dir(staging, site)
        except WriteError as err:
            outputs.remove_tree(staging)
            raise _named_in(err, staging, site) from None
        except BaseException:
            outputs.remove_tree(staging)
            raise
        if old is not None:
            outputs.remove_tree(old)
    result.site = given
    result.files = [given / p.relative_to(staging) for p in result.files]
    result.history_entry = given / result.history_entry.relative_to(staging) if result.history_entry else None
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with outputs.writing(summary):
            result.summary_bytes = write_step_summary(matrix, Path(summary), page_url, result.diff)
    return result


def _named_in(err: WriteError, staging: Path, site: Path) -> WriteError:
    """The error names the site's path, not the temp folder's."""
    if not err.path.startswith(str(staging)):
        return err
    path = str(site) + err.path[len(str(staging)) :]
    return WriteError(f"cannot write {path}: {err.reason}", path=path, reason=err.reason)


def _build(
    matrix: Matrix,
    site: Path,
    stale_after_hours: float,
    history: bool,
    baseline: Matrix | None,
    inline_limit: int,
    full_rows: Callable[[], Iterable[TestRow]] | None = None,
) -> Published:
    result = Published(site=site)
    runs: list[RunSummary] = []
    results: list[RunResults | None] = []
    if history:
        result.history_entry = append_run(site / "history", matrix)
        runs = load_history(site / "history", problems=result.problems)
        result.history_runs = len(runs)
        window = runs[-HISTORY_WINDOW:]
        results = [None] * (len(runs) - len(window)) + load_results(site / "history", window, result.problems)
    if baseline is not None and same_publication(baseline, matrix):
        # Already published (a rerun after a kill that came after the switch): its diff against
        # the publication before stays; a diff of the matrix with itself would hide every change.
        result.diff_kept = True
    else:
        if baseline is not None:
            result.diff = diff_matrices(baseline, matrix)
        result.files += _write_diff(site, result.diff)
    result.files += _write_matrix(site, matrix, full_rows() if full_rows else None)
    for name, svg in badges(matrix).items():
        outputs.write_file(site / "badges" / name, svg)
        result.files.append(site / "badges" / name)
    parts: list[Path] = []

    def write_part(name: str, body: bytes) -> None:
        # The page and its parts go live together: the whole site is switched at once (`publish`).
        path = site / DATA_DIR / f"{name}.json"
        outputs.write_file(path, body)
        parts.append(path)

    page = render_page(
        matrix,
        history=runs,
        results=results,
        stale_after_hours=stale_after_hours,
        inline_limit=inline_limit,
        site=True,
        write_part=write_part,
        detail_rows=full_rows() if full_rows else None,
    )
    result.page_parts = len(parts)
    outputs.write_file(site / "index.html", page.html)
    result.files += [*parts, site / "index.html"]
    return result
