"""Bare JUnit files from another CI (PyTorch's own test reports, a vendor's suite) -> a cell.

The user states what the files are (backend, torch build, device, cell id, run URL): a
column's identity comes from that manifest, never from the XML. The files are copied under
the cell's junit/, and the feature map (if any) beside them, so the cell merges the same
way anywhere, later, on its own.
"""

from __future__ import annotations

import hashlib
import shutil
import socket
from dataclasses import dataclass, field
from pathlib import Path

from harness import __version__
from harness.cell import (
    CellStatus,
    FeatureInfo,
    ImportInfo,
    Manifest,
    RunnerInfo,
    building_cell,
    github_context,
    new_run_id,
    utc_now,
    valid_cell_id,
)
from harness.errors import InputError, UsageError
from harness.merge.featuremap import FeatureMap, load_feature_map
from harness.merge.ingest import FEATURE_MAP, JUNIT_DIR
from harness.merge.junit import JUnitRead, iter_junit
from harness.probe import Probe
from harness.registry import load_registry


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


def _check_files(files: tuple[Path, ...]) -> list[FileReport]:
    """Read each file once (streaming): how many testcases, and what is wrong with it."""
    if not files:
        raise UsageError("no JUnit files given")
    reports = []
    for path in files:
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        read = JUnitRead(path=path)
        count = sum(1 for _ in iter_junit(path, read))
        reports.append(FileReport(path=path, testcases=count, problems=list(read.errors)))
    if not any(r.testcases for r in reports):
        problems = "; ".join(p for r in reports for p in r.problems) or "no <testcase> elements"
        raise InputError(f"none of the files holds a readable testcase: {problems}")
    return reports


def _environment(spec: ImportSpec) -> Probe:
    """What the user stated about the torch and device, in the probe's shape."""
    version, _, tag = spec.torch.partition("+")
    backend = load_registry().get(spec.backend)
    return Probe.from_json(
        {
            "torch": {"version": spec.torch or None, "local_tag": tag or None, "base_version": version or None},
            "build": backend.build if backend else None,
            "devices": [{"name": spec.device}] if spec.device else [],
            "runtime": {},
            "source": "imported JUnit",
        }
    )


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def import_junit(spec: ImportSpec) -> Imported:
    """Write a new cell dir for the files; raises on bad arguments or files with no testcases.
    The cell is built beside the results and put in place whole: a failure leaves nothing."""
    valid_cell_id(spec.cell_id)
    valid_cell_id(spec.backend)  # the same characters: it is shown and used in file names
    feature_map: FeatureMap | None = load_feature_map(spec.feature_map) if spec.feature_map else None
    reports = _check_files(spec.files)
    with building_cell(spec.results_dir, spec.cell_id) as cell:
        (cell.path / JUNIT_DIR).mkdir()
        copied = []
        for index, report in enumerate(reports, start=1):
            target = cell.path / JUNIT_DIR / f"{index:03d}-{report.path.name}"
            if target.suffix.lower() != ".xml":
                target = target.with_name(target.name + ".xml")
            shutil.copyfile(report.path, target)
            target.chmod(0o644)
            copied.append({"source": str(report.path), "file": f"{JUNIT_DIR}/{target.name}", "sha256": _sha256(target)})
        if feature_map is not None and spec.feature_map is not None:
            shutil.copyfile(spec.feature_map, cell.path / FEATURE_MAP)
        now = utc_now()
        manifest = Manifest(
            cell_id=spec.cell_id,
            run_id=new_run_id(),
            backend=spec.backend,
            mode="import",
            status=CellStatus.COMPLETED,
            started_at=now,
            finished_at=now,
            harness_version=__version__,
            runner=RunnerInfo(host=spec.runner or socket.gethostname(), imported_by=socket.gethostname()),
            github=github_context(),
            run_url=spec.run_url or None,
            environment=_environment(spec),
            features={fid: FeatureInfo.from_json(info) for fid, info in feature_map.features.items()}
            if feature_map
            else {},
            imported=ImportInfo(files=tuple(copied), feature_map=FEATURE_MAP if feature_map else None),
        )
        cell.write_manifest(manifest)
    return Imported(cell_dir=cell.path, files=reports)
