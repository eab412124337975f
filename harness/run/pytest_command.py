"""The pytest command of a cell and its environment: workers, plugin, JUnit, device pinning."""

from __future__ import annotations

import os
from typing import Final

from harness.cell import redact_env
from harness.errors import UsageError
from harness.probe import Probe
from harness.registry import Backend
from harness.run.cellplugin import PLUGIN_NAME
from harness.run.launcher import Launcher


def resolve_workers(workers: str, backend: Backend, env_probe: Probe | None) -> int:
    """`--workers N`, or auto: one per device (each pinned to its own), on the CPU up to 4."""
    if workers != "auto":
        try:
            count = int(workers)
        except ValueError:
            raise UsageError(f"--workers must be a number or 'auto', not {workers!r}") from None
        if count < 1:
            raise UsageError("--workers must be at least 1")
        return count
    if backend.needs_device:
        return max(1, env_probe.accelerator_count if env_probe else 1)
    return max(1, min(os.cpu_count() or 1, 4))


def pytest_argv(launcher: Launcher, workers: int, extra: tuple[str, ...], tests: tuple[str, ...] = ()) -> list[str]:
    cell = launcher.cell_path
    # `tests` are node ids as the matrix shows them (relative to the suites dir).
    targets = [f"{launcher.suites_path}/{t.lstrip('/')}" for t in tests] or [launcher.suites_path]
    # Always through xdist (even with one worker): a crashing test then costs one test.
    return [
        launcher.python,
        "-m",
        "pytest",
        *targets,
        "-p",
        PLUGIN_NAME,
        "-p",
        "no:cacheprovider",
        # pytest-timeout would race the suites' own SIGALRM timeout; the plugin's watchdog backs both.
        "-p",
        "no:timeout",
        f"--junitxml={cell}/junit.xml",
        "-o",
        "junit_family=xunit1",
        "-n",
        str(workers),
        "-rfEs",
        "--tb=short",
        *extra,
    ]


# The caller's pytest settings stay out of a cell: its command (recorded in the manifest, rerun from
# the column) is the whole configuration. A PYTEST_ADDOPTS of `-x` or `-k` in a shell would otherwise
# change the verdict unseen. RunOptions.env (the API's extra environment) still passes them on purpose.
PYTEST_CONFIG_ENV: Final = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")
EXPECT_DEVICE_ENV: Final = "COMPAT_EXPECT_DEVICE"


def run_env(
    launcher: Launcher,
    backend: Backend,
    *,
    test_timeout: float,
    hard_timeout_grace: float,
    extra_env: dict[str, str],
    workers: int,
    env_probe: Probe | None,
    cpu_only: bool = False,
) -> dict[str, str]:
    """The suites' environment: the cell plugin on PYTHONPATH, the backend, the device the cell was planned
    for (`cpu` for a CPU-only cell), the timeouts, no secrets."""
    base = redact_env(dict(os.environ)) if launcher.mode == "native" else {}
    for name in PYTEST_CONFIG_ENV:
        base.pop(name, None)
    env = {
        **base,
        "COMPAT_CELL_DIR": launcher.cell_path,
        "COMPAT_BACKEND": backend.id,
        # the suites stop at once (pytest exit 3: infra-error) when torch cannot see this device kind
        EXPECT_DEVICE_ENV: "cpu" if cpu_only or not backend.needs_device else backend.family,
        "COMPAT_TEST_TIMEOUT": str(int(test_timeout)),
        "COMPAT_HARD_TIMEOUT": f"{test_timeout + hard_timeout_grace:g}",
        "PYTHONPATH": os.pathsep.join(p for p in (launcher.plugin_path, base.get("PYTHONPATH")) if p),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        **redact_env(extra_env),
    }
    count = env_probe.accelerator_count if env_probe else 0
    if backend.visible_devices_env and count > 1 and workers > 1:
        env["COMPAT_PIN_VAR"] = backend.visible_devices_env
        env["COMPAT_PIN_DEVICES"] = ",".join(str(i) for i in range(count))
    return env
