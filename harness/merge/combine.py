"""Merge cell dirs into the matrix model (harness/model.py) and read it back.

A column is one cell, identified by the manifest's cell_id, never by file names or XML
content. Re-runs of a cell (run attempts) keep the latest; the same run uploaded twice is
merged once; both are decided from the manifests alone, before any result is read. Cells
are independent, so they are read in parallel worker processes (harness/merge/workers.py); each
worker streams its cell's files, spills the decided results to disk (harness/merge/store.py) and
hands back the cell's roll-up and its test ids. A column without results is NO DATA and has no score.
"""

from __future__ import annotations

import dataclasses
import operator
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

from harness import __version__, gcpause
from harness.cell import FeatureInfo, Manifest, read_manifest, utc_now
from harness.errors import HarnessError, InputError, WriteError
from harness.ingest.cell_reader import CellResult, ingest_cell
from harness.interpreters import PythonKey, contradiction
from harness.merge import handoff  # noqa: F401  (registers how workers pickle results)
from harness.merge.reproduce import column_command
from harness.merge.rollup import roll_up, roll_up_counted
from harness.merge.store import InMemoryResults, Run, SpilledResults, open_store, write_run
from harness.merge.workers import read_cells
from harness.model import (
    DEVICE_FAMILIES,
    SCHEMA_VERSION,
    UNASSIGNED,
    VERDICT_STATES,
    Alignment,
    Column,
    ColumnState,
    Environment,
    Feature,
    FeatureCell,
    FeatureGroup,
    Matrix,
    Note,
    Problem,
    Provenance,
    ProvenanceState,
    RunInfo,
    Score,
    TestResult,
    TestRow,
    admits,
    arrived_after,
)
from harness.outcomes import GOOD, Outcome, Rollup, Scope
from harness.plan import PlannedCell
from harness.probe import Device, Probe
from harness.registry import LEGACY_IDS, load_registry
from harness.torch_build import parse_variant, parse_version, version_sort_key

MISSING_CELL_ERROR: Final = (
    "no results were uploaded for this planned cell: its job failed before writing a cell, "
    "was cancelled, or no runner picked it up"
)
NOT_SHIPPED_SOURCE: Final = "(not shipped)"
PLANNED_SOURCE: Final = "(planned)"


# -- which cells -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CellInput:
    path: Path
    manifest: Manifest

    @property
    def cell_id(self) -> str:
        return self.manifest.cell_id


def _read_manifests(paths: Iterable[Path]) -> tuple[list[CellInput], list[Problem]]:
    inputs: list[CellInput] = []
    problems: list[Problem] = []
    for path in paths:
        path = Path(path)
        try:
            if not path.is_dir():
                raise InputError(f"{path}: not a directory", hint="pass cell dirs written by `harness run`")
            inputs.append(CellInput(path, read_manifest(path / "manifest.json")))
        except HarnessError as err:
            problems.append(Problem(source=str(path), message=str(err)))
        except Exception as err:  # one broken manifest must not cost the other cells
            problems.append(Problem(source=str(path), message=f"unreadable manifest ({type(err).__name__}: {err})"))
    return inputs, problems


@dataclass(frozen=True, slots=True)
class ColumnRuns:
    """The runs one column is built from: its base (the newest complete run of the cell id, or the
    newest partial run when there is none) and the partial runs after it, oldest first."""

    base: CellInput
    overlays: tuple[CellInput, ...] = ()

    @property
    def manifest(self) -> Manifest:
        return self.base.manifest

    @property
    def path(self) -> Path:
        return self.base.path

    @property
    def cell_id(self) -> str:
        return self.base.cell_id


def _run_order(item: CellInput) -> tuple[int, str]:
    return (item.manifest.run_attempt, item.manifest.started_at or "")


def deduplicate(inputs: Sequence[CellInput]) -> tuple[list[ColumnRuns], list[Note]]:
    """One column per cell_id: the latest complete run, with the partial runs (a selection of tests)
    that started after it, completed and ran a test, laid over it; the same run uploaded twice merges
    once. A partial run with no complete run of its cell id is a column of its own (the newest such
    run). A run that ran nothing (`not-started`: a typo in a selection or pytest's arguments) is never
    laid over another run; it is a column only when its cell id has no other run."""
    by_id: dict[str, list[CellInput]] = {}
    for item in inputs:
        by_id.setdefault(item.cell_id, []).append(item)
    kept: list[ColumnRuns] = []
    notes: list[Note] = []
    for cell_id, group in by_id.items():
        seen_runs: dict[str, CellInput] = {}
        for item in group:
            run_id = item.manifest.run_id
            if run_id in seen_runs:
                notes.append(
                    Note(cell=cell_id, source=str(item.path), note=f"duplicate upload of run {run_id}; merged once")
                )
                continue
            seen_runs[run_id] = item
        ordered = sorted(seen_runs.values(), key=_run_order)
        ran = [c for c in ordered if not c.manifest.never_ran] or ordered[-1:]
        complete = [c for c in ran if not c.manifest.partial]
        base = complete[-1] if complete else ran[-1]
        overlays = tuple(c for c in ran if _overlays(c, base))
        for other in ordered:
            if other is not base and other not in overlays:
                notes.append(Note(cell=cell_id, source=str(other.path), note=left_out(other.manifest, base.manifest)))
        kept.append(ColumnRuns(base, overlays))
    return kept, notes


