"""Bare JUnit files from another CI (PyTorch's own test reports, a vendor's suite) -> a cell.

The user states what the files are (backend, torch build, device, cell id, run URL): a
column's identity comes from that manifest, never from the XML. Each file is read once, as it
is copied (gzipped) under the cell's junit/ for provenance, and its tests are decided there by
the identity and retry rules of docs/outcomes.md; the cell's events.jsonl then holds them in the
compact form of a run's own log (cell format 4, harness/ingest/cellformat_v4.py), so every merge
reads that log and never the XML again. The feature map (if any) is kept beside them, so the
cell merges the same way anywhere, later, on its own.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import queue
import socket
import stat
import threading
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final

from harness import __version__, gcpause, outputs
from harness.cell import (
    CellDir,
    CellStatus,
    FeatureInfo,
    ImportedFile,
    ImportInfo,
    Manifest,
    RunnerInfo,
    building_cell,
    github_context,
    new_run_id,
    utc_now,
)
from harness.errors import InputError, UsageError
from harness.importer.arguments import (
    check_backend,
    check_cell_id,
    check_input,
    check_text,
    check_torch,
    check_url,
    copied_name,
    open_input,
)
from harness.importer.eventlog_writer import write_cell_log
from harness.ingest import cellformat_v4
from harness.ingest.cell_reader import FEATURE_MAP, CellFeatures, CellResult, decide_cell
from harness.ingest.featuremap import FeatureMap, parse_feature_map
from harness.ingest.junit_reader import JUNIT_DIR, read_junit_files
from harness.ingest.plainstore import Gather
from harness.model import TestResult
from harness.probe import Probe
from harness.registry import Backend
from harness.torch_build import TorchVersion

FEATURE_MAP_CAP: Final = 4 << 20  # bytes; a map of rules is a few KB
GZIP_LEVEL: Final = 1  # the provenance copy: fast to write, about a tenth of the size of chatty XML
BLOCK: Final = 1 << 20


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
    shared: list[str] = field(default_factory=list)  # one line per input sharing test ids with an earlier one
    feature_map: FeatureMap | None = None
    cell: CellResult | None = None  # the cell's tests, as decided at import
    rows: dict[str, int] = field(default_factory=dict)  # tests per feature row, in the order the rows first appear
    rules_taken: tuple[int, ...] = ()  # tests each rule of the feature map took (the first rule that matches)


@dataclass(frozen=True)
class _Checked:
    """The spec's arguments, checked and normalised (importer/arguments.py)."""

    cell_id: str
    backend: Backend
    torch: TorchVersion | None
    run_url: str | None
    device: str
    runner: str


