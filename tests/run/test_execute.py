"""Multi-GPU hosts: `--workers auto` gives one xdist worker per device, each pinned to its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.run.cellplugin import PLUGIN_DIR

RECORDER = """
import os, time
import pytest

@pytest.mark.parametrize("i", range(8))
def test_record(record_property, i):
    time.sleep(0.2)  # long enough that both workers get tests
    record_property("worker", os.environ.get("PYTEST_XDIST_WORKER"))
    record_property("visible", os.environ.get("CUDA_VISIBLE_DEVICES"))
"""


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


def test_a_native_column_on_another_python_names_it_and_the_default_one_keeps_its_id() -> None:
    """`harness` on a 3.14 venv makes a 3.14 column; on the default image's 3.11 the id is as it always was."""
    from harness.interpreters import PythonKey
    from harness.registry import get_backend
    from harness.run.execute import RunOptions, resolve_cell_id

    opts, cpu = RunOptions(suites_dir=Path("suites")), get_backend("cpu")
    assert resolve_cell_id(opts, cpu, "2.15.0+cpu", None, PythonKey(3, 14)).startswith("cpu-2.15.0-cp314-")
    assert resolve_cell_id(opts, cpu, "2.15.0+cpu", "cpu-only", PythonKey(3, 14, True)).startswith(
        "cpu-2.15.0-cp314t-cpu-only-"
    )
    default = resolve_cell_id(opts, cpu, "2.15.0+cpu", None, PythonKey(3, 11))
    assert default == resolve_cell_id(opts, cpu, "2.15.0+cpu") and "cp311" not in default