def _overlays(item: CellInput, base: CellInput) -> bool:
    """A partial run is laid over the base when it started after it, completed, and ran a test."""
    m = item.manifest
    return m.partial and m.completed and not m.never_ran and _run_order(item) > _run_order(base)


def left_out(manifest: Manifest, base: Manifest) -> str:
    """Why a run is not part of its column (one note, the same words in `harness cells`)."""
    if manifest.never_ran:
        return f"run {manifest.run_id} ran nothing ({manifest.error or 'no test selected'}): left out"
    later = (manifest.run_attempt, manifest.started_at or "") > (base.run_attempt, base.started_at or "")
    if manifest.partial and later:
        status = manifest.status.value if manifest.status else "unknown"
        return f"partial run {manifest.run_id} ended {status}: not laid over run {base.run_id}"
    return f"superseded by run {base.run_id}" + (f" (attempt {base.run_attempt})" if base.run_attempt > 1 else "")


def overlay(base: CellResult, later: Sequence[CellResult]) -> tuple[CellResult, dict[str, int]]:
    """The base run's tests with each later partial run's results laid over them, in run order: a
    test a later run selected takes that run's result, marked with its run and start; every other
    test keeps the base's. Also: how many tests of each feature came from a later run."""
    position = {nodeid: i for i, nodeid in enumerate(base.nodeids)}
    nodeids, features, results = list(base.nodeids), list(base.test_features), list(base.results)
    errors = list(base.errors)
    info = dict(base.features)
    for run in later:
        stamp = {"run": run.manifest.run_id, "at": run.manifest.started_at}
        for nodeid, feature, result in zip(run.nodeids, run.test_features, run.results, strict=True):
            marked = dataclasses.replace(result, **stamp)
            at = position.get(nodeid)
            if at is None:
                position[nodeid] = len(nodeids)
                nodeids.append(nodeid)
                features.append(feature)
                results.append(marked)
            else:
                features[at], results[at] = feature, marked
        errors += run.errors
        info.update(run.features)
    from_later: Counter[str] = Counter(
        (f or UNASSIGNED) for f, r in zip(features, results, strict=True) if r.run is not None
    )
    merged = CellResult(
        path=base.path,
        manifest=base.manifest,
        nodeids=nodeids,
        test_features=features,
        results=results,
        errors=errors,
        features=info,
        notes=list(base.notes),
    )
    return merged, dict(from_later)


# -- reading cells (in parallel) ------------------------------------------------------------
@dataclass(slots=True)
class _Read:
    """One cell as a worker hands it back: its tests, and its roll-up per feature (done in the
    worker, where cells are read in parallel)."""

    cell: CellResult
    rolled: dict[str, FeatureCell]
    ran: bool  # any test with a verdict: a column without one is NO DATA
    run: Run | None = None  # spilled: the cell's results on disk (cell.results is then empty)


def _roll_cell(cell: CellResult) -> _Read:
    # Equal results are shared objects (ingest shares "passed in t seconds"), so each distinct
    # (feature, result) pair is counted in C and judged once, with its count.
    results = cell.results
    by_id = dict(zip(map(id, results), results, strict=True))
    tally = Counter(zip(cell.test_features, map(id, results), strict=True))
    grouped: dict[str, list[tuple[TestResult, int]]] = {}
    for (feature, key), count in tally.items():
        fid = feature or UNASSIGNED
        found = grouped.get(fid)
        if found is None:
            found = grouped[fid] = []
        found.append((by_id[key], count))
    ran = any(r.outcome is not Outcome.NOT_RUN for r in by_id.values())
    rolled = {fid: roll_up_counted(pairs, no_data=not ran) for fid, pairs in grouped.items()}
    return _Read(cell, rolled, ran)


