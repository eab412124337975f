"""Collecting a run's cells with a deadline (harness/github/artifacts.py), against a store of artifacts that
fills as the clock moves (the real API is exercised under act: tests/workflows/)."""

from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

import pytest

from harness.errors import InputError, UsageError
from harness.github.artifacts import collect, late_candidates, late_cells, parse_duration, unpack
from harness.github.client import Artifact, Job
from harness.merge.combine import merge_cell_dirs
from harness.plan import PlannedCell, read_plan
from tests.publishing_cells import real_cells


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _cell_zip(cell: Path, cell_id: str) -> bytes:
    files = {f"{cell_id}-host/{p.name}": p.read_bytes() for p in cell.iterdir() if p.is_file()}
    return _zip({**files, f"job-{cell_id}.txt": b"status: success\n"})


class Store:
    """Artifacts of runs, each appearing at a time on a fake clock; records what was asked."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timeline: dict[int, list[tuple[float, str, bytes]]] = {}
        self.job_timeline: dict[int, list[tuple[float, str, str, str | None]]] = {}
        self.asked: list[tuple[str, int | str]] = []

    def job(self, run_id: int, at: float, name: str, status: str, conclusion: str | None = None) -> None:
        self.job_timeline.setdefault(run_id, []).append((at, name, status, conclusion))

    def jobs(self, run_id: int) -> list[Job]:
        latest: dict[str, Job] = {}
        for at, name, status, conclusion in sorted(self.job_timeline.get(run_id, [])):
            if at <= self.now:
                latest[name] = Job(name=name, status=status, conclusion=conclusion, started_at=None)
        return list(latest.values())

    def add(self, run_id: int, at: float, name: str, data: bytes) -> None:
        self.timeline.setdefault(run_id, []).append((at, name, data))

    def artifacts(self, run_id: int) -> list[Artifact]:
        self.asked.append(("list", run_id))
        return [
            Artifact(id=hash(name) & 0xFFFF, name=name, size=len(data), expired=False, download_url=f"{run_id}/{name}")
            for at, name, data in self.timeline.get(run_id, [])
            if at <= self.now
        ]

    def download(self, artifact: Artifact) -> bytes:
        self.asked.append(("download", artifact.name))
        run_id, name = artifact.download_url.split("/", 1)
        return next(data for at, n, data in self.timeline[int(run_id)] if n == name)

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_cells_are_awaited_and_one_no_runner_takes_becomes_no_data_at_the_deadline(tmp_path: Path) -> None:
    cells = real_cells()
    store = Store()
    store.job(7, 0, "matrix / cell cpu", "in_progress")  # a reusable workflow's job, as GitHub names it
    store.add(7, 300, "cell-cpu", _cell_zip(cells.new, "cpu"))
    store.job(7, 300, "matrix / cell cpu", "completed", "success")
    store.job(7, 60, "cell cu130", "in_progress")
    store.add(
        7, 120, "cell-cu130", _zip({"job-cu130.txt": b"status: failure\nreason: harness: error: no base image\n"})
    )
    store.job(7, 0, "cell rocm", "queued")  # planned, never started: no runner online
    store.job(7, 0, "cell xpu", "in_progress")  # a job that ends without its artifact (a renamed upload)
    store.job(7, 200, "cell xpu", "completed", "failure")
    lines: list[str] = []
    found = collect(
        store, 7, ["cpu", "cu130", "rocm", "xpu"], tmp_path, deadline=600, deadline_text="10 m", cell_timeout=3600,
        poll=60, clock=lambda: store.now, sleep=store.sleep, say=lines.append,
    )  # fmt: skip
    assert found.arrived == ["cpu"]
    assert found.missing == {
        "cu130": "its job ended (failure) without a cell: harness: error: no base image",
        "xpu": "its job ended (failure) without uploading cell-xpu",
        "rocm": "no runner picked it up within 10 m",
    }
    assert 600 < store.now <= 720, "it gave up on rocm at the deadline, not before and not long after"
    assert "rocm: no runner picked it up within 10 m; published as NO DATA" in "\n".join(lines)
    plan = [PlannedCell(c, backend=c, missing=found.missing.get(c, "")) for c in ("cpu", "cu130", "rocm")]
    matrix = merge_cell_dirs([p.parent for p in tmp_path.rglob("manifest.json")], plan)
    rocm = matrix.column("rocm")
    assert rocm.state.value == "no-data" and rocm.error == "no results: no runner picked it up within 10 m"


def test_a_started_cell_is_awaited_past_the_deadline_up_to_its_own_timeout(tmp_path: Path) -> None:
    store = Store()
    store.job(8, 10, "cell xpu", "in_progress")
    found = collect(
        store, 8, ["xpu"], tmp_path, deadline=60, deadline_text="1 m", cell_timeout=1800, poll=60,
        clock=lambda: store.now, sleep=store.sleep, say=lambda _: None,
    )  # fmt: skip
    assert found.missing == {"xpu": "a runner took it, but no cell came within 30 min"}
    assert store.now > 1800


def test_cells_that_arrived_late_in_earlier_runs_are_taken_in(tmp_path: Path) -> None:
    cells = real_cells()
    store = Store()
    store.add(5, 0, "cell-cpu", _cell_zip(cells.base, "cpu"))
    store.add(6, 0, "cell-other", _cell_zip(cells.base, "other"))
    summaries = [
        ("gh5-1", [("cpu", False), ("cu126-2.15-not-shipped", False), ("xpu", True)]),
        ("gh6-1", [("cpu", True), ("other", True)]),
        ("gh9-1", [("cpu", False)]),  # the run collecting now: its own cells are not late
    ]
    candidates = late_candidates(summaries, current_run=9)
    assert candidates == [(5, "cpu")]
    assert late_cells(store, candidates, tmp_path, say=lambda _: None) == [(5, "cpu")]
    assert (tmp_path / "late-5-cpu" / "cpu-host" / "manifest.json").is_file()
    assert ("list", 6) not in store.asked, "runs without a NO DATA column are not looked at"


def test_an_artifact_cannot_write_outside_its_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="would land outside"):
        unpack(_zip({"../../escape.txt": b"x"}), tmp_path / "cell-evil")
    assert not (tmp_path.parent / "escape.txt").exists()
    with pytest.raises(InputError, match="not a zip"):
        unpack(b"not a zip", tmp_path / "cell-x")


def test_durations(tmp_path: Path) -> None:
    assert [parse_duration(t) for t in ("45s", "90m", "3h", "1.5d")] == [45, 5400, 10800, 129600]
    with pytest.raises(UsageError, match="is not a number with s, m, h or d"):
        parse_duration("3 hours")


def test_the_merge_names_the_collectors_reason(tmp_path: Path) -> None:
    matrix = merge_cell_dirs([], [PlannedCell("xpu", backend="xpu", missing="no runner picked it up within 3 h")])
    assert matrix.column("xpu").error == "no results: no runner picked it up within 3 h"


def test_harness_collect_against_githubs_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """The verb end to end through the REST client and the API stand-in: the cpu cell arrives, cu130
    never starts and is given up at the deadline, and the plan written for the merge says why."""
    import json

    from harness.cli import main
    from tests.workflows.github_standin import GitHubStandIn

    cells = real_cells()
    store = tmp_path / "run-7"
    artifact = store / "artifacts" / "cell-cpu"
    shutil.copytree(cells.new, artifact / "cpu-host")
    (artifact / "job-cpu.txt").write_text("status: success\n")
    hub = GitHubStandIn("o/r", "tok", runs={7: store}).start()
    try:
        hub.job_event(7, {"jobID": "cell", "matrix": {"cell_id": "cpu"}, "jobResult": "success"})
        monkeypatch.setenv("GITHUB_API_URL", hub.api_url)
        monkeypatch.setenv("GITHUB_TOKEN", "tok")
        plan = tmp_path / "plan.json"
        plan.write_text(
            json.dumps({"include": [{"cell_id": "cpu", "backend": "cpu"}, {"cell_id": "cu130", "backend": "cu130"}]})
        )
        argv = [
            "collect",
            "--plan",
            str(plan),
            "--dest",
            str(tmp_path / "cells"),
            "--expect-out",
            str(tmp_path / "e.json"),
        ]
        assert main([*argv, "--run-id", "7", "--repo", "o/r", "--deadline", "1s", "--poll", "1s"]) == 0
    finally:
        hub.stop()
    out = capsys.readouterr()
    assert "collect: cpu: arrived" in out.out and "collect: cu130: no runner picked it up within 1 s" in out.out
    assert "1 of 2 planned cell(s) arrived, 1 missing" in out.err
    assert read_plan(tmp_path / "e.json") == (
        PlannedCell("cpu", backend="cpu"),
        PlannedCell("cu130", backend="cu130", missing="no runner picked it up within 1 s"),
    )
    assert "missing" not in json.loads((tmp_path / "e.json").read_text())["include"][0], "said only where missing"
    assert (tmp_path / "cells" / "cell-cpu" / "cpu-host" / "manifest.json").is_file()
    assert hub.unexpected == [] and {c.authorization for c in hub.api_calls(contains="/api/")} == {"Bearer tok"}
    assert hub.blob_with_token == [] and hub.api_calls("GET", "/blob/"), "downloaded from storage, without the token"
