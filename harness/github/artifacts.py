"""Collect a workflow run's cells as they arrive, with a deadline, so that one cell no runner picks up
does not hold the whole publication (GitHub keeps a self-hosted job queued for a day or more).

Each cell job is named `cell <cell id>` and uploads artifact `cell-<cell id>` as its last step,
whatever happened: its cell dir, if any, and `job-<cell id>.txt` saying how the job ended. Polling
the run's jobs and artifacts (GitHub's REST API):

- `cell-<id>` there: its cell is downloaded (a job that ended without a cell, a failed build, is
  missing with the job's own reason);
- its job completed without the artifact: missing, "its job ended (failure) without a cell";
- its job in progress: a runner is on it; it is awaited up to `cell_timeout` after it started;
- its job queued (or not there at all), `deadline` after collecting began: no runner picked it up.
  It is published as NO DATA ("no runner picked it up within 3 h"), and the cell, should it arrive
  later, is taken into the next publication: `late_cells` looks for the cells of the last published
  runs' NO DATA columns in those runs' artifacts.
"""

from __future__ import annotations

import io
import re
import time
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol

from harness import outputs
from harness.errors import HarnessError, InputError, UsageError
from harness.github.client import Artifact, Job

CELL_PREFIX: Final = "cell-"
JOB_NAME: Final = "cell {cell_id}"  # matrix.yml's name for a cell job (GitHub prefixes a caller's: "matrix / ...")
JOB_FILE: Final = "job-{cell_id}.txt"
MAX_UNPACKED: Final = 32 << 30  # a cell's artifact unpacks to far less; anything bigger is refused
_DURATION_RE: Final = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")
_RUN_KEY_RE: Final = re.compile(r"^gh(\d+)-\d+$")


class ArtifactStore(Protocol):
    def artifacts(self, run_id: int) -> list[Artifact]: ...

    def jobs(self, run_id: int) -> list[Job]: ...

    def download(self, artifact: Artifact) -> bytes: ...


def parse_duration(text: str) -> float:
    """'3h', '90m', '45s', '1.5d' -> seconds."""
    match = _DURATION_RE.match(text.strip().lower())
    if not match:
        raise UsageError(f"duration {text!r} is not a number with s, m, h or d (e.g. 3h, 90m)")
    return float(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]


def say_duration(text: str) -> str:
    """'3h' -> '3 h' (how the NO DATA reason names the deadline)."""
    match = _DURATION_RE.match(text.strip().lower())
    return f"{match.group(1)} {match.group(2)}" if match else text


@dataclass
class Collected:
    arrived: list[str] = field(default_factory=list)  # cell ids whose cell is in dest
    missing: dict[str, str] = field(default_factory=dict)  # cell id -> why there is no cell
    late: list[tuple[int, str]] = field(default_factory=list)  # (run id, cell id) taken from earlier runs