def _composite(base: _Read, later: Sequence[_Read]) -> tuple[_Read, tuple[RunInfo, ...]]:
    """A column built from its base run and the later partial runs laid over it (see overlay())."""
    if not later:
        return base, ()
    merged, from_later = overlay(base.cell, [r.cell for r in later])
    read = _roll_cell(merged)
    read.rolled = {
        fid: dataclasses.replace(cell, overlay=from_later[fid]) if from_later.get(fid) else cell
        for fid, cell in read.rolled.items()
    }
    taken = Counter(r.run for r in merged.results)
    runs = tuple(
        RunInfo(
            run_id=m.run_id,
            started_at=m.started_at,
            selection=m.selection.to_json() if m.selection else None,
            tests=taken[None if n == 0 else m.run_id],
        )
        for n, m in enumerate([base.cell.manifest, *(r.cell.manifest for r in later)])
    )
    return read, runs


def _ingest(path: Path) -> _Read | Problem:
    """One cell: its records, or the problem that stopped it (never raises)."""
    try:
        with gcpause.paused():
            return _roll_cell(ingest_cell(path))
    except HarnessError as err:
        return Problem(source=str(path), message=str(err))
    except Exception as err:  # one broken cell must not cost the others
        return Problem(source=str(path), message=f"unexpected {type(err).__name__}: {err}")


def _read_cell(folder: Path | None, whole: frozenset[Path], path: Path) -> _Read | Problem | _SpillFailed:
    """One cell, in a worker. With a spill `folder`, its results are written to a run file there
    (by the worker that read them: they never cross to the merging process), unless it is in
    `whole` (a run of a composite column, laid over its other runs in the merging process)."""
    read = _ingest(path)
    if folder is None or isinstance(read, Problem) or path in whole:
        return read
    cell = read.cell
    try:
        run = write_run(folder, cell.nodeids, cell.test_features, cell.results)
    except WriteError as err:  # a full disk fails the merge (exit 6), as writing matrix.json would
        return _SpillFailed(str(err), err.path, err.reason)
    read.cell = dataclasses.replace(cell, results=[])
    read.run = run
    return read


@dataclass(frozen=True, slots=True)
class _SpillFailed:
    """A worker could not write a cell's results to the spill folder (its WriteError, as plain values)."""

    message: str
    path: str
    reason: str

    def error(self) -> WriteError:
        return WriteError(self.message, path=self.path, reason=self.reason)


def _lost(path: Path) -> Problem:
    return Problem(source=str(path), message="reading this cell killed its worker process (out of memory?)")


def ingest_cells(
    paths: Sequence[Path], jobs: int | None = None, spill: Path | None = None, whole: frozenset[Path] = frozenset()
) -> Iterator[tuple[int, _Read | Problem | _SpillFailed]]:
    """(index in `paths`, result) for every cell, read by the worker pool (harness/merge/workers.py)
    and handed back in the order they were started. `spill`: the folder the workers write each
    cell's results to (all but those of `whole`), handing back only the rest."""
    return read_cells(paths, partial(_read_cell, spill, whole), _lost, jobs)


# -- building the model --------------------------------------------------------------------------
def environment_of(manifest: Manifest) -> Environment:
    env = manifest.environment or Probe()
    device = env.device or Device()
    image = manifest.image
    return Environment(
        torch=env.torch_version,
        torch_git=env.torch_git,
        build=env.build,
        cuda=env.cuda,
        hip=env.hip,
        xpu=env.xpu,
        # A CPU build, or a device build that ran on the CPU (a cpu-only column), ran on the CPU.
        device=device.name or ("cpu" if env.build == "cpu" or manifest.variant else None),
        device_count=len(env.devices),
        capability=device.capability,
        arch=device.arch,
        driver=env.driver,
        python=env.python,
        platform=env.platform,
        cpu=env.cpu_model,
        mode=manifest.mode,
        image=image.ref if image else None,
        image_digest=image.digest if image else None,
        suite_sha=manifest.suite_sha,
        runner=manifest.runner.host,
        run_url=manifest.url,
        started_at=manifest.started_at,
        finished_at=manifest.finished_at,
        harness_version=manifest.harness_version,
    )


@dataclass(frozen=True, slots=True)
class _Added:
    """A cell as the builder keeps it until the build: what is small and depends on the order of
    columns (the rows are merged as each cell arrives)."""

    manifest: Manifest
    source: str
    errors: tuple[str, ...]
    features: dict[str, FeatureInfo]  # row metadata the cell brought
    rolled: dict[str, FeatureCell]
    ran: bool
    release: str | None = None  # a placeholder's release series (a planned or not-shipped column)
    runs: tuple[RunInfo, ...] = ()  # a composite column's runs, base first
    provenance: Provenance | None = None  # who vouches for it (a merge given a trust file)
    python: PythonKey | None = None  # a placeholder's planned Python

    @property
    def torch(self) -> str | None:
        return self.manifest.torch

    @property
    def python_key(self) -> PythonKey | None:
        """The column's Python: the recorded interpreter's, or a placeholder's planned one."""
        env = self.manifest.environment
        return (env.python_key if env else None) or self.python


