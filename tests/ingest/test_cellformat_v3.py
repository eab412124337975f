"""Cell format 3 (harness/ingest/cellformat_v3.py): a cell an earlier `harness import` made, a `pass`
line per plain pass. It still reads as the format 4 cell it would be today; its plan comes from
collected.json's groups (format 4 reads its plan the same way)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.importer.junit_import import ImportSpec, import_junit
from harness.ingest import cell_reader as ingest
from harness.ingest.cellformat_v3 import FORMAT, read_collected_tests
from harness.outcomes import Scope
from tests.conftest import REPO

SUREFIRE = REPO / "tests" / "dialects" / "surefire" / "junit"


def test_a_format_3_cell_reads_as_the_format_4_cell_it_would_be(tmp_path: Path) -> None:
    """Imported by an earlier harness: the same tests, a `pass` line for each plain pass."""
    files = tuple(sorted(SUREFIRE.glob("*.xml")))
    done = import_junit(ImportSpec(files=files, backend="cpu", cell_id="s", results_dir=tmp_path))
    now = ingest.ingest_cell(done.cell_dir)
    lines = []
    for line in (done.cell_dir / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["event"] != "passes":
            lines.append(line)
            continue
        for nodeid, duration in zip(event["nodeids"], event["durations"], strict=True):
            lines.append(json.dumps({"event": "pass", "nodeid": nodeid, "duration": duration}, separators=(",", ":")))
    (done.cell_dir / "events.jsonl").write_text("\n".join(lines) + "\n")
    manifest = json.loads((done.cell_dir / "manifest.json").read_text())
    manifest["cell_format"] = FORMAT
    (done.cell_dir / "manifest.json").write_text(json.dumps(manifest))
    before = ingest.ingest_cell(done.cell_dir)
    assert (before.nodeids, before.results, before.errors) != ([], [], [])
    assert sorted(zip(before.nodeids, before.results, strict=True)) == sorted(
        zip(now.nodeids, now.results, strict=True)
    )
    assert before.errors == now.errors == []


def test_the_plan_is_read_from_groups() -> None:
    plan: dict[str, tuple[str | None, Scope | None]] = {}
    read_collected_tests({"groups": [{"feature": "f", "scope": "host", "tests": ["a::t"]}]}, plan)
    assert plan == {"a::t": ("f", Scope.HOST)}
    with pytest.raises(KeyError, match="groups"):
        read_collected_tests({"tests": []}, plan)
