"""Bare JUnit files from another CI (PyTorch's own test reports, a vendor's suite) -> a cell.

The user states what the files are (backend, torch build, device, cell id, run URL): a
column's identity comes from that manifest, never from the XML. The files are copied under
the cell's junit/, and the feature map (if any) beside them, so the cell merges the same
way anywhere, later, on its own.
"""

from __future__ import annotations

import hashlib
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from harness import __version__
from harness.cell import (
    CellDir,
    CellStatus,
    FeatureInfo,
    ImportInfo,
    Manifest,
    RunnerInfo,
    building_cell,
    github_context,
    new_run_id,
    utc_now,
)
from harness.errors import InputError, UsageError
from harness.merge.featuremap import FeatureMap, parse_feature_map
from harness.merge.importcheck import (
    check_backend,
    check_cell_id,
    check_input,
    check_text,
    check_torch,
    check_url,
    copied_name,
    open_input,
)
from harness.merge.ingest import FEATURE_MAP, JUNIT_DIR
from harness.merge.junit import JUnitRead, iter_junit
from harness.probe import Probe
from harness.registry import Backend
from harness.torch_build import TorchVersion

FEATURE_MAP_CAP: Final = 4 << 20  # bytes; a map of rules is a few KB


@dataclass(frozen=True, kw_only=True)
class ImportSpec:
    files: tuple[Path, ...]
    backend: str
    cell_id: str
    torch: str = ""  # e.g. 2.13.0+cu130
    device: str = ""
    run_url: str = ""
    runner: str = ""
    feature_map: Path | None = None
    results_dir: Path = Path("results")


@dataclass
class FileReport:
    path: Path
    testcases: int
    problems: list[str] = field(default_factory=list)


@dataclass
class Imported:
    cell_dir: Path
    files: list[FileReport]
    duplicates: list[str] = field(default_factory=list)  # one line per input left out as a copy of another
    feature_map: FeatureMap | None = None


@dataclass(frozen=True)
class _Checked:
    """The spec's arguments, checked and normalised (importcheck)."""

    cell_id: str
    backend: Backend
    torch: TorchVersion | None
    run_url: str | None
    device: str
    runner: str


def check_spec(spec: ImportSpec) -> _Checked:
    """Every argument and every input's kind, before anything is written (one line each)."""
    checked = _Checked(
        cell_id=check_cell_id(spec.cell_id),
        backend=check_backend(spec.backend),
        torch=check_torch(spec.torch),
        run_url=check_url(spec.run_url),
        device=check_text("--device", spec.device),
        runner=check_text("--runner", spec.runner),
    )
    if not spec.files:
        raise UsageError("no JUnit files given")
    for path in spec.files:
        check_input(path)
    if spec.feature_map is not None:
        check_input(spec.feature_map)
    return checked


def _environment(checked: _Checked) -> Probe:
    """What the user stated about the torch and device, in the probe's shape."""
    torch = checked.torch
    return Probe.from_json(
        {
            "torch": {
                "version": str(torch) if torch else None,
                "local_tag": (torch.local or None) if torch else None,
                "base_version": torch.base if torch else None,
            },
            "build": checked.backend.build,
            "devices": [{"name": checked.device}] if checked.device else [],
            "runtime": {},
            "source": "imported JUnit",
        }
    )


def _copy(source: Path, target: Path) -> str:
    """Copy the checked input (opened without following links) and return its sha256."""
    digest = hashlib.sha256()
    with open_input(source) as handle, target.open("xb") as out:
        while block := handle.read(1 << 20):
            digest.update(block)
            out.write(block)
    target.chmod(0o644)
    return digest.hexdigest()


def _count(path: Path, source: Path) -> FileReport:
    """Read the copy once (streaming): how many testcases, and what is wrong with it."""
    read = JUnitRead(path=path)
    count = sum(1 for _ in iter_junit(path, read))
    problems = [p.replace(path.name, source.name, 1) if p.startswith(path.name) else p for p in read.errors]
    return FileReport(path=source, testcases=count, problems=problems)


def import_junit(spec: ImportSpec) -> Imported:
    """Write a new cell dir for the files; raises on bad arguments or files with no testcases.
    Arguments and the inputs' kinds are checked before anything is written; the cell is then built
    beside the results and put in place whole: any failure leaves nothing."""
    checked = check_spec(spec)
    feature_map: FeatureMap | None = None
    map_bytes = b""
    if spec.feature_map is not None:
        with open_input(spec.feature_map) as handle:
            map_bytes = handle.read(FEATURE_MAP_CAP + 1)
        if len(map_bytes) > FEATURE_MAP_CAP:
            raise InputError(f"{spec.feature_map}: larger than {FEATURE_MAP_CAP >> 20} MB: not a feature map")
        feature_map = parse_feature_map(map_bytes, spec.feature_map)
    try:
        with building_cell(spec.results_dir, checked.cell_id) as cell:
            done = _build(spec, checked, cell, feature_map, map_bytes)
    except OSError as err:  # disk full, a name the file system refuses...: one line, nothing left
        where = err.filename or spec.results_dir
        raise InputError(f"{where}: cannot write the cell: {err.strerror or err}") from None
    done.cell_dir = cell.path  # where it was renamed into place
    return done


def _build(
    spec: ImportSpec, checked: _Checked, cell: CellDir, feature_map: FeatureMap | None, map_bytes: bytes
) -> Imported:
    (cell.path / JUNIT_DIR).mkdir()
    copied: list[dict[str, str]] = []
    reports: list[FileReport] = []
    duplicates: list[str] = []
    seen: dict[str, Path] = {}  # sha256 -> the input first copied with it
    width = max(3, len(str(len(spec.files))))
    for source in spec.files:
        target = cell.path / JUNIT_DIR / copied_name(len(copied) + 1, source, width)
        sha = _copy(source, target)
        if sha in seen:
            # The same report given twice (a glob that matched it twice, a shard uploaded twice):
            # its tests ran once.
            target.unlink()
            duplicates.append(f"{source}: the same content as {seen[sha]} (sha256 {sha[:12]}...): imported once")
            continue
        seen[sha] = source
        reports.append(_count(target, source))
        copied.append({"source": str(source), "file": f"{JUNIT_DIR}/{target.name}", "sha256": sha})
    if not any(r.testcases for r in reports):
        problems = "; ".join(p for r in reports for p in r.problems) or "no <testcase> elements"
        raise InputError(f"none of the files holds a readable testcase: {problems}")
    if feature_map is not None:
        (cell.path / FEATURE_MAP).write_bytes(map_bytes)
    now = utc_now()
    manifest = Manifest(
        cell_id=checked.cell_id,
        run_id=new_run_id(),
        backend=checked.backend.id,
        mode="import",
        status=CellStatus.COMPLETED,
        started_at=now,
        finished_at=now,
        harness_version=__version__,
        runner=RunnerInfo(host=checked.runner or socket.gethostname(), imported_by=socket.gethostname()),
        github=github_context(),
        run_url=checked.run_url,
        environment=_environment(checked),
        features={fid: FeatureInfo.from_json(info) for fid, info in feature_map.features.items()}
        if feature_map
        else {},
        imported=ImportInfo(files=tuple(copied), feature_map=FEATURE_MAP if feature_map else None),
    )
    cell.write_manifest(manifest)
    return Imported(cell_dir=cell.path, files=reports, duplicates=duplicates, feature_map=feature_map)
