"""The main job on the real suites: `harness run` natively, then merging two real cells."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib

import pytest

from harness.matrix_json import validate_matrix
from harness.merge.combine import merge_cell_dirs
from harness.publish.render import mdtext
from tests.cellfactory import REPO, run_sample_cell


@pytest.fixture(scope="module")
def main_job(tmp_path_factory):
    results = tmp_path_factory.mktemp("main-job")
    done = subprocess.run(
        [sys.executable, "-m", "harness", "--results-dir", str(results), "--no-progress"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    return done, results


def test_main_job_prints_the_matrix_with_every_feature(main_job):
    done, results = main_job
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    features = tomllib.loads((REPO / "suites" / "features.toml").read_text())["features"]
    header = next(line for line in done.stdout.splitlines() if line.startswith("| Feature |"))
    assert "CPU<br>`cpu-" in header
    for fid, info in features.items():
        row = next((line for line in done.stdout.splitlines() if f"(`{fid}`)" in line), None)
        assert row is not None, f"feature row {fid} missing"
        assert mdtext.text(info["title"]) in row  # as Markdown writes it (scaled\_mm)
        assert "NO DATA" not in row
    assert (results / "matrix.json").exists() and (results / "summary.md").exists()


def test_main_job_cell_is_complete(main_job):
    _, results = main_job
    (cell,) = [p for p in results.iterdir() if p.is_dir()]
    manifest = json.loads((cell / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["backend"] == "cpu"
    assert manifest["environment"]["torch"]["local_tag"] == "cpu"
    assert manifest["suite_sha"] and manifest["harness_version"]
    collected = json.loads((cell / "collected.json").read_text())
    matrix = json.loads((results / "matrix.json").read_text())
    assert collected["count"] == len(matrix["tests"]) > 50
    assert {t["feature"] for t in matrix["tests"]} == set(matrix["cells"])


def test_merge_of_two_cells_validates(main_job, sample_suite, tmp_path):
    _, results = main_job
    (cell,) = [p for p in results.iterdir() if p.is_dir()]
    other = run_sample_cell(
        sample_suite({"alpha/test_a.py": "def test_ok():\n    pass\n"}), tmp_path / "r", cell_id="cpu-other"
    )
    out = tmp_path / "matrix.json"
    subprocess.run(
        [sys.executable, "-m", "harness", "merge", str(cell), str(other.cell_dir), "-o", str(out)],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=300,
    )
    matrix = json.loads(out.read_text())
    validate_matrix(matrix)
    assert len(matrix["columns"]) == 2
    assert merge_cell_dirs([cell]).columns[0].id.startswith("cpu-")