def unpack(data: bytes, dest: Path) -> None:
    """An artifact's zip into `dest`, refusing names that leave it and sizes past MAX_UNPACKED."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as err:
        raise InputError(f"{dest.name}: not a zip archive ({err})") from None
    with archive:
        total = sum(info.file_size for info in archive.infolist())
        if total > MAX_UNPACKED:
            raise InputError(f"{dest.name}: unpacks to {total >> 20} MB; refused")
        root = dest.resolve()
        for info in archive.infolist():
            target = (dest / info.filename).resolve()
            if target != root and root not in target.parents:
                raise InputError(f"{dest.name}: member {info.filename!r} would land outside {dest}")
        # Unpacked beside its place, then renamed into it: a killed collect leaves no half cell
        # (the temp folder is hidden from the merge and swept by the next collect).
        outputs.make_dirs(dest.parent)
        staging = outputs.staging_dir(dest)
        try:
            with outputs.writing(dest):
                archive.extractall(staging)
            old = outputs.switch_dir(staging, dest)
        except BaseException:
            outputs.remove_tree(staging)
            raise
        if old is not None:
            outputs.remove_tree(old)


def _has_cell(folder: Path) -> bool:
    return any(folder.rglob("manifest.json"))


def _job_reason(folder: Path, cell_id: str) -> str:
    """What the job said of its end (job-<id>.txt: `status: ...` and `reason: ...` lines)."""
    found = next(folder.rglob(JOB_FILE.format(cell_id=cell_id)), None)
    facts: dict[str, str] = {}
    if found is not None:
        for line in found.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            facts[key.strip()] = value.strip()
    status = facts.get("status") or "unknown"
    reason = facts.get("reason")
    return f"its job ended ({status}) without a cell" + (f": {reason}" if reason else "")


def _job_of(jobs: list[Job], cell_id: str, pattern: str) -> Job | None:
    name = pattern.format(cell_id=cell_id)
    found = [j for j in jobs if j.name == name or j.name.endswith(f" / {name}")]
    return found[-1] if found else None


def collect(
    store: ArtifactStore,
    run_id: int,
    planned: Sequence[str],
    dest: Path,
    *,
    deadline: float,
    deadline_text: str,
    cell_timeout: float,
    poll: float = 60.0,
    job_name: str = JOB_NAME,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    say: Callable[[str], None] = print,
) -> Collected:
    """Wait for the planned cells of run `run_id` (see the module's docstring); download them into `dest`."""
    if len(set(planned)) != len(planned):
        raise UsageError("the plan names a cell twice")
    began = clock()
    running_since: dict[str, float] = {}
    result = Collected()
    waiting = list(planned)
    said: list[str] = []
    said_at = began
    while True:
        # Jobs first: a job seen completed has uploaded its artifact before, so the listing after sees it.
        jobs = store.jobs(run_id)
        names = {a.name: a for a in store.artifacts(run_id) if not a.expired}
        now = clock()
        for cell_id in list(waiting):
            artifact = names.get(f"{CELL_PREFIX}{cell_id}")
            job = _job_of(jobs, cell_id, job_name)
            if artifact is not None:
                folder = dest / artifact.name
                unpack(store.download(artifact), folder)
                waiting.remove(cell_id)
                if _has_cell(folder):
                    result.arrived.append(cell_id)
                    say(f"{cell_id}: arrived")
                else:
                    result.missing[cell_id] = _job_reason(folder, cell_id)
                    say(f"{cell_id}: {result.missing[cell_id]}")
            elif job is not None and job.status == "completed":
                waiting.remove(cell_id)
                result.missing[cell_id] = (
                    f"its job ended ({job.conclusion or 'unknown'}) without uploading {CELL_PREFIX}{cell_id}"
                )
                say(f"{cell_id}: {result.missing[cell_id]}")
            elif job is not None and job.status == "in_progress":
                first = running_since.setdefault(cell_id, now)
                if now - first > cell_timeout:
                    waiting.remove(cell_id)
                    minutes = round(cell_timeout / 60)
                    result.missing[cell_id] = f"a runner took it, but no cell came within {minutes} min"
                    say(f"{cell_id}: {result.missing[cell_id]}")
            elif now - began > deadline:
                waiting.remove(cell_id)
                result.missing[cell_id] = f"no runner picked it up within {deadline_text}"
                say(f"{cell_id}: {result.missing[cell_id]}; published as NO DATA, taken in later if it comes")
        if not waiting:
            return result
        # Said when the set changes, and every 10 minutes: a log line per poll would bury the rest.
        if waiting != said or now - said_at >= 600:
            say(f"waiting for {len(waiting)} cell(s): {', '.join(waiting)}")
            said, said_at = list(waiting), now
        sleep(poll)


def late_cells(
    store: ArtifactStore,
    candidates: Iterable[tuple[int, str]],
    dest: Path,
    *,
    say: Callable[[str], None] = print,
) -> list[tuple[int, str]]:
    """Cells that earlier runs published as NO DATA and that arrived in those runs since: into `dest`."""
    taken: list[tuple[int, str]] = []
    by_run: dict[int, list[str]] = {}
    for run_id, cell_id in candidates:
        by_run.setdefault(run_id, []).append(cell_id)
    for run_id, cell_ids in by_run.items():
        try:
            names = {a.name: a for a in store.artifacts(run_id) if not a.expired}
        except HarnessError as err:
            say(f"run {run_id}: its artifacts cannot be listed ({err}); its late cells are left out")
            continue
        for cell_id in cell_ids:
            artifact = names.get(f"{CELL_PREFIX}{cell_id}")
            if artifact is None:
                continue
            folder = dest / f"late-{run_id}-{cell_id}"
            unpack(store.download(artifact), folder)
            if _has_cell(folder):
                taken.append((run_id, cell_id))
                say(f"{cell_id}: arrived late in run {run_id}; published now")
    return taken


def late_candidates(
    summaries: Iterable[tuple[str, Iterable[tuple[str, bool]]]], current_run: int
) -> list[tuple[int, str]]:
    """(run id, cell id) of every NO DATA column of the given published runs (run key, [(column, has data)])."""
    found: dict[tuple[int, str], None] = {}
    for key, columns in summaries:
        match = _RUN_KEY_RE.match(key)
        if not match or int(match.group(1)) == current_run:
            continue
        for column, has_data in columns:
            if not has_data and "not-shipped" not in column:
                found[(int(match.group(1)), column)] = None
    return list(found)