class _Builder:
    """Merges the cells' test rows as each cell arrives (in any order), then builds the model in
    column order: the matrix does not depend on the order cells were given or finished in."""

    def __init__(
        self, stated: Mapping[str, FeatureInfo] | None = None, store: InMemoryResults | SpilledResults | None = None
    ) -> None:
        self.registry = load_registry()
        self.stated = stated or {}  # the rows as the features file states them now: over the cells' copies
        self.results = store if store is not None else InMemoryResults()  # every test's result per column
        self.feature_of: dict[str, str] = {}  # test id -> its row, as the first column to add it said
        self.first_column: dict[str, str] = {}  # test id -> the first column to add it (a dispute names it)
        # test id -> column -> feature, for the few tests whose columns put them in different rows
        self.disputed: dict[str, dict[str, str]] = {}
        self.cells: list[_Added] = []
        # column id -> why its cell is refused: its interpreter contradicts the Python it was planned for
        self.refused: dict[str, str] = {}

    def add(self, read: _Read, runs: tuple[RunInfo, ...] = (), provenance: Provenance | None = None) -> None:
        cell = read.cell
        column_id = cell.cell_id
        nodeids = cell.nodeids
        features = [f or UNASSIGNED for f in cell.test_features] if "" in cell.test_features else cell.test_features
        feature_of = self.feature_of
        # Every cell of one suite has the same tests in the same rows: then the results go in from
        # C (map, not a loop per test); a new test or another row takes the loop.
        known = list(map(feature_of.get, nodeids))
        if known != features:
            disputed, first_column = self.disputed, self.first_column
            for nodeid, feature, row_feature in zip(nodeids, features, known, strict=True):
                if row_feature is None:  # a new row (a test listed twice in a cell: its last line)
                    feature_of[nodeid] = feature
                    first_column[nodeid] = column_id
                elif feature != row_feature:
                    # The row's first column set its feature.
                    disputed.setdefault(nodeid, {first_column[nodeid]: row_feature})[column_id] = feature
        store = self.results
        if isinstance(store, InMemoryResults):
            store.add(column_id, nodeids, cell.results, known == features)
        elif read.run is not None:  # spilled by the worker that read the cell
            store.add_run(column_id, read.run)
        else:  # a composite column, laid over here: spilled here
            store.add(column_id, nodeids, cell.results, features)
        self.cells.append(
            _Added(
                cell.manifest,
                str(cell.path),
                tuple(cell.errors),
                cell.features,
                read.rolled,
                read.ran,
                runs=runs,
                provenance=provenance,
            )
        )

    def add_refused(self, column: ColumnRuns, provenance: Provenance) -> None:
        """A column whose statement fails: its identity from its manifest, no results (they cannot be
        trusted), and the failure as its error."""
        manifest = dataclasses.replace(column.manifest, error=f"provenance invalid: {provenance.reason}")
        self.cells.append(_Added(manifest, str(column.path), (), {}, {}, False, provenance=provenance))

    def add_missing(self, planned: PlannedCell) -> None:
        manifest = Manifest(
            cell_id=planned.cell_id,
            backend=planned.backend,
            run_id="",
            # a collector that gave up on the cell says why (no runner within the deadline, a failed build)
            error=f"no results: {planned.missing}" if planned.missing else MISSING_CELL_ERROR,
            # the planned build, so the column sorts with its backend's other builds
            environment=Probe.from_json({"torch": {"version": planned.torch or None}}),
            # the planned channel (a nightly that never ran is still the nightly's column)
            channel=planned.channel or None,
        )
        self.cells.append(_Added(manifest, PLANNED_SOURCE, (), {}, {}, False, python=planned.python_key))

    def check_planned(self, expected: Sequence[PlannedCell]) -> None:
        """A cell whose interpreter contradicts the Python its column was planned for is refused, as a
        wrong device is: the column is NO DATA with that one line (its results stay in the rows, never judged)."""
        planned = {p.cell_id: p.python_key for p in expected if p.python_key is not None}
        for cell in self.cells:
            key = planned.get(cell.manifest.cell_id)
            env = cell.manifest.environment
            why = contradiction(key, env.interpreter if env else None) if cell.source != PLANNED_SOURCE else None
            if why:
                self.refused[cell.manifest.cell_id] = f"refused: {why}"

    def not_shipped(self) -> list[_Added]:
        """A placeholder for each (release, build) the matrix would show but upstream does not ship:
        when a build has columns for some releases in this matrix and the registry says another
        release of the matrix does not ship it (cu126 beside 2.13 and 2.14, not built for 2.15). It is
        "not shipped", never NO DATA: nothing could have run. Builds or releases the registry does
        not list get none (nothing is known of them)."""
        have: dict[tuple[str, str], set[str]] = {}
        releases: set[str] = set()
        for cell in self.cells:
            if cell.source == PLANNED_SOURCE:
                continue  # a plan names what it expected, not what ran: only results set the releases
            release = self.registry.release_of(cell.torch)
            if release is None:
                continue
            releases.add(release.id)
            have.setdefault((_backend_of(cell.manifest), cell.manifest.variant or ""), set()).add(release.id)
        added: list[_Added] = []
        for (backend_id, variant), present in have.items():
            backend = self.registry.get(backend_id)
            if backend is None or not backend.listed:
                continue
            for release_id in sorted(releases - present):
                release = self.registry.releases[release_id]
                if release.ships(backend.id):
                    continue
                cell_id = "-".join(p for p in (backend.id, release_id, variant, "not-shipped") if p)
                builds = ", ".join(sorted(release.builds, key=self.registry.variant_order))
                manifest = Manifest(
                    cell_id=cell_id,
                    backend=backend.id,
                    run_id="",
                    variant=variant or None,
                    error=f"torch {release_id} is not shipped as a {backend.display_name} build "
                    f"(upstream builds {builds})",
                )
                added.append(_Added(manifest, NOT_SHIPPED_SOURCE, (), {}, {}, False, release=release_id))
        return added

    def features(self, cells: Sequence[_Added]) -> list[Feature]:
        """The rows, in the order the columns (in column order) first name them. Each field of a
        feature's metadata (title, release, claim, scope, source) comes from the most recently started
        cell that states it (on a tie, the later column): a feature map that names a project feature
        without a title keeps the project's title."""
        said: dict[str, list[tuple[str, FeatureInfo]]] = {}  # feature -> (stamp, what a cell states of it)
        seen: dict[str, None] = {}
        for cell in cells:
            stamp = cell.manifest.started_at or ""
            for fid, info in cell.features.items():
                said.setdefault(fid, []).append((stamp, info))
            seen.update(dict.fromkeys(cell.rolled))
        for fid in self.stated:
            if fid in said or fid in seen:
                said.setdefault(fid, [])
        order = [fid for fid in said if fid != UNASSIGNED]
        order += [fid for fid in seen if fid not in said and fid != UNASSIGNED]
        if UNASSIGNED in seen:
            order.append(UNASSIGNED)
        features = []
        for fid in order:
            info = FeatureInfo()
            # Oldest first (a stable sort: on a tie the later column comes later), so the newest wins.
            for _, stated in sorted(said.get(fid, ()), key=operator.itemgetter(0)):
                info = stated.stated_over(info)
            if fid in self.stated:
                info = self.stated[fid].stated_over(info)
            features.append(
                Feature(
                    id=fid,
                    title=info.title or ("Not in any feature" if fid == UNASSIGNED else fid),
                    since=info.since,
                    claim=info.claim,
                    source=info.source,
                    scope=Scope.HOST if info.scope == Scope.HOST.value else Scope.BACKEND,
                    apis=info.apis,
                    devices=info.devices,
                    groups=tuple(
                        FeatureGroup(match=g.match, since=g.since, claim=g.claim, source=g.source, python=g.python)
                        for g in info.groups
                    ),
                    python=info.python,
                )
            )
        return features

    def test_rows(self, column_ids: list[str], feature_ids: list[str]) -> Collection[TestRow]:
        """The rows by feature, then id. A test that columns put in different rows goes in the
        row of its first column; each row's results are in column order."""
        rank = {c: i for i, c in enumerate(column_ids)}
        feature_of = self.feature_of
        resolved = {
            nodeid: by_column[min(by_column, key=rank.__getitem__)] for nodeid, by_column in self.disputed.items()
        }
        if resolved:
            feature_of = {**feature_of, **resolved}
        by_feature: dict[str, list[str]] = {fid: [] for fid in feature_ids}
        for nodeid, fid in feature_of.items():
            by_feature[fid].append(nodeid)
        for ids in by_feature.values():
            ids.sort()  # strings alone: C's sort, no key function
        if isinstance(self.results, SpilledResults):
            return self.results.test_rows(column_ids, by_feature, resolved)
        arrived = [c.manifest.cell_id for c in self.cells if c.source not in (PLANNED_SOURCE, NOT_SHIPPED_SOURCE)]
        in_order = arrived == sorted(arrived, key=rank.__getitem__)  # results went in in column order
        return self.results.test_rows(column_ids, by_feature, in_order)

    def _channel_of(self, manifest: Manifest) -> str | None:
        """A cell written before channels: what its torch version implies (None without a torch)."""
        return self.registry.channel_of(manifest.torch) if manifest.torch else None

    def column_order(self, cell: _Added | CellInput) -> tuple[Any, ...]:
        """Families in registry order, variants by runtime (ROCm 7.14 after 7.2); within one, its
        real columns before its CPU-only ones, and torch builds from the oldest release to the newest."""
        manifest = cell.manifest
        env = manifest.environment
        python = (env.python_key if env else None) or getattr(cell, "python", None)
        backend = self.registry.get(_backend_of(manifest))
        # One build's Pythons side by side: its default image's (or an unrecorded one) first, then by version.
        other = python is not None and (backend is None or python != backend.base_python)
        return (
            self.registry.variant_order(_backend_of(manifest)),
            manifest.variant or "",
            version_key(manifest.torch or getattr(cell, "release", None)),
            (other, python.free_threaded, python.major, python.minor) if python and other else (False,),
            manifest.cell_id,
        )

    def in_release(
        self,
        feature: Feature,
        cell: FeatureCell,
        added: _Added,
        release: str | None,
        family: str | None,
        notes: list[Note],
    ) -> FeatureCell:
        """The roll-up of `feature` on a column of torch `release` and device `family`: "not in this
        release" where the build cannot have it (its tests still show, never judge); a group of its
        tests that arrived after `release` left out of the judgement."""
        column_id = added.manifest.cell_id
        python = added.python_key
        reason = feature.not_in(release, family, python)
        if reason is None:
            late = [g for g in feature.groups if arrived_after(g.since, release)]
            foreign = [g for g in feature.groups if g not in late and not admits(g.python, python)]
            if (late or foreign) and cell.counts:
                return self.without_groups(feature.id, column_id, late, foreign)
            return cell
        early = sum(cell.counts.get(o, 0) for o in GOOD) if arrived_after(feature.since, release) else 0
        if early:
            notes.append(
                Note(
                    cell=column_id,
                    source=feature.id,
                    note=f"{feature.id}: {early} test(s) passed on torch {added.torch or release}, before the "
                    f"feature's release {feature.since} (present earlier than announced?)",
                )
            )
        return dataclasses.replace(cell, state=Rollup.NOT_IN_RELEASE, reason=reason, early=early)

    def without_groups(
        self, fid: str, column_id: str, late: Sequence[FeatureGroup], foreign: Sequence[FeatureGroup] = ()
    ) -> FeatureCell:
        """A feature's roll-up on one column without the tests of its groups that arrived later, or that
        are for other Pythons than the column's."""
        kept: list[TestResult] = []
        later = other_python = 0
        column = dict(self.results.results_of(column_id))  # one column's results: a cell's worth
        for nodeid, feature in self.feature_of.items():
            result = column.get(nodeid)
            if feature != fid or result is None:
                continue
            if any(g.matches(nodeid) for g in late):
                later += 1
            elif any(g.matches(nodeid) for g in foreign):
                other_python += 1
            else:
                kept.append(result)
        rolled = roll_up(kept) if kept else _NOTHING_TO_JUDGE
        return dataclasses.replace(rolled, later=later, other_python=other_python)

    def build(self, problems: Sequence[Problem], notes: Sequence[Note]) -> Matrix:
        notes = list(notes)
        cells = sorted([*self.cells, *self.not_shipped()], key=self.column_order)
        features = self.features(cells)
        feature_ids = [f.id for f in features]
        # Backend-independent features and the `unassigned` row are shown, never scored.
        scored = {f.id for f in features if f.scope is Scope.BACKEND and f.id != UNASSIGNED}
        columns: list[Column] = []
        grid: dict[str, dict[str, FeatureCell]] = {fid: {} for fid in feature_ids}
        for added in cells:
            manifest, source, errors, rolled = added.manifest, added.source, added.errors, added.rolled
            column_id = manifest.cell_id
            refused = self.refused.get(column_id)
            if refused:  # its results are not this column's: nothing of them is judged
                manifest = dataclasses.replace(manifest, error=refused)
                added = dataclasses.replace(added, manifest=manifest, rolled={}, ran=False)
                rolled = {}
            shipped = source != NOT_SHIPPED_SOURCE
            if not shipped:
                state = ColumnState.NOT_SHIPPED
            elif not added.ran:
                state = ColumnState.NO_DATA
            elif manifest.completed and not errors:
                state = ColumnState.OK
            else:
                state = ColumnState.PARTIAL_RUN
            totals: Counter[Outcome] = Counter()
            states: Counter[Rollup] = Counter()
            release = added.release or (version.minor if (version := parse_version(manifest.torch)) else None)
            family = _family_of(manifest)
            for feature in features:
                fid = feature.id
                cell = rolled.get(fid) or _absent_cell(shipped, added.ran)
                if shipped:
                    cell = self.in_release(feature, cell, added, release, family, notes)
                grid[fid][column_id] = cell
                totals.update(cell.counts)
                if fid in scored:
                    states[cell.state] += 1
            backend = _backend_of(manifest)
            info = self.registry.get(backend)
            placeholder = source in (PLANNED_SOURCE, NOT_SHIPPED_SOURCE)
            columns.append(
                Column(
                    id=column_id,
                    backend=backend,
                    display_name=info.display_name if info else backend,
                    state=state,
                    cell_status=manifest.status,
                    run_id=manifest.run_id,
                    run_attempt=manifest.run_attempt,
                    error=manifest.error,
                    exit=manifest.exit.to_json() if manifest.exit else None,
                    environment=environment_of(manifest),
                    errors=errors,
                    counts=dict(totals),
                    score=None
                    if state in (ColumnState.NO_DATA, ColumnState.NOT_SHIPPED)
                    else Score(
                        supported=states[Rollup.SUPPORTED],
                        judged=sum(states[s] for s in VERDICT_STATES),
                        features=len(scored) - states[Rollup.NOT_IN_RELEASE],
                        states=dict(states),
                    ),
                    source=source,
                    mode=manifest.mode,
                    variant=manifest.variant,
                    variant_reason=manifest.variant_reason,
                    reproduce=None if placeholder else column_command(manifest),
                    release=added.release if not shipped else None,
                    device_api=manifest.environment.device_api if manifest.environment else {},
                    channel=manifest.channel or self._channel_of(manifest),
                    runs=added.runs,
                    partial=manifest.partial,
                    provenance=added.provenance,
                    python=key.label if (key := added.python_key) else None,
                    interpreter=manifest.environment.interpreter if manifest.environment else None,
                )
            )
        tests = self.test_rows([c.id for c in columns], feature_ids)
        shas = sorted({c.environment.suite_sha for c in columns if c.environment.suite_sha})
        return Matrix(
            schema_version=SCHEMA_VERSION,
            generated_at=utc_now(),
            harness_version=__version__,
            features=tuple(features),
            columns=tuple(columns),
            cells=grid,
            tests=tests,
            alignment=Alignment(aligned=len(shas) <= 1, suite_shas=tuple(shas)),
            input_errors=tuple(problems),
            notes=tuple(notes),
        )


