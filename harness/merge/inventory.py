"""The cells of a results dir: which run each column is built from, which runs are superseded, and
forgetting and pruning runs (`harness cells`).

A workstation's results/ keeps every run: each `tox -e <backend>` or `harness` adds one, and an
attempt that could not run (no Docker Hub, no GPU) is a NO DATA cell. The merge builds each column
from the newest complete run of its cell id and the later partial runs (harness/merge/combine.py,
`deduplicate`); every other run of that cell id is superseded. Forgetting moves whole runs, each one
atomic rename, into a trash folder inside the results dir (hidden: the merge never reads it); the
next prune empties it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness import outputs
from harness.cell import CellStatus, Manifest, read_manifest
from harness.errors import HarnessError, UsageError
from harness.merge.combine import CellInput, deduplicate, left_out

TRASH: Final = ".trash"
NO_DATA: Final = "NO DATA"
IN_USE: Final = "in use"
LAID_OVER: Final = "laid over the base run"
_RESULT_FILES: Final = ("events.jsonl", "junit.xml")


@dataclass(frozen=True, slots=True)
class CellRun:
    """One run in a results dir, as `harness cells` lists it."""

    path: Path
    manifest: Manifest
    state: str  # completed, NO DATA, partial (a selection), timeout, crashed, ...
    size: int  # bytes on disk
    role: str  # IN_USE, LAID_OVER, or why no column is built from it ("superseded by run X", ...)

    @property
    def cell_id(self) -> str:
        return self.manifest.cell_id

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def superseded(self) -> bool:
        """No column is built from it (a newer run replaced it, it ran nothing, it was not laid over)."""
        return self.role not in (IN_USE, LAID_OVER)

    @property
    def no_data(self) -> bool:
        return self.state == NO_DATA


def has_results(path: Path) -> bool:
    """The run wrote test results (an event log or a JUnit report with content)."""
    files = [path / name for name in _RESULT_FILES]
    junit = path / "junit"
    if junit.is_dir():
        files += list(junit.iterdir())
    return any(f.is_file() and f.stat().st_size > 0 for f in files)


def state_of(path: Path, manifest: Manifest) -> str:
    """What a run holds: NO DATA (it never got to tests), a partial selection, or how it ended."""
    if manifest.status is CellStatus.INFRA_ERROR or manifest.never_ran or not has_results(path):
        return NO_DATA
    if manifest.partial:
        return "partial"
    return manifest.status.value if manifest.status else "unknown"


def size_of(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += (Path(root) / name).stat().st_size
            except OSError:
                continue
    return total


def _is_cell(path: Path) -> bool:
    """A folder holding a manifest.json; one that cannot even be looked into counts too, so that
    the merge names it and why (a column's problem), instead of leaving it out unseen."""
    try:
        os.lstat(path / "manifest.json")
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:  # permission denied, an I/O error: not ours to judge here
        return True
    return True


def _subfolders(folder: Path) -> tuple[list[Path], list[Path]]:
    """(visible folders in `folder`, unreadable ones) in name order."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return [], [folder]
    found: list[Path] = []
    for entry in entries:
        try:
            if not entry.name.startswith(".") and entry.is_dir():
                found.append(Path(entry.path))
        except OSError:
            found.append(Path(entry.path))
    return found, []


def cell_dirs(paths: Iterable[Path], depth: int = 3) -> list[Path]:
    """A path with a manifest.json is a cell; otherwise look for cells below it (at the first depth
    that has any). Hidden dirs below it are left out: a cell being built (`harness run`, `harness
    import`) is hidden until it is whole. A folder that cannot be read is kept as a cell, so the
    merge reports it with the reason."""
    found: list[Path] = []
    for path in paths:
        if _is_cell(path) or not path.is_dir():
            found.append(path)
            continue
        level, below = [path], []
        for _ in range(depth):
            deeper, unreadable = [], []
            for folder in level:
                subs, closed = _subfolders(folder)
                deeper += subs
                unreadable += closed
            below = [p for p in deeper if _is_cell(p)] + unreadable
            if below:
                break
            level = deeper
        found.extend(below or [path])
    return found


def find_runs(results_dir: Path) -> list[Path]:
    """The run dirs under a results dir (a dir with a manifest.json, up to three levels down), hidden
    ones (a cell being built, the trash) left out."""
    if not results_dir.is_dir():
        raise UsageError(f"{results_dir}: no results dir here", hint="pass --results-dir, or run `harness` first")
    found = [
        p.parent
        for level in (1, 2, 3)
        for p in results_dir.glob("/".join(["*"] * level) + "/manifest.json")
        if not any(part.startswith(".") for part in p.relative_to(results_dir).parts)
    ]
    return sorted(set(found))


def list_runs(results_dir: Path) -> list[CellRun]:
    """Every run of the results dir with its role, by cell id and then start."""
    inputs: list[CellInput] = []
    for path in find_runs(results_dir):
        try:
            inputs.append(CellInput(path, read_manifest(path / "manifest.json")))
        except HarnessError:
            continue  # an unreadable manifest: the merge reports it; it is no run to list
    columns, _ = deduplicate(inputs)
    roles: dict[Path, str] = {}
    for column in columns:
        roles[column.base.path] = IN_USE
        for item in column.overlays:
            roles[item.path] = LAID_OVER
    base_of = {c.cell_id: c.base.manifest for c in columns}
    runs = [
        CellRun(
            path=i.path,
            manifest=i.manifest,
            state=state_of(i.path, i.manifest),
            size=size_of(i.path),
            role=roles.get(i.path) or left_out(i.manifest, base_of[i.cell_id]),
        )
        for i in inputs
    ]
    return sorted(runs, key=lambda r: (r.cell_id, r.manifest.started_at or "", r.name))


def _trash(results_dir: Path) -> Path:
    trash = results_dir / TRASH
    with outputs.writing(trash):  # a full disk, a read-only folder: exit 6 and one line, as any writer
        trash.mkdir(exist_ok=True)
    return trash


def _move_to_trash(results_dir: Path, run: CellRun) -> Path:
    """One atomic rename: the run is whole in results/ or whole in the trash, never half of each."""
    trash = _trash(results_dir)
    target = trash / run.name
    n = 1
    while target.exists():
        n += 1
        target = trash / f"{run.name}-{n}"
    with outputs.writing(run.path):
        os.rename(run.path, target)
    return target


def select(runs: Sequence[CellRun], names: Iterable[str]) -> list[CellRun]:
    """The runs each name stands for: a run dir's name, a run id, or a cell id (all its runs)."""
    chosen: dict[Path, CellRun] = {}
    for name in names:
        found = [r for r in runs if name in (r.name, r.manifest.run_id, r.cell_id)]
        if not found:
            known = ", ".join(sorted({r.cell_id for r in runs})) or "none"
            raise UsageError(f"no run or cell {name!r} in the results dir (cell ids here: {known})")
        chosen.update((r.path, r) for r in found)
    return list(chosen.values())


def forget(results_dir: Path, names: Sequence[str]) -> list[CellRun]:
    """Move the named runs (whole) to the results dir's trash; the next prune empties it."""
    runs = select(list_runs(results_dir), names)
    for run in runs:
        _move_to_trash(results_dir, run)
    return runs


@dataclass(frozen=True, slots=True)
class PruneReport:
    dropped: tuple[CellRun, ...]
    trash_emptied: int  # runs forgotten earlier, deleted now
    freed: int  # bytes


def generations(runs: Sequence[CellRun]) -> list[list[CellRun]]:
    """One cell id's runs, oldest first, cut where a complete run starts (one that ran: the merge
    builds on it): each such run with the runs after it (partial runs laid over it, attempts that
    ran nothing)."""
    ordered = sorted(runs, key=lambda r: (r.manifest.run_attempt, r.manifest.started_at or "", r.name))
    cut: list[list[CellRun]] = []
    for run in ordered:
        if not cut or not (run.manifest.partial or run.manifest.never_ran):
            cut.append([run])
        else:
            cut[-1].append(run)
    return cut


def prunable(runs: Sequence[CellRun], keep: int) -> list[CellRun]:
    """The superseded runs to drop: every NO DATA attempt, and of the others all but the `keep`
    newest generations per cell id (a complete run and the partial runs after it go or stay
    together: a kept partial run keeps the run it was laid over). The runs a column is built from
    are never dropped."""
    dropped: list[CellRun] = []
    by_cell: dict[str, list[CellRun]] = {}
    for run in runs:
        by_cell.setdefault(run.cell_id, []).append(run)
    for group in by_cell.values():
        kept = 0
        for generation in reversed(generations(group)):
            dropped += [r for r in generation if r.superseded and r.no_data]
            with_data = [r for r in generation if r.superseded and not r.no_data]
            if not with_data or any(not r.superseded for r in generation):
                continue  # the column's own generation stays whole
            if kept < keep:
                kept += 1
            else:
                dropped += with_data
    return dropped


def prune(results_dir: Path, keep: int, *, dry_run: bool = False) -> PruneReport:
    """Empty the trash, then drop the superseded runs prunable() names (through the trash, so a kill
    midway leaves each run whole somewhere)."""
    if keep < 0:
        raise UsageError("--keep must be 0 or more")
    runs = list_runs(results_dir)
    dropped = prunable(runs, keep)
    trash = results_dir / TRASH
    earlier = [p for p in trash.iterdir()] if trash.is_dir() else []
    freed = sum(size_of(p) for p in earlier) + sum(r.size for r in dropped)
    if not dry_run:
        for run in dropped:
            _move_to_trash(results_dir, run)
        if trash.is_dir():
            with outputs.writing(trash):
                shutil.rmtree(trash)
    return PruneReport(dropped=tuple(dropped), trash_emptied=len(earlier), freed=freed)


def older_no_data(results_dir: Path, current: Path | None = None) -> list[CellRun]:
    """NO DATA runs other than `current` (the run just made) in a results dir, columns of its matrix
    or superseded attempts: what `harness cells forget` and `prune` drop."""
    try:
        runs = list_runs(results_dir)
    except UsageError:
        return []
    here = current.resolve() if current else None
    return [r for r in runs if r.no_data and r.path.resolve() != here]


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} B"
