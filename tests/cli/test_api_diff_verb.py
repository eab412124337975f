"""`harness api-diff` as users meet it: two recorded wheels in, md or json out, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import assert_one_line_error, harness
from tests.committed import cell_dirs

WHEELS = Path(__file__).resolve().parents[1] / "data" / "api-wheels"
OLD, NEW = (str(WHEELS / f"torch-{v}-py3-none-any.whl") for v in ("2.14.1", "2.15.0"))


@pytest.mark.slow  # runs the harness CLI in a subprocess
def test_api_diff_of_the_recorded_2_14_1_and_2_15_0_wheels(tmp_path: Path) -> None:
    out = tmp_path / "api.json"
    done = harness("api-diff", OLD, NEW, "--format", "json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    functional = next(n for n in data["namespaces"] if n["namespace"] == "torch.nn.functional")
    assert "scaled_addmm" in functional["added"] and "scaled_addmm" in functional["tested"]
    assert (data["old"], data["new"]) == ("2.14.1", "2.15.0") and data["added"] >= data["tested"] > 0
    md = harness("api-diff", OLD, NEW, "--namespace", "torch.nn.functional", "--namespace", "torch.optim")
    assert md.returncode == 0, md.stderr
    assert "## torch.nn.functional\n" in md.stdout and "`scaled_addmm` (tested)" in md.stdout
    assert "## torch.optim.functional (new module)" in md.stdout and "torch.mps" not in md.stdout


@pytest.mark.slow  # runs the harness CLI in a subprocess
def test_api_diff_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "torch-2.15.0-py3-none-any.whl"
    bad.write_bytes(b"not a zip")
    assert_one_line_error(harness("api-diff", OLD, str(bad)), 4, "not a readable wheel")
    assert_one_line_error(harness("api-diff", OLD, str(tmp_path / "none.whl")), 4, "no such wheel file")
    assert_one_line_error(harness("api-diff", OLD, "newest"), 2, "neither a wheel file nor a torch version")


@pytest.mark.slow  # runs the harness CLI in a subprocess
def test_the_release_view_counts_the_public_api(tmp_path: Path) -> None:
    """`harness diff --releases --api-diff`: the 2.14.1 -> 2.15.0 step of the committed cells says how many
    public APIs 2.15.0 added and how many the suites test, from the api-diff of the recorded wheels."""
    matrix = tmp_path / "matrix.json"
    merged = harness("merge", *(str(d) for d in cell_dirs()), "-o", str(matrix))
    assert merged.returncode == 0, merged.stderr
    api = tmp_path / "api.json"
    assert harness("api-diff", OLD, NEW, "--format", "json", "-o", str(api)).returncode == 0
    data = json.loads(api.read_text(encoding="utf-8"))
    done = harness("diff", "--releases", str(matrix), "--api-diff", str(api))
    assert done.returncode == 0, done.stderr
    want = f"Public API, read from the wheels: 2.15.0: {data['added']} new public APIs, {data['tested']} tested"
    assert done.stdout.count(want) == 1, done.stdout
    assert_one_line_error(harness("diff", "--releases", str(matrix), "--api-diff", str(matrix)), 4, "not an API diff")
