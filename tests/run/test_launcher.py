"""The native launcher (harness/run/launcher.py): what it tells the run (paths as the runner sees
them, the plugin's dir, no image), short commands with their output, a missing program or a hang
as an exit code, and pytest started in its own session so that stopping it ends its workers too.
All but the first start real processes: slow."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from harness.run.cellplugin import PLUGIN_DIR
from harness.run.launcher import Completed, NativeLauncher


def _launcher(tmp_path: Path) -> NativeLauncher:
    (tmp_path / "suites").mkdir(exist_ok=True)
    (tmp_path / "cell").mkdir(exist_ok=True)
    return NativeLauncher(suites_dir=tmp_path / "suites" / ".." / "suites", cell_dir=tmp_path / "cell")


def test_what_a_native_launcher_tells_the_run(tmp_path: Path) -> None:
    launcher = _launcher(tmp_path)
    assert launcher.mode == "native" and launcher.describe() is None
    assert launcher.python == sys.executable
    assert launcher.suites_path == str((tmp_path / "suites").resolve())
    assert launcher.cell_path == str((tmp_path / "cell").resolve())
    assert launcher.plugin_path == str(PLUGIN_DIR) and (PLUGIN_DIR / "compat_cell_plugin.py").is_file()
    other = NativeLauncher(suites_dir=tmp_path, cell_dir=tmp_path, python="/opt/py/bin/python3")
    assert other.python == "/opt/py/bin/python3"
    assert launcher.close() is None


@pytest.mark.slow  # starts a subprocess
def test_execute_captures_output_and_exit_code(tmp_path: Path) -> None:
    code = "import os, sys; print(os.environ['X']); print('err', file=sys.stderr); sys.exit(3)"
    done = _launcher(tmp_path).execute([sys.executable, "-c", code], {"X": "hello"}, timeout=60)
    assert done == Completed(3, "hello\n", "err\n")


@pytest.mark.slow  # starts a subprocess
def test_a_missing_program_is_127_and_a_hang_is_124(tmp_path: Path) -> None:
    launcher = _launcher(tmp_path)
    missing = launcher.execute([str(tmp_path / "no-such-python"), "-V"], {}, timeout=10)
    assert missing.exit_code == 127 and missing.stderr.startswith(f"{tmp_path / 'no-such-python'}: not found (")
    started = time.monotonic()
    hung = launcher.execute([sys.executable, "-c", "import time; time.sleep(60)"], {}, timeout=1)
    assert hung == Completed(124, "", f"{sys.executable}: no answer within 1 s")
    assert time.monotonic() - started < 30


def _alive(pid: int) -> bool:
    """Running (a zombie no one has reaped yet counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rpartition(")")[2].split()[0]
    except OSError:
        state = None
    if state is not None:
        return state not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow  # starts processes and stops them
def test_stop_ends_the_run_and_its_children(tmp_path: Path) -> None:
    child_pid = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        f"open({str(child_pid)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(120)\n"
    )
    with (tmp_path / "output.log").open("wb") as log:
        process = _launcher(tmp_path).start([sys.executable, "-c", code], dict(os.environ), log)
        deadline = time.monotonic() + 30
        while not child_pid.exists() or not child_pid.read_text():
            assert time.monotonic() < deadline, "the run never started its child"
            time.sleep(0.05)
        assert process.wait(timeout=0.1) is None, "still running"
        process.stop()
    pid = int(child_pid.read_text())
    assert process.wait(timeout=10) == -signal.SIGTERM
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "the run's child outlived the stop"
    assert (tmp_path / "output.log").read_text(encoding="utf-8") == "started\n"
    process.stop()  # a second stop of an ended run is harmless


@pytest.mark.slow  # starts a subprocess
def test_wait_returns_the_exit_code(tmp_path: Path) -> None:
    with (tmp_path / "output.log").open("wb") as log:
        process = _launcher(tmp_path).start([sys.executable, "-c", "print('x'); raise SystemExit(5)"], {}, log)
        assert process.wait(timeout=60) == 5
    assert (tmp_path / "output.log").read_text(encoding="utf-8") == "x\n"
