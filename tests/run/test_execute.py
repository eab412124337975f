"""Multi-GPU hosts: `--workers auto` gives one xdist worker per device, each pinned to its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.registry import get_backend
from harness.run.cellplugin import PLUGIN_DIR
from harness.run.execute import RunOptions, resolve_workers, run_env
from harness.run.launcher import NativeLauncher

FOUR_DEVICES = {"accelerator": {"available": True, "type": "cuda", "count": 4}}

RECORDER = """
import os, time
import pytest

@pytest.mark.parametrize("i", range(8))
def test_record(record_property, i):
    time.sleep(0.2)  # long enough that both workers get tests
    record_property("worker", os.environ.get("PYTEST_XDIST_WORKER"))
    record_property("visible", os.environ.get("CUDA_VISIBLE_DEVICES"))
"""


def test_auto_workers_follow_the_device_count():
    assert resolve_workers("auto", get_backend("cu130"), FOUR_DEVICES) == 4
    assert resolve_workers("auto", get_backend("cu130"), {"accelerator": {"count": 0}}) == 1
    assert resolve_workers("3", get_backend("cu130"), FOUR_DEVICES) == 3
    assert 1 <= resolve_workers("auto", get_backend("cpu"), None) <= 4


def test_pinning_env_comes_from_the_registry(tmp_path):
    launcher = NativeLauncher(suites_dir=tmp_path, cell_dir=tmp_path)
    opts = RunOptions(suites_dir=tmp_path)
    rocm = run_env(launcher, get_backend("rocm"), opts, 4, FOUR_DEVICES)
    assert rocm["COMPAT_PIN_VAR"] == "HIP_VISIBLE_DEVICES" and rocm["COMPAT_PIN_DEVICES"] == "0,1,2,3"
    assert run_env(launcher, get_backend("xpu"), opts, 4, FOUR_DEVICES)["COMPAT_PIN_VAR"] == "ZE_AFFINITY_MASK"
    assert "COMPAT_PIN_VAR" not in run_env(launcher, get_backend("cu130"), opts, 1, FOUR_DEVICES)


@pytest.mark.slow  # a real pytest run with xdist workers
def test_each_worker_sees_its_own_device(tmp_path: Path):
    (tmp_path / "test_rec.py").write_text(RECORDER)
    cell = tmp_path / "cell"
    env = {
        **os.environ,
        "COMPAT_CELL_DIR": str(cell),
        "COMPAT_PIN_VAR": "CUDA_VISIBLE_DEVICES",
        "COMPAT_PIN_DEVICES": "0,1",
        "PYTHONPATH": str(PLUGIN_DIR),
    }
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "compat_cell_plugin", "-n", "2", "-p", "no:cacheprovider",
         str(tmp_path / "test_rec.py")],
        cwd=tmp_path, env=env, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    seen: dict[str, set[str]] = {}
    for line in (cell / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        # A test that passed has its properties on its finish line (the plugin folds passing phases there).
        if event.get("event") == "finish" and event.get("user_properties"):
            props = dict(event["user_properties"])
            seen.setdefault(props["worker"], set()).add(props["visible"])
    assert seen == {"gw0": {"0"}, "gw1": {"1"}}
