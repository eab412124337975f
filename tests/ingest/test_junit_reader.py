"""The JUnit reader (harness/ingest/junit_reader.py): its shortcut (testcases that passed plainly kept
as plain passes) held to its plain path on the real reports of every dialect and on the committed
cells' junit.xml, and the shortcut's rule held to decide()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cell import read_manifest
from harness.importer.junit_import import ImportSpec, import_junit
from harness.ingest.attempts import case_attempts
from harness.ingest.cell_reader import CellFeatures, CellResult, decide_cell
from harness.ingest.decide import decide
from harness.ingest.junit_reader import junit_files, junit_plain_pass, read_junit_files
from harness.ingest.junit_stream import JUnitRead, iter_junit
from harness.ingest.plainstore import Gather
from harness.outcomes import Outcome
from tests.committed import cell_dirs
from tests.conftest import REPO

DIALECTS = REPO / "tests" / "dialects"
REPORTS = sorted(
    {
        expected.parent / name
        for expected in DIALECTS.glob("*/expected*.json")
        for name in json.loads(expected.read_text(encoding="utf-8"))["junit_files"]
    }
)


def _cell(cell: CellResult) -> list[tuple]:
    return [*sorted(zip(cell.nodeids, cell.test_features, cell.results, strict=True)), (cell.errors, cell.notes)]


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: str(p.relative_to(DIALECTS)))
def test_fast_path_and_plain_path_agree(tmp_path: Path, report: Path) -> None:
    """Plain passes kept without attempts give the very results of the plain path, on every real
    report of every dialect, and on two reports sharing ids (the import decides the tests: it is
    where the JUnit is read)."""
    files = (report,) if report.name != "junit-xunit2.xml" else (DIALECTS / "pytest" / "junit-xunit1.xml", report)
    fast = import_junit(ImportSpec(files=files, backend="cpu", cell_id="c", results_dir=tmp_path)).cell
    plain = import_junit(ImportSpec(files=files, backend="cpu", cell_id="c", results_dir=tmp_path), plain=True).cell
    assert fast is not None and plain is not None
    assert _cell(fast) == _cell(plain)


@pytest.mark.parametrize("cell", cell_dirs(), ids=lambda p: p.name)
def test_fast_path_and_plain_path_agree_on_the_committed_cells_junit(cell: Path) -> None:
    """The committed real cells' junit.xml read alone (as a merge reads it when the event log is
    damaged): the same tests either way."""
    manifest = read_manifest(cell / "manifest.json")
    decided = []
    for plain in (False, True):
        gather, errors = Gather(), []
        assert read_junit_files(junit_files(cell), gather, errors, [], plain=plain) > 0
        features = CellFeatures(manifest, cell, [])
        decided.append(_cell(decide_cell(cell, manifest, gather, errors, features, [], plain=plain)))
    assert decided[0] == decided[1]


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: str(p.relative_to(DIALECTS)))
def test_a_plain_pass_is_what_decide_calls_a_pass_with_nothing_to_keep(report: Path) -> None:
    """Every testcase the shortcut takes, decided the plain way, passed once with no message."""
    read = JUnitRead(path=report)
    taken = [case for case in iter_junit(report, read) if junit_plain_pass(case)]
    for case in taken:
        result = decide(case_attempts(case, pytest_phases=False))
        assert result.outcome is Outcome.PASSED and result.message is None and result.attempts == 1