def expand_inputs(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """The files to import: each file as given, and a folder's `*.xml` files in name order
    (regular files only; links and sub-folders are left alone, never followed)."""
    files: list[Path] = []
    for path in paths:
        try:
            is_dir = stat.S_ISDIR(os.lstat(path).st_mode)
        except OSError:
            is_dir = False  # check_input names the problem
        if not is_dir:
            files.append(path)
            continue
        found = sorted(
            entry
            for entry in path.iterdir()
            if entry.name.lower().endswith(".xml") and stat.S_ISREG(os.lstat(entry).st_mode)
        )
        if not found:
            raise InputError(f"{path}: a folder without *.xml files", hint="give the JUnit files or their folder")
        files.extend(found)
    return tuple(files)


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


def _fingerprint(source: Path) -> tuple[int, str]:
    """(size, sha256 of the first block): equal for an input given twice, and cheap; only inputs
    whose fingerprints are equal are hashed whole (`_sha256`) to tell."""
    with open_input(source) as handle:
        size = os.fstat(handle.fileno()).st_size
        return size, hashlib.sha256(handle.read(BLOCK)).hexdigest()


def _sha256(source: Path) -> str:
    digest = hashlib.sha256()
    with open_input(source) as handle:
        while block := handle.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()


class CopyingReader:
    """The checked input as the JUnit reader reads it, written gzipped to the cell's copy and
    hashed on the way: one read of each file. Closing the reader copies whatever the parse left
    unread (it stops at a broken tag), so the copy is whole.

    The speed trick, behind `plain=`: the hashing and compression (zlib and hashlib release the
    interpreter's lock on large blocks) run in a thread beside the parse, on the second core, and
    zlib writes the gzip format itself (its own CRC, no second pass over each block).
    `plain=True` hashes and compresses each block in the read, one after the other;
    tests/importer/test_junit_import.py holds both to the same copy and hash."""

    def __init__(self, source: Path, target: Path, *, plain: bool = False) -> None:
        self.source: BinaryIO = open_input(source)
        self.raw = target.open("xb")
        # wbits 31: a gzip member (header with no name and mtime 0, then the CRC and size).
        self.compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
        self.digest = hashlib.sha256()
        self.failed: BaseException | None = None
        self.blocks: queue.Queue[bytes | None] | None = None
        self.worker: threading.Thread | None = None
        if not plain:
            self.blocks = queue.Queue(maxsize=8)  # bounded: memory stays flat
            self.worker = threading.Thread(target=self._copy_blocks, name="junit-copy", daemon=True)
            self.worker.start()

    def _copy(self, block: bytes) -> None:
        if self.failed is None:
            try:
                self.digest.update(block)
                self.raw.write(self.compressor.compress(block))
            except OSError as err:  # disk full: said when the reader closes
                self.failed = err

    def _copy_blocks(self) -> None:
        assert self.blocks is not None
        while (block := self.blocks.get()) is not None:
            self._copy(block)

    def read(self, size: int = -1) -> bytes:
        data = self.source.read(size)
        if data:
            if self.blocks is not None:
                self.blocks.put(data)
            else:
                self._copy(data)
        return data

    def close(self) -> None:
        try:
            while self.read(BLOCK):
                pass
        finally:
            if self.blocks is not None and self.worker is not None:
                self.blocks.put(None)
                self.worker.join()
            try:
                if self.failed is None:
                    self.raw.write(self.compressor.flush())
            except OSError as err:
                self.failed = err
            finally:
                self.raw.close()
                self.source.close()
        if self.failed is not None:
            raise self.failed

    def __enter__(self) -> CopyingReader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def import_junit(spec: ImportSpec, *, plain: bool = False) -> Imported:
    """Write a new cell dir for the files; raises on bad arguments or files with no testcases.
    Arguments and the inputs' kinds are checked before anything is written; the cell is then built
    beside the results and put in place whole: any failure leaves nothing. `plain`: every speed
    trick's plain path (CopyingReader, junit_reader), the same cell, for tests."""
    spec = dataclasses.replace(spec, files=expand_inputs(spec.files))
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
        # The collector paused: reading a file makes a few objects per testcase, none in a cycle, and
        # its passes over them took about a tenth of a lean file's import (harness/gcpause.py).
        with building_cell(spec.results_dir, checked.cell_id) as cell, gcpause.paused():
            done = _build(spec, checked, cell, feature_map, map_bytes, plain=plain)
    except OSError as err:  # disk full, a read-only folder...: exit 6 as every writer's, nothing left
        if err.filename is not None and Path(err.filename) in spec.files:
            raise InputError(f"{err.filename}: cannot read: {err.strerror or err}") from None
        raise outputs.cannot_write(spec.results_dir, err) from None
    done.cell_dir = cell.path  # where it was renamed into place
    return done


def _build(
    spec: ImportSpec,
    checked: _Checked,
    cell: CellDir,
    feature_map: FeatureMap | None,
    map_bytes: bytes,
    *,
    plain: bool,
) -> Imported:
    (cell.path / JUNIT_DIR).mkdir()
    if feature_map is not None:
        (cell.path / FEATURE_MAP).write_bytes(map_bytes)
    duplicates: list[str] = []
    seen: dict[str, Path] = {}  # sha256 -> the input first given with it
    sources: list[Path] = []
    fingerprints: dict[tuple[int, str], list[Path]] = {}
    fingerprint_of = {source: _fingerprint(source) for source in spec.files}  # each file's head read once
    for source in spec.files:
        fingerprints.setdefault(fingerprint_of[source], []).append(source)
    for source in spec.files:
        alike = fingerprints[fingerprint_of[source]]
        sha = _sha256(source) if len(alike) > 1 else f"unique-{len(sources)}"
        if sha in seen:
            # The same report given twice (a glob that matched it twice, a shard uploaded twice):
            # its tests ran once.
            duplicates.append(
                f"{source}: the same content as {seen[sha]} (sha256 {sha[:12]}...): imported once, this copy left out"
            )
            continue
        seen[sha] = source
        sources.append(source)
    width = max(3, len(str(len(sources))))
    targets = {src: cell.path / JUNIT_DIR / (copied_name(n, src, width) + ".gz") for n, src in enumerate(sources, 1)}
    readers: dict[Path, CopyingReader] = {}

    def opener(source: Path) -> CopyingReader:
        readers[source] = CopyingReader(source, targets[source], plain=plain)
        return readers[source]

    gather, junit_errors, shared, reads = Gather(), [], [], []
    read_junit_files(sources, gather, junit_errors, shared, opener=opener, reads=reads, label=str, plain=plain)
    reports = [FileReport(path=r.path, testcases=r.count, problems=list(r.errors)) for r in reads]
    if not any(r.testcases for r in reports):
        problems = "; ".join(p for r in reports for p in r.problems) or "no <testcase> elements"
        raise InputError(f"none of the files holds a readable testcase: {problems}")
    copied = []
    for source in sources:
        sha = readers[source].digest.hexdigest()
        hashed = next((known for known, path in seen.items() if path == source), None)
        if hashed is not None and not hashed.startswith("unique-") and hashed != sha:
            raise InputError(f"{source}: changed while it was imported; import it again")
        copied.append(ImportedFile(source=str(source), file=f"{JUNIT_DIR}/{targets[source].name}", sha256=sha))
    now = utc_now()
    manifest = Manifest(
        cell_format=cellformat_v4.FORMAT,
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
    features = CellFeatures(manifest, cell.path, [])
    decided = decide_cell(cell.path, manifest, gather, list(junit_errors), features, list(shared), plain=plain)
    write_cell_log(cell.path, _named_features(decided, gather), errors=junit_errors, notes=shared)
    cell.write_manifest(manifest)
    return Imported(
        cell_dir=cell.path,
        files=reports,
        duplicates=duplicates,
        shared=shared,
        feature_map=feature_map,
        cell=decided,
        rows=dict(Counter(decided.test_features)),
        rules_taken=_rules_taken(feature_map, decided.nodeids) if feature_map is not None else (),
    )


def _rules_taken(feature_map: FeatureMap, test_ids: list[str]) -> tuple[int, ...]:
    """How many tests each rule of the map took (the first rule that matches takes a test)."""
    taken = Counter(feature_map.rule_of(test_id) for test_id in test_ids)
    return tuple(taken[index] for index in range(len(feature_map.rules)))


def _named_features(cell: CellResult, gather: Gather) -> Iterator[tuple[str, TestResult, str | None]]:
    """Each test with the feature its report named (a `feature` property), or None: the feature
    map kept in the cell places it when the cell is merged."""
    tests, recorded = gather.tests, gather.recorded
    unnamed = (None, None)
    for nodeid, result in zip(cell.nodeids, cell.results, strict=True):
        test = tests.get(nodeid)
        yield nodeid, result, (test.feature if test is not None else recorded.get(nodeid, unnamed)[0])
