"""The runs of a results dir (harness/merge/inventory.py, `harness cells`): listed with their role,
forgotten whole into the trash, pruned (superseded NO DATA attempts, older runs beyond --keep).

The results dir holds copies of committed real cells, restated as runs of one cell id at other times:
the CPU 2.13.0 run in use, two older full runs, an older NO DATA attempt (a real infra-error cell),
and a NO DATA column of its own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.commands.run import stale_line
from harness.errors import UsageError
from harness.merge import inventory
from harness.merge.combine import merge_cell_dirs
from harness.model import ColumnState
from tests.committed import CELLS, SAMPLES

BASE = "cpu-2.13.0"


def _copy(source: Path, dest: Path, **changes: str) -> Path:
    shutil.copytree(source, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest.update(changes)
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    shutil.copytree(CELLS / BASE, root / f"{BASE}-20261201T200409Z")
    _copy(CELLS / BASE, root / f"{BASE}-20261129T000000Z", run_id="r-old", started_at="2026-11-29T00:00:00Z")
    _copy(CELLS / BASE, root / f"{BASE}-20261128T000000Z", run_id="r-older", started_at="2026-11-28T00:00:00Z")
    nodata = SAMPLES / "publishing-nodata"
    _copy(nodata, root / f"{BASE}-20261130T000000Z", cell_id=BASE, run_id="r-nodata", started_at="2026-11-30T00:00:00Z")
    shutil.copytree(nodata, root / "rocm-20261201T200400Z")
    return root


def _roles(root: Path) -> dict[str, tuple[str, str]]:
    return {r.manifest.run_id: (r.state, r.role) for r in inventory.list_runs(root)}


def test_every_run_is_listed_with_its_state_and_whether_a_column_uses_it(results: Path) -> None:
    roles = _roles(results)
    base = json.loads((CELLS / BASE / "manifest.json").read_text())["run_id"]
    assert roles == {
        base: ("completed", "in use"),
        "r-old": ("completed", f"superseded by run {base}"),
        "r-older": ("completed", f"superseded by run {base}"),
        "r-nodata": ("NO DATA", f"superseded by run {base}"),
        "20261201T200400Z-e0fbaf": ("NO DATA", "in use"),
    }
    assert all(r.size > 0 for r in inventory.list_runs(results))


def test_prune_drops_superseded_no_data_and_runs_beyond_keep(results: Path) -> None:
    report = inventory.prune(results, keep=1, dry_run=True)
    assert sorted(r.manifest.run_id for r in report.dropped) == ["r-nodata", "r-older"]
    assert len(inventory.list_runs(results)) == 5, "a dry run removes nothing"
    report = inventory.prune(results, keep=1)
    assert report.freed > 0
    left = {r.manifest.run_id for r in inventory.list_runs(results)}
    assert "r-nodata" not in left and "r-older" not in left and "r-old" in left
    assert not (results / inventory.TRASH).exists(), "prune leaves no trash behind"
    inventory.prune(results, keep=0)
    assert {r.role for r in inventory.list_runs(results)} == {"in use"}, "the runs in use are never pruned"


def test_forget_moves_whole_runs_to_the_trash_and_the_merge_no_longer_sees_them(results: Path) -> None:
    gone = inventory.forget(results, ["rocm"])
    assert [r.cell_id for r in gone] == ["rocm"]
    trash = results / inventory.TRASH
    assert (trash / "rocm-20261201T200400Z" / "manifest.json").is_file(), "moved whole"
    runs = [p for p in inventory.find_runs(results)]
    assert all("rocm" not in p.name for p in runs)
    matrix = merge_cell_dirs(runs, jobs=1)
    assert [c.id for c in matrix.columns] == [BASE]
    inventory.forget(results, ["r-old", f"{BASE}-20261128T000000Z"])  # a run id, a run dir's name
    assert len(list(trash.iterdir())) == 3
    report = inventory.prune(results, keep=5)
    assert report.trash_emptied == 3 and not trash.exists()


def test_forget_an_unknown_id_is_one_clear_error(results: Path) -> None:
    with pytest.raises(
        UsageError, match=r"no run or cell 'cu130' in the results dir \(cell ids here: cpu-2.13.0, rocm\)"
    ):
        inventory.forget(results, ["cu130"])
    with pytest.raises(UsageError, match="no results dir"):
        inventory.list_runs(results / "missing")


def test_the_older_no_data_runs_the_main_job_names(results: Path) -> None:
    stale = inventory.older_no_data(results)
    assert sorted(r.manifest.run_id for r in stale) == ["20261201T200400Z-e0fbaf", "r-nodata"]
    just_run = results / "rocm-20261201T200400Z"
    assert [r.manifest.run_id for r in inventory.older_no_data(results, just_run)] == ["r-nodata"]
    line = stale_line(stale, results)
    assert line.count("\n") == 0
    assert line.startswith(f"harness: note: 2 older NO DATA run(s) in {results} (cpu-2.13.0, rocm): ")
    assert f"`harness cells prune --results-dir {results}`" in line
    assert stale_line(stale, Path("results")).endswith("`harness cells forget ID` any run or cell")
    matrix = merge_cell_dirs(inventory.find_runs(results), jobs=1)
    assert [c.state for c in matrix.columns if c.id == "rocm"] == [ColumnState.NO_DATA]


def test_the_cells_verb_lists_forgets_and_prunes(results: Path, capsys) -> None:
    assert main(["cells", "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["CELL", "ID", "RUN", "WHEN", "STATE", "BACKEND", "TORCH", "SIZE", "USE"]
    where = f"--results-dir {results}"
    assert len(out) == 1 + 5 + 1 and out[-1] == f"1 superseded NO DATA run(s): `harness cells prune {where}` drops them"
    assert main(["cells", "forget", "rocm", "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "moved 1 run(s) to" in out[-2] and f"`harness cells prune {where}` empties it" in out[-2], "its own options"
    assert out[-1] == f"next: harness merge {results} -o {results / 'matrix.json'}   (the matrix of the runs left)"
    assert main(["cells", "prune", "--results-dir", str(results), "--keep", "0"]) == 0
    out = capsys.readouterr().out
    assert "dropped 3 run(s); emptied the trash (1 run(s) forgotten earlier)" in out
    assert main(["cells", "prune", "nothing", "--results-dir", str(results)]) == 2
    assert "takes no ids" in capsys.readouterr().err
    assert main(["cells", "forget", "--results-dir", str(results)]) == 2


def test_forget_and_prune_merge_the_results_dirs_matrix_again(results: Path, capsys) -> None:
    """Issue 42: `cells forget` left matrix.json as it was, its columns still there."""
    assert main(["merge", str(results), "-o", str(results / "matrix.json")]) == 0
    assert {c["id"] for c in json.loads((results / "matrix.json").read_text())["columns"]} == {BASE, "rocm"}
    capsys.readouterr()
    assert main(["cells", "forget", "rocm", "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"merged again: {results / 'matrix.json'} (1 column(s): {BASE})"
    assert [c["id"] for c in json.loads((results / "matrix.json").read_text())["columns"]] == [BASE]
    assert (results / "summary.md").is_file()
    assert main(["cells", "prune", "--results-dir", str(results), "--keep", "0"]) == 0
    assert "merged again:" in capsys.readouterr().out
    assert not list(results.glob(".harness-tmp-*")), "written through outputs.py: no temp file left"


def _partial(source: Path, dest: Path, run_id: str, at: str, **changes: object) -> Path:
    copy = _copy(source, dest, run_id=run_id, started_at=at)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest.update(selection={"tests": ["amp/test_amp.py::x"]}, **changes)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


def test_prune_keeps_a_kept_partial_runs_base_and_drops_runs_that_ran_nothing(results: Path) -> None:
    """Issue 42: `prune --keep 1` kept a 1-test partial run and dropped the complete run under it."""
    _partial(CELLS / BASE, results / f"{BASE}-20261129T120000Z", "r-old-partial", "2026-11-29T12:00:00Z")
    _partial(
        CELLS / BASE, results / f"{BASE}-20261202T000000Z", "r-typo", "2026-12-02T00:00:00Z",
        status="not-started", exit={"code": 5, "signal": None, "meaning": "no tests collected"},
    )  # fmt: skip
    roles = _roles(results)
    assert (
        roles["r-old-partial"][1]
        == "superseded by run " + json.loads((CELLS / BASE / "manifest.json").read_text())["run_id"]
    )
    assert roles["r-typo"][0] == "NO DATA" and roles["r-typo"][1].startswith("run r-typo ran nothing")
    dropped = {r.manifest.run_id for r in inventory.prune(results, keep=1, dry_run=True).dropped}
    assert dropped == {"r-nodata", "r-older", "r-typo"}, "r-old and the partial run laid over it go or stay together"
    dropped = {r.manifest.run_id for r in inventory.prune(results, keep=0, dry_run=True).dropped}
    assert {"r-old", "r-old-partial", "r-older", "r-typo"} <= dropped


def test_cell_dirs_finds_cells_at_the_first_depth_that_has_any(results: Path, tmp_path: Path) -> None:
    """`harness merge DIR` and `harness run`'s own merge: a cell is taken as given, a folder is looked
    into (downloaded artifacts hold a cell one level further down), hidden folders (a cell being
    built, the trash) are left out, and a folder without cells stays, so the merge names it."""
    runs = sorted(p for p in results.iterdir())
    assert inventory.cell_dirs([results]) == runs
    assert inventory.cell_dirs([runs[0]]) == [runs[0]], "a cell is a cell"
    artifacts = tmp_path / "artifacts"
    shutil.copytree(CELLS / BASE, artifacts / "cell-cpu" / "cpu-host")
    shutil.copytree(CELLS / BASE, artifacts / ".building" / "cpu-host")
    (artifacts / "cell-empty").mkdir()
    assert inventory.cell_dirs([artifacts]) == [artifacts / "cell-cpu" / "cpu-host"]
    empty = tmp_path / "nothing"
    empty.mkdir()
    missing = tmp_path / "absent"
    assert inventory.cell_dirs([empty, missing]) == [empty, missing]
