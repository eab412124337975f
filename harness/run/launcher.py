"""How a cell's commands get executed: natively (this module) or in a container
(harness/run/container.py). execute.py drives either through the same small protocol."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from harness.run.cellplugin import PLUGIN_DIR


@dataclass(frozen=True)
class Completed:
    exit_code: int
    stdout: str
    stderr: str
    refused: bool = False  # nothing ran: the engine would not start the container (stderr says why)


class Process(Protocol):
    """A started pytest run."""

    def wait(self, timeout: float | None) -> int | None:
        """The exit code (negative: killed by that signal), or None if still running."""

    def stop(self) -> None:
        """Terminate, then kill after a grace period; always release resources."""


class Launcher(Protocol):
    mode: str
    python: str  # interpreter as seen by the runner
    suites_path: str  # suites dir as seen by the runner
    cell_path: str  # cell dir as seen by the runner
    plugin_path: str  # dir holding compat_cell_plugin.py as seen by the runner

    def describe(self) -> dict[str, Any] | None:
        """Image facts for the manifest (ref, digest), or None when native."""

    def execute(self, argv: list[str], env: dict[str, str], timeout: float) -> Completed:
        """Run a short command (probe, health check) and capture its output."""

    def start(self, argv: list[str], env: dict[str, str], log: IO[bytes]) -> Process:
        """Start pytest, streaming its output into `log`."""

    def close(self) -> None:
        """Release everything the launcher made (containers, networks)."""


class _PopenProcess:
    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc

    def wait(self, timeout: float | None) -> int | None:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=grace)
                return
            except subprocess.TimeoutExpired:
                continue


class NativeLauncher:
    """Runs on this host, with the given interpreter (default: the harness's own)."""

    mode = "native"

    def __init__(self, *, suites_dir: Path, cell_dir: Path, python: str | None = None) -> None:
        self.python = python or sys.executable
        self.suites_path = str(suites_dir.resolve())
        self.cell_path = str(cell_dir.resolve())
        self.plugin_path = str(PLUGIN_DIR)

    def describe(self) -> dict[str, Any] | None:
        return None

    def execute(self, argv: list[str], env: dict[str, str], timeout: float) -> Completed:
        try:
            done = subprocess.run(
                argv, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
            )
        except FileNotFoundError as err:
            return Completed(127, "", f"{argv[0]}: not found ({err.strerror})")
        except subprocess.TimeoutExpired:
            return Completed(124, "", f"{argv[0]}: no answer within {timeout:.0f} s")
        return Completed(done.returncode, done.stdout, done.stderr)

    def start(self, argv: list[str], env: dict[str, str], log: IO[bytes]) -> Process:
        # A new session, so a timeout or Ctrl-C can end pytest and all its workers at once.
        proc = subprocess.Popen(
            argv, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
        return _PopenProcess(proc)

    def close(self) -> None:
        return None