_NOT_SHIPPED_CELL: Final = FeatureCell(state=Rollup.NOT_SHIPPED, counts={})
# A column that ran, with no test of the feature (a CUDA build runs no XPU test): nothing to judge
# here, not NO DATA, which says a run produced nothing.
_NOTHING_TO_JUDGE: Final = FeatureCell(state=Rollup.NOT_APPLICABLE, counts={})


def _absent_cell(shipped: bool, ran: bool) -> FeatureCell:
    if not shipped:
        return _NOT_SHIPPED_CELL
    return _NOTHING_TO_JUDGE if ran else roll_up((), no_data=True)


def _family_of(manifest: Manifest) -> str | None:
    """The device family of a cell's build: its backend's (cu132: cuda, also run CPU-only), else the probe's."""
    variant = parse_variant(_backend_of(manifest))
    if variant:
        return variant.family
    build = manifest.environment.build if manifest.environment else None
    return build if build in DEVICE_FAMILIES else None


def _backend_of(manifest: Manifest) -> str:
    """The manifest's backend, old ids read as today's variant (`rocm` was ROCm 7.2)."""
    return LEGACY_IDS.get(manifest.backend, manifest.backend)


def version_key(version: str | None) -> tuple[Any, ...]:
    """Sorts torch versions by release (2.13.0+cu130 before 2.15.0); unknown versions first."""
    return version_sort_key(version)


