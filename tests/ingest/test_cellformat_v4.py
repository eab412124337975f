"""Cell format 4 (harness/ingest/cellformat_v4.py): a cell `harness import` made. Its manifest says
format 4, its plain passes are `passes` lines, the originals are kept gzipped (byte for byte, their
sha256 in the manifest), and the merge reads its event log only: with the copies gone the cell
reads the same."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from harness.cell import read_manifest
from harness.importer.junit_import import ImportSpec, import_junit
from harness.ingest import cell_reader as ingest
from harness.ingest import cellformat_v3
from harness.ingest.cellformat_v4 import FORMAT, read_collected_tests
from tests.conftest import REPO

SUREFIRE = REPO / "tests" / "dialects" / "surefire" / "junit"


def test_an_imported_cell_is_format_4_with_gzipped_originals_and_reads_from_its_log(tmp_path: Path) -> None:
    files = tuple(sorted(SUREFIRE.glob("*.xml")))
    done = import_junit(ImportSpec(files=files, backend="cpu", cell_id="s", results_dir=tmp_path))
    manifest = read_manifest(done.cell_dir / "manifest.json")
    assert manifest.cell_format == FORMAT == 4
    assert manifest.imported is not None and len(manifest.imported.files) == len(files)
    for entry, source in zip(manifest.imported.files, files, strict=True):
        copy = gzip.decompress((done.cell_dir / entry.file).read_bytes())
        assert copy == source.read_bytes() and entry.file.endswith(".xml.gz")
        assert entry.sha256 == hashlib.sha256(copy).hexdigest()
    events = [json.loads(line)["event"] for line in (done.cell_dir / "events.jsonl").read_text().splitlines()]
    assert {"passes", "result"} <= set(events) and events[0] == "session_start" and events[-1] == "session_finish"
    before = ingest.ingest_cell(done.cell_dir)
    for entry in manifest.imported.files:
        (done.cell_dir / entry.file).unlink()
    after = ingest.ingest_cell(done.cell_dir)
    assert (after.nodeids, after.results, after.errors) == (before.nodeids, before.results, before.errors)
    assert after.errors == [] and len(after.nodeids) == 30


def test_the_plan_is_read_as_format_3_reads_it() -> None:
    assert read_collected_tests is cellformat_v3.read_collected_tests
