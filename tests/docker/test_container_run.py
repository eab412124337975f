"""Real container runs: the real suites in the cpu image, through the API and the CLI; the cell,
its manifest (image digest, container exit) and the merged matrix; containment; no leftovers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.cell import read_manifest
from harness.merge.combine import merge_cell_dirs
from harness.registry import get_backend
from harness.run.container import ContainerSettings, run_containerized
from harness.run.execute import RunOptions
from tests.docker.conftest import PER_FEATURE_SUBSET, REPO, cell_id, harness_cli, only_cell_dir

FEATURES = ("graphs", "linalg", "export", "hub", "sparsity")


def _column_counts(matrix: dict[str, Any]) -> dict[str, dict[str, int]]:
    """feature id -> outcome counts of the matrix's only column."""
    assert len(matrix["columns"]) == 1
    column_id = matrix["columns"][0]["id"]
    return {feature: (cells.get(column_id) or {}).get("counts") or {} for feature, cells in matrix["cells"].items()}


def test_real_suites_in_container_api(tmp_path: Path, cpu_image: Any, docker_client: Any) -> None:
    opts = RunOptions(
        suites_dir=REPO / "suites",
        results_dir=tmp_path / "results",
        backend=get_backend("cpu"),
        cell_id=cell_id("cpu-docker-api"),
        workers="2",
        pytest_args=("-k", PER_FEATURE_SUBSET),
        progress=False,
    )
    outcome = run_containerized(opts, settings=ContainerSettings(image=cpu_image.ref))
    manifest = read_manifest(outcome.cell_dir / "manifest.json").to_json()
    assert manifest["status"] == "completed", manifest.get("error")
    assert manifest["mode"] == "container"
    image = docker_client.images.get(cpu_image.ref)
    assert manifest["image"]["ref"] == cpu_image.ref
    assert manifest["image"]["digest"] == image.id
    assert manifest["image"]["labels"]["torch-compat.backend"] == "cpu"
    assert manifest["exit"]["code"] in (0, 1)
    assert manifest["exit"]["container_exit_code"] == manifest["exit"]["code"]
    assert manifest["exit"]["oom_killed"] is False
    assert manifest["environment"]["torch"]["version"] == "2.13.0+cpu"
    for name in ("junit.xml", "events.jsonl", "collected.json", "output.log"):
        assert (outcome.cell_dir / name).stat().st_size > 0, name

    matrix = merge_cell_dirs([outcome.cell_dir]).to_json()
    counts = _column_counts(matrix)
    for feature in FEATURES:
        ran = sum(n for outcome_name, n in counts.get(feature, {}).items() if outcome_name != "not-run")
        assert ran > 0, f"no test of {feature} ran in the container: {counts.get(feature)}"
    assert matrix["columns"][0]["environment"]["mode"] == "container"


def test_full_cli_run_in_container(tmp_path: Path, build_env: dict[str, str], cpu_image: Any) -> None:
    """`harness run --backend cpu` as a user types it, all the suites: builds-or-reuses, runs, merges, prints."""
    results = tmp_path / "results"
    done = harness_cli(
        "run", "--backend", "cpu", "--cell-id", cell_id("cpu-cli"), "--results-dir", str(results), "--no-progress",
        env=build_env,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert "reusing image " + cpu_image.ref in done.stderr
    assert "PyTorch compatibility matrix" in done.stdout
    cell = only_cell_dir(results)
    manifest = read_manifest(cell / "manifest.json").to_json()
    assert manifest["mode"] == "container" and manifest["status"] == "completed"
    assert manifest["image"]["ref"] == cpu_image.ref
    matrix = json.loads((results / "matrix.json").read_text())
    assert matrix["columns"][0]["backend"] == "cpu"
    counts = _column_counts(matrix)
    assert all(sum(counts[f].values()) > 0 for f in FEATURES), counts


CONTAINMENT_PROBE = """
import json, os, socket

def test_containment():
    facts = {"uid": os.getuid(), "gid": os.getgid()}
    with open("/proc/self/status") as status:
        facts["cap_eff"] = next(line.split()[1] for line in status if line.startswith("CapEff"))
        status.seek(0)
        facts["no_new_privs"] = next(line.split()[1] for line in status if line.startswith("NoNewPrivs"))
    facts["docker_socket"] = any(os.path.exists(p) for p in ("/var/run/docker.sock", "/run/docker.sock"))
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=3).close()
        facts["network"] = True
    except OSError:
        facts["network"] = False
    facts["interfaces"] = sorted(os.listdir("/sys/class/net"))
    try:
        open(os.path.join(os.path.dirname(__file__), "written-by-test"), "w").close()
        facts["suites_writable"] = True
    except OSError:
        facts["suites_writable"] = False
    facts["devices"] = sorted(os.listdir("/dev"))
    with open(os.path.join(os.environ["COMPAT_CELL_DIR"], "containment.json"), "w") as out:
        json.dump(facts, out)
"""


def test_container_is_contained(tmp_path: Path, sample_suite: Any, cpu_image: Any) -> None:
    suites = sample_suite({"alpha/test_contained.py": CONTAINMENT_PROBE})
    opts = RunOptions(
        suites_dir=suites, results_dir=tmp_path / "results",
        backend=get_backend("cpu"), cell_id=cell_id("cpu-contained"),
        workers="1", progress=False,
    )  # fmt: skip
    outcome = run_containerized(opts, settings=ContainerSettings(image=cpu_image.ref))
    assert outcome.status == "completed", outcome.manifest.error
    facts = json.loads((outcome.cell_dir / "containment.json").read_text())
    assert facts["uid"] != 0 and facts["gid"] != 0
    assert int(facts["cap_eff"], 16) == 0, "the test process holds capabilities"
    assert facts["no_new_privs"] == "1"
    assert facts["docker_socket"] is False
    assert facts["network"] is False and facts["interfaces"] == ["lo"]
    assert facts["suites_writable"] is False, "the suites must be mounted read-only"
    assert not (suites / "alpha" / "written-by-test").exists()
    # a cpu container gets no GPU device nodes at all
    assert not [d for d in facts["devices"] if d in ("kfd", "dri") or d.startswith("nvidia")]


def test_cdi_device_refused_by_engine_is_no_data(tmp_path: Path, sample_suite: Any, cpu_image: Any) -> None:
    """The engine refuses a device it cannot provide (here: a CDI GPU on an engine without it):
    an infrastructure-error cell with one clear line, no red tests, no container left."""
    suites = sample_suite({"alpha/test_a.py": "def test_a():\n    assert True\n"})
    opts = RunOptions(
        suites_dir=suites, results_dir=tmp_path / "results",
        backend=get_backend("rocm"), cell_id=cell_id("rocm-cdi"),
        workers="1", progress=False,
    )  # fmt: skip
    outcome = run_containerized(opts, settings=ContainerSettings(image=cpu_image.ref, cdi=True))
    assert outcome.status == "infra-error"
    error = outcome.manifest.error
    assert "docker could not start the rocm7.14 container" in error and "\n" not in error
    matrix = merge_cell_dirs([outcome.cell_dir]).to_json()
    assert matrix["columns"][0]["state"] != "ok"
    assert {cells[matrix["columns"][0]["id"]]["state"] for cells in matrix["cells"].values()} == {"no-data"}
    counts = _column_counts(matrix)
    assert not any(c.get("failed") or c.get("passed") for c in counts.values())