def vouch(runs: Sequence[Provenance]) -> Provenance:
    """A column's provenance from its runs' (base first): invalid if one is, unverified if one is,
    else verified by whoever signed them."""
    for state in (ProvenanceState.INVALID, ProvenanceState.UNVERIFIED):
        found = [r for r in runs if r.state is state]
        if found:
            return found[0]
    by = ", ".join(dict.fromkeys(r.by or "" for r in runs))
    return dataclasses.replace(runs[0], by=by)


def missing_cells(expected: Sequence[PlannedCell], present: Iterable[str]) -> list[PlannedCell]:
    """The planned cells that produced nothing."""
    have = set(present)
    return [planned for planned in expected if planned.cell_id not in have]


def merge_cell_dirs(
    paths: Iterable[Path],
    expected: Sequence[PlannedCell] = (),
    *,
    jobs: int | None = None,
    features: Mapping[str, FeatureInfo] | None = None,
    spill: bool = True,
    provenance: Mapping[Path, Provenance] | None = None,
) -> Matrix:
    """Merge cell dirs; `expected` (the plan's cells) adds NO DATA columns for cells that sent nothing.
    `features`: the rows as the suites' features file states them now (a release, device families,
    groups), over what each cell recorded when it ran. `spill` (the default): each column's results
    wait on disk until the rows are written, so the merge holds about one cell's worth whatever the
    number of columns (harness/merge/store.py; the matrix's `tests` reads them back as it is
    iterated); False: the plain path, everything in memory. `provenance`: each cell's, as checked
    against a trust file (harness/provenance/verify.py); a column built from an invalid run keeps its
    identity and loses its results, the failure its error."""
    store = open_store(spill)
    try:
        with gcpause.paused():
            return _merge(paths, expected, jobs, features, store, provenance)
    except BaseException:
        store.close()  # the spilled runs go with the failed merge
        raise


