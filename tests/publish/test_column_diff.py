from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.matrix_json import load_matrix
from harness.model import Matrix, TestResult
from harness.outcomes import Outcome
from harness.publish.column_diff import ChangeKind, classify, diff_matrices, regressions
from harness.publish.render.diff_report import render_diff_markdown
from tests.publishing_cells import REGRESSED, write_base_and_new


@pytest.fixture(scope="module")
def matrices(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_base_and_new(tmp_path_factory.mktemp("diff"))


def _load(path: Path) -> Matrix:
    return load_matrix(path)


def test_diff_between_real_runs_names_each_change(matrices) -> None:
    base, new = matrices
    report = diff_matrices(_load(base), _load(new))
    (cpu,) = report.columns
    assert cpu.id == "cpu"
    changes = {kind: [e.test for e in entries] for kind, entries in cpu.changes.items()}
    assert changes[ChangeKind.NEWLY_FAILING] == [REGRESSED]
    assert changes[ChangeKind.NEWLY_PASSING] == ["alpha/test_a.py::test_fixed"]
    assert changes[ChangeKind.NEWLY_SKIPPED] == ["alpha/test_a.py::test_skipnow"]
    assert changes[ChangeKind.ADDED] == ["alpha/test_a.py::test_new"]
    assert changes[ChangeKind.REMOVED] == ["alpha/test_a.py::test_gone"]
    assert "alpha/test_a.py::test_known_bad" not in [t for ts in changes.values() for t in ts], (
        "a failure that persists is no change"
    )
    assert report.regressions == 1
    assert [c.id for c in report.columns_added] == ["rocm"]
    assert report.columns_removed == []
    assert regressions(report) == [("cpu", cpu.changes[ChangeKind.NEWLY_FAILING][0])]
    assert "regressed" in cpu.changes[ChangeKind.NEWLY_FAILING][0].message
    moved = {f.feature: f for f in cpu.features if f.changed}
    assert moved["alpha"].newly_failing == 1 and moved["alpha"].newly_passing == 1


def test_markdown_and_json_outputs_name_test_and_backend(matrices, capsys) -> None:
    base, new = matrices
    assert main(["diff", str(base), str(new)]) == 0
    md = capsys.readouterr().out
    assert "### CPU `cpu`" in md and "**Newly failing** (1)" in md
    assert f"`{REGRESSED}` (passed → failed)" in md
    assert "**Columns added:** ROCm 7.14 `rocm`" in md
    assert "1 new regression(s)" in md
    assert main(["diff", str(base), str(new), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["columns"][0]["changes"]["newly_failing"][0]["test"] == REGRESSED


def test_identical_matrices_have_no_changes(matrices) -> None:
    base, _ = matrices
    report = diff_matrices(_load(base), _load(base))
    assert report.regressions == 0
    assert not any(report.columns[0].changes.values())
    assert not any(f.changed for f in report.columns[0].features)
    assert "No new regressions." in render_diff_markdown(report)


def test_removed_column_is_reported(matrices) -> None:
    base, new = matrices
    report = diff_matrices(_load(new), _load(base))
    assert [c.id for c in report.columns_removed] == ["rocm"]


@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        ("passed", "failed", "newly_failing"),
        ("skipped", "crashed", "newly_failing"),
        ("failed", "error", "changed"),
        ("failed", "passed", "newly_passing"),
        ("xfailed", "xpassed", "newly_passing"),
        ("passed", "skipped", "newly_skipped"),
        ("passed", "not-run", "changed"),
        ("passed", "passed", None),
        (None, "failed", "added"),
        ("failed", None, "removed"),
    ],
)
def test_classification_rules(before, after, kind) -> None:
    def wrap(outcome):
        return None if outcome is None else TestResult(outcome=Outcome(outcome))

    assert classify(wrap(before), wrap(after)) == (ChangeKind(kind) if kind else None)


def test_unreadable_input_exits_4(tmp_path: Path, matrices, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["diff", str(bad), str(matrices[1])]) == 4
    assert "not a readable matrix.json" in capsys.readouterr().err


def test_a_release_candidate_stands_beside_the_previous_final_release_not_a_nightly() -> None:
    """The committed cells' release line (2.13.0 → 2.14.1 → 2.15.0, all on the CPU), with 2.15.0's column
    recast as 2.16's candidate (test channel) and a 2.16 nightly added: the candidate is compared with
    2.14.1, the final release before it, and the nightly with the version before it."""
    import dataclasses

    from harness.publish.column_diff import channel_of, release_pairs
    from tests.committed import releases_matrix

    matrix = releases_matrix()
    cpu, cu130, cu132, _ = matrix.columns
    matrix = dataclasses.replace(matrix, columns=(cpu, cu130, cu132))  # the Python 3.15 line left aside
    rc = dataclasses.replace(
        cu132,
        id="cu132-2.16.0",
        channel="test",
        environment=dataclasses.replace(cu132.environment, torch="2.16.0+cu132"),
    )
    nightly = dataclasses.replace(
        cu132,
        id="cu132-2.16.0.dev20261130",
        channel=None,  # an older cell: the version says it is a nightly
        environment=dataclasses.replace(cu132.environment, torch="2.16.0.dev20261130+cu132"),
    )
    recast = dataclasses.replace(matrix, columns=(cpu, cu130, nightly, rc))
    assert [channel_of(c) for c in recast.columns] == ["release", "release", "nightly", "test"]
    assert release_pairs(recast) == [(cpu.id, cu130.id), (cu130.id, nightly.id), (cu130.id, rc.id)]
