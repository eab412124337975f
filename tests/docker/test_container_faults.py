"""Faults made to happen for real in container mode: the container is killed (`docker kill`, an OOM
kill), the cell times out, `harness run` gets Ctrl-C or SIGTERM, the device is missing, the health
gate fails inside the container. Each time: the exit is recorded, what was written is kept, and
no container is left behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.cell import read_manifest
from harness.ingest.cell_reader import ingest_cell
from harness.merge.combine import merge_cell_dirs
from harness.registry import get_backend
from harness.run.container import (
    CELL_LABEL,
    ContainerLauncher,
    ContainerSettings,
    leftover_containers,
    run_containerized,
)
from harness.run.execute import CellOutcome, RunOptions, run_cell
from tests.docker.conftest import REPO, cell_id, harness_cli, only_cell_dir, passed_tests, started_tests, wait_for

SLOW_SUITE = {
    "alpha/test_slow.py": """
        import time

        def test_a_quick():
            assert True

        def test_b_sleeps():
            time.sleep(300)

        def test_c_never_reached():
            assert True
    """
}
QUICK = "alpha/test_slow.py::test_a_quick"
SLEEPER = "alpha/test_slow.py::test_b_sleeps"


def _outcomes(cell_dir: Path) -> dict[str, str]:
    return {record.nodeid: record.outcome.value for record in ingest_cell(cell_dir).records}


def _run_in_thread(opts: RunOptions, settings: ContainerSettings) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["outcome"] = run_containerized(opts, settings=settings)
        except BaseException as err:  # surfaced by the test
            box["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def _wait_for_sleeper(results: Path) -> Path:
    cell = wait_for(lambda: next((p for p in results.glob("*") if p.is_dir()), None), 120, "the cell dir")
    wait_for(lambda: SLEEPER in started_tests(cell), 180, f"{SLEEPER} to start")
    return cell


def test_docker_kill_is_recorded_and_partial_results_kept(
    tmp_path: Path, sample_suite: Any, cpu_image: Any, docker_client: Any
) -> None:
    suites = sample_suite(SLOW_SUITE)
    results = tmp_path / "results"
    opts = RunOptions(
        suites_dir=suites,
        results_dir=results,
        backend=get_backend("cpu"),
        cell_id=cell_id("cpu-killed"),
        workers="1",
        progress=False,
    )
    thread, box = _run_in_thread(opts, ContainerSettings(image=cpu_image.ref))
    cell = _wait_for_sleeper(results)
    running = docker_client.containers.list(
        filters={"label": [f"{CELL_LABEL}={cell_id('cpu-killed')}", "torch-compat.purpose=pytest"]}
    )
    assert len(running) == 1
    running[0].kill()  # what `docker kill` does: SIGKILL to the whole container
    thread.join(timeout=120)
    assert not thread.is_alive() and "error" not in box, box.get("error")
    outcome: CellOutcome = box["outcome"]
    exit_info = outcome.manifest.exit.to_json()
    assert outcome.status == "crashed"
    assert exit_info["code"] == 137 and exit_info["signal"] == "SIGKILL"
    assert exit_info["container_exit_code"] == 137 and exit_info["oom_killed"] is False
    assert read_manifest(cell / "manifest.json").status.value == "crashed"
    # what was written before the kill is kept and counted
    assert QUICK in passed_tests(cell)
    outcomes = _outcomes(cell)
    assert outcomes[QUICK] == "passed"
    assert outcomes[SLEEPER] not in ("passed", "failed")
    assert not leftover_containers(docker_client, cell_id("cpu-killed"))


OOM_SUITE = {
    "alpha/test_memory.py": """
        def test_a_small():
            assert sum(range(10)) == 45

        def test_b_hog():
            blocks = [bytearray(b"x" * (64 * 1024 * 1024)) for _ in range(64)]  # 4 GiB, written
            assert len(blocks) == 64
    """
}


def test_oom_kill_is_recorded(tmp_path: Path, sample_suite: Any, cpu_image: Any, docker_client: Any) -> None:
    suites = sample_suite(OOM_SUITE)
    opts = RunOptions(
        suites_dir=suites, results_dir=tmp_path / "results",
        backend=get_backend("cpu"), cell_id=cell_id("cpu-oom"), workers="1",
        progress=False,
    )  # fmt: skip
    outcome = run_containerized(opts, settings=ContainerSettings(image=cpu_image.ref, memory="1g"))
    exit_info = outcome.manifest.exit.to_json()
    assert exit_info["oom_killed"] is True, exit_info
    outcomes = _outcomes(outcome.cell_dir)
    assert outcomes["alpha/test_memory.py::test_a_small"] == "passed"
    assert outcomes["alpha/test_memory.py::test_b_hog"] in ("crashed", "error", "failed")
    assert not leftover_containers(docker_client, cell_id("cpu-oom"))


def test_cell_timeout_stops_and_removes_the_container(
    tmp_path: Path, sample_suite: Any, cpu_image: Any, docker_client: Any
) -> None:
    suites = sample_suite(SLOW_SUITE)
    opts = RunOptions(
        suites_dir=suites, results_dir=tmp_path / "results",
        backend=get_backend("cpu"), cell_id=cell_id("cpu-timeout"), workers="1",
        cell_timeout=20, progress=False,
    )  # fmt: skip
    outcome = run_containerized(opts, settings=ContainerSettings(image=cpu_image.ref))
    assert outcome.status == "timeout"
    assert "20 s limit" in outcome.manifest.error
    assert outcome.manifest.exit.details["container"].startswith(f"torch-compat-{cell_id('cpu-timeout')}-pytest-")
    assert QUICK in passed_tests(outcome.cell_dir)
    left = leftover_containers(docker_client, cell_id("cpu-timeout"))
    assert not left, [(c.name, c.attrs["Config"]["Cmd"], c.attrs["Created"], c.attrs["State"]) for c in left]


def _as_from_a_terminal() -> None:
    """The child's SIGINT as a terminal gives it. A shell that starts a job in the background
    without job control (`bash .ci/run &`, nohup) leaves SIGINT ignored, and Python then installs no
    Ctrl-C handler: the run would never see the signal this test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(("sig", "why"), [(signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM")])
def test_interrupting_harness_run_removes_the_container(
    tmp_path: Path, sample_suite: Any, cpu_image: Any, docker_client: Any, sig: signal.Signals, why: str
) -> None:
    suites = sample_suite(SLOW_SUITE)
    results = tmp_path / "results"
    cid = cell_id(f"cpu-{sig.name.lower()}")
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "harness", "run", "--backend", "cpu", "--image", cpu_image.ref,
            "--suites", str(suites), "--results-dir", str(results), "--cell-id", cid,
            "--workers", "1", "--no-progress",
        ],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_as_from_a_terminal,
    )  # fmt: skip
    try:
        cell = _wait_for_sleeper(results)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert f"run stopped by {why}" in err and "Traceback" not in err
    manifest = read_manifest(cell / "manifest.json").to_json()
    assert manifest["status"] == "interrupted"
    assert manifest["exit"]["container"].startswith(f"torch-compat-{cid}-pytest-")
    assert QUICK in passed_tests(cell)
    assert not leftover_containers(docker_client, cid)


@pytest.mark.parametrize(
    ("backend", "node", "missing"),
    [("rocm", "/dev/kfd", "/dev/kfd is missing"), ("cu130", "/dev/nvidiactl", "no NVIDIA driver loaded")],
)
def test_backend_without_its_device_is_no_data(
    tmp_path: Path, docker_client: Any, backend: str, node: str, missing: str
) -> None:
    """What `tox -e rocm` / `tox -e cu130` run on a host without that GPU: exit 3, one line that says
    what is missing, that nothing ran and the fix (never "cannot probe ... exit 125"), a NO DATA
    cell, and no image build (the device check comes first)."""
    if Path(node).exists():
        pytest.skip(f"this host has {node}: the {backend} cell would really run")
    results = tmp_path / "results"
    done = harness_cli(
        "run", "--backend", backend, "--cell-id", cell_id(backend), "--results-dir", str(results), "--no-progress",
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("harness: error:")]
    assert len(errors) == 1 and "NO DATA" in errors[0] and missing in errors[0], done.stderr
    assert "nothing ran" in errors[0] and "fix:" in errors[0]
    assert "cannot probe" not in done.stderr and "exit 125" not in done.stderr
    assert "Traceback" not in done.stderr and "building image" not in done.stderr
    cell = only_cell_dir(results)
    manifest = read_manifest(cell / "manifest.json").to_json()
    assert manifest["status"] == "infra-error" and manifest["mode"] == "container"
    matrix = merge_cell_dirs([cell]).to_json()
    column = matrix["columns"][0]
    assert column["backend"] == get_backend(backend).id and column["state"] != "ok"  # a family names its current build
    states = {cells[column["id"]]["state"] for cells in matrix["cells"].values()}
    # nothing judged: NO DATA, except the rows this build cannot have at all (another family's, a later release's)
    assert "no-data" in states and states <= {"no-data", "not-in-release"}, states
    assert "NO DATA" in (results / "summary.md").read_text()


def test_health_gate_inside_the_container(
    tmp_path: Path, sample_suite: Any, cpu_image: Any, docker_client: Any
) -> None:
    """A CUDA runner whose container sees no GPU (the cpu image stands in for a broken cu126 one):
    the probe inside the container finds a CPU build and no device, so the cell is an
    infrastructure error (NO DATA), never red tests. The device flags are the cpu backend's,
    because this host has no GPU runtime to pass; everything else is the real container path."""
    from harness.images import recipes

    suites = sample_suite({"alpha/test_a.py": "def test_a():\n    assert True\n"})
    opts = RunOptions(
        suites_dir=suites, results_dir=tmp_path / "results",
        backend=get_backend("cu126"), cell_id=cell_id("cu126-broken"),
        workers="1", progress=False,
    )  # fmt: skip
    info = recipes.describe_image(docker_client.images.get(cpu_image.ref), cpu_image.ref)
    cpu = get_backend("cpu")

    def make(_backend: Any, cell_dir: Path, the_cell_id: str) -> ContainerLauncher:
        cell_dir.chmod(0o777)
        return ContainerLauncher(
            docker_client, cpu, image_ref=cpu_image.ref, image_info=info, suites_dir=suites, cell_dir=cell_dir,
            cell_id=the_cell_id, user="1000:1000", settings=ContainerSettings(image=cpu_image.ref),
        )  # fmt: skip

    outcome = run_cell(opts, make_launcher=make)
    assert outcome.status == "infra-error"
    assert "backend cu126 needs a cuda build" in outcome.manifest.error
    assert outcome.manifest.image.ref == cpu_image.ref
    assert not (outcome.cell_dir / "junit.xml").exists()
    assert not leftover_containers(docker_client, cell_id("cu126-broken"))