def _merge(
    paths: Iterable[Path],
    expected: Sequence[PlannedCell],
    jobs: int | None,
    features: Mapping[str, FeatureInfo] | None,
    store: InMemoryResults | SpilledResults,
    provenance: Mapping[Path, Provenance] | None = None,
) -> Matrix:
    inputs, problems = _read_manifests(paths)
    kept, notes = deduplicate(inputs)
    builder = _Builder(features, store)
    vouched: list[Provenance | None] = [None] * len(kept)
    present: list[str] = []
    if provenance is not None:  # a column built from an invalid run is refused whole, before any reading
        verdicts = [vouch([provenance[r.path] for r in (column.base, *column.overlays)]) for column in kept]
        for column, verdict in zip(kept, verdicts, strict=True):
            if verdict.state is ProvenanceState.INVALID:
                builder.add_refused(column, verdict)
                present.append(column.cell_id)
        valid = [i for i, verdict in enumerate(verdicts) if verdict.state is not ProvenanceState.INVALID]
        kept, vouched = [kept[i] for i in valid], [verdicts[i] for i in valid]
    # Read in column order: each row then takes its results in the order the matrix shows them.
    order = sorted(range(len(kept)), key=lambda i: builder.column_order(kept[i]))
    owner = [(i, pos) for i in order for pos in range(1 + len(kept[i].overlays))]
    runs_of = {i: (kept[i].base, *kept[i].overlays) for i in order}
    paths = [runs_of[i][pos].path for i, pos in owner]
    failed: dict[tuple[int, int], Problem] = {}
    waiting: dict[int, dict[int, _Read]] = {}
    whole = frozenset(runs_of[i][pos].path for i, pos in owner if kept[i].overlays)
    spill = store.folder if isinstance(store, SpilledResults) else None
    for index, result in ingest_cells(paths, jobs, spill, whole):
        if isinstance(result, _SpillFailed):
            raise result.error()
        item, pos = owner[index]
        if isinstance(result, Problem):
            failed[(item, pos)] = result
        elif not kept[item].overlays:
            builder.add(result, provenance=vouched[item])
            present.append(kept[item].cell_id)
            continue
        else:
            waiting.setdefault(item, {})[pos] = result
        arrived = waiting.get(item, {})
        if len(arrived) + sum(1 for key in failed if key[0] == item) < len(runs_of[item]):
            continue  # a composite column waits for all its runs
        if 0 in arrived:  # a base that cannot be read loses the column, as a single run does
            builder.add(*_composite(arrived[0], [arrived[p] for p in sorted(arrived) if p]), vouched[item])
            present.append(kept[item].cell_id)
        waiting.pop(item, None)
    problems.extend(failed[key] for key in sorted(failed))  # in the order the cells were given
    builder.check_planned(expected)
    for entry in missing_cells(expected, present):
        builder.add_missing(entry)
    return builder.build(problems, notes)
