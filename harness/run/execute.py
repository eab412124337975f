"""Run one cell: manifest first, probe and health gate, pytest with the cell plugin,
then complete the manifest however the run ended (done, failed, timeout, Ctrl-C).

The backend is resolved once (RunOptions, or the probe of the local torch) and passed on as an
object; one ExitStack owns everything a run makes (the probe's scratch dir, the launcher and the
containers it starts). The pieces live beside this module: run/suites.py (features, suite sha),
run/pytest_command.py (argv, environment, workers), run/exits.py (exit codes and signals).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cell import (
    CellDir,
    CellStatus,
    ExitInfo,
    ImageInfo,
    Manifest,
    RunnerInfo,
    RunRequest,
    Selection,
    building_cell,
    default_cell_id,
    new_manifest,
    utc_now,
)
from harness.errors import InfrastructureError, InterruptedRunError
from harness.interpreters import PythonKey, id_tag
from harness.probe import Probe
from harness.registry import Backend, backend_for_probe, get_backend, load_registry
from harness.run import option_checks
from harness.run.exits import Terminated, exit_info, sigterm_as_exception, status_for
from harness.run.health import (
    CPU_ONLY,
    cpu_only_reason,
    health_check_problem,
    health_problems,
    interpreter_problem,
    preflight,
    probe,
)
from harness.run.launcher import Launcher, NativeLauncher
from harness.run.progress import ProgressReporter
from harness.run.pytest_command import pytest_argv, resolve_workers, run_env
from harness.run.suites import load_features, suite_sha

HARD_TIMEOUT_GRACE = 60.0


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    suites_dir: Path
    results_dir: Path = Path("results")
    # None: the backend of the local torch build. A variant id or family name is resolved to its
    # Backend once, by the caller (the CLI's --backend type), and passed on as the object.
    backend: Backend | None = None
    cell_id: str | None = None
    python: str | None = None  # native interpreter; default: the harness's own
    # The CPython the cell is planned for (--python 3.15): the probe must show it, or the cell is NO DATA.
    python_key: PythonKey | None = None
    workers: str = "auto"  # a number, or auto (one per device; CPU: up to 4)
    test_timeout: float = 300.0
    cell_timeout: float = 3600.0
    pytest_args: tuple[str, ...] = ()
    progress: bool = True
    env: dict[str, str] = field(default_factory=dict)  # extra env for the suites
    # The plugin's hard watchdog ends a test's process this long after test_timeout (native hangs).
    hard_timeout_grace: float = HARD_TIMEOUT_GRACE
    # Natively, a build whose device is missing runs on the CPU as a `cpu-only` column: None = when
    # the backend was not named, True = also for a named one, False = never (NO DATA instead).
    cpu_only: bool | None = None
    tests: tuple[str, ...] = ()  # only these node ids (relative to the suites dir); empty: all
    features_file: Path | None = None  # the features' titles and claims; default: <suites>/features.toml
    channel: str | None = None  # release | test | nightly; None: what the probed torch version implies

    def __post_init__(self) -> None:
        if self.backend is not None and not isinstance(self.backend, Backend):
            raise TypeError(f"RunOptions.backend is a Backend, resolved once by the caller, not {self.backend!r}")
        # Every value is checked here, before a cell exists: a typo must never leave a cell behind.
        option_checks.check_workers(self.workers)
        option_checks.check_seconds("--test-timeout", self.test_timeout)
        option_checks.check_seconds("--cell-timeout", self.cell_timeout)
        option_checks.check_cell_id(self.cell_id)
        option_checks.check_tests(self.suites_dir, self.tests)
        option_checks.check_expressions(self.pytest_args)
        load_features(self.suites_dir, self.features_file)  # a features file that cannot be read, too


@dataclass
class CellOutcome:
    cell_dir: Path
    manifest: Manifest

    @property
    def status(self) -> str:
        return self.manifest.status.value if self.manifest.status else "unknown"


# (backend, cell dir, cell id) -> the launcher that runs the cell's commands
LauncherFactory = Callable[[Backend, Path, str], Launcher]


def native_launcher(opts: RunOptions) -> LauncherFactory:
    def make(_backend: Backend, cell_dir: Path, _cell_id: str) -> Launcher:
        return NativeLauncher(suites_dir=opts.suites_dir, cell_dir=cell_dir, python=opts.python)

    return make


def torch_label(version: str | None, backend: Backend) -> str | None:
    """The torch build as a cell id part: 2.13.0 for 2.13.0+cu130 on cu130 (the backend says the
    rest), the local tag kept only when it is not the backend's own (2.13.0-rocm7.1 on rocm7.2)."""
    if not version:
        return None
    base, _, local = version.partition("+")
    return f"{base}-{local}" if local and local != backend.local_tag else base


def resolve_cell_id(
    opts: RunOptions,
    backend: Backend,
    torch: str | None = None,
    variant: str | None = None,
    python: PythonKey | None = None,
) -> str:
    """The cell id: the one asked for, else <backend>-<torch build>[-<python tag>][-<variant>]-<host>, the
    Python's tag left out for the build's default image's Python. Decided here only."""
    tag = id_tag(python or opts.python_key, backend.base_python)
    return opts.cell_id or default_cell_id(backend.id, torch_label(torch, backend), variant, tag)


def no_torch(python: str, env_probe: Probe) -> InfrastructureError:
    """torch does not import in the interpreter that would run the suites: say so, and how to install it here."""
    from harness.host.doctor import install_advice  # reads this host's GPUs only when it must

    errors = env_probe.import_errors()
    why = f" ({errors[0].split(': ', 1)[-1]})" if errors else ""
    return InfrastructureError(
        f"torch is not installed for {python}{why}; no cell was written", hint=install_advice(python)
    )


def runner_info() -> RunnerInfo:
    labels = tuple(label for label in os.environ.get("RUNNER_LABELS", "").split(",") if label)
    return RunnerInfo(host=socket.gethostname(), os=sys.platform, cpus=os.cpu_count(), labels=labels)


# -- the run ---------------------------------------------------------------------------------
def _probe_natively(opts: RunOptions, make_launcher: LauncherFactory, stack: contextlib.ExitStack) -> Probe:
    """Natively the probe is cheap: it runs first, so the cell id can name the torch build, and a
    build whose device is missing can be run on the CPU (or refused) before any cell exists."""
    scratch = Path(tempfile.mkdtemp(prefix="compat-probe-"))
    stack.callback(shutil.rmtree, scratch, ignore_errors=True)
    backend = opts.backend or get_backend("cpu")
    launcher = make_launcher(backend, scratch, "probe")
    try:
        found, problem = probe(launcher, dict(os.environ), backend)
    finally:
        launcher.close()
    if found is None:
        if opts.backend is None:
            raise InfrastructureError(problem or "probe failed", hint=f"is torch installed for {launcher.python}?")
        return Probe()  # the health gate says what is wrong, in the cell
    if not found.has_torch:
        raise no_torch(launcher.python, found)
    option_checks.check_channel(opts.channel, found.torch_version)  # before the cell: a contradiction is a typo
    return found


def run_cell(opts: RunOptions, make_launcher: LauncherFactory | None = None) -> CellOutcome:
    """Run the suites once into a new cell dir and return how it ended (natively unless a
    launcher factory is given: container mode passes its own)."""
    native = make_launcher is None
    make_launcher = make_launcher or native_launcher(opts)
    with contextlib.ExitStack() as stack:
        env_probe = _probe_natively(opts, make_launcher, stack) if native else None
        backend = opts.backend
        if backend is None and env_probe is not None:
            # Native default: the backend is whatever the local torch build is. Builds are recognised
            # from their local tag or torch.version, so every torch gets a column named after its build.
            backend = backend_for_probe(env_probe)
            if backend is None:
                raise InfrastructureError(
                    f"the local torch {env_probe.torch_version} names no build (no local tag, no runtime)",
                    hint="pass --backend explicitly",
                )
        backend = backend or get_backend("cpu")
        variant_reason = None
        if env_probe is not None and env_probe.has_torch:
            variant_reason = cpu_only_reason(
                backend, env_probe, native=native, asked=opts.cpu_only, explicit_backend=opts.backend is not None
            )
        elif not native and opts.cpu_only and backend.needs_device:
            variant_reason = f"the {backend.display_name} image ran without its device, as asked (--cpu-only)"
        torch = env_probe.torch_version if env_probe else None
        cell, manifest = _new_cell(
            opts,
            backend,
            "native" if native else "container",
            torch=torch,
            variant=CPU_ONLY if variant_reason else None,
            variant_reason=variant_reason,
            python=env_probe.python_key if env_probe else None,
        )
        if variant_reason and opts.progress:
            # The user typed `harness`, not --cpu-only: say why the column is not the device's verdict.
            print(
                f"harness: torch {torch} is the {backend.display_name} build and this host has no such device: "
                f"its suites run on the CPU as column {manifest.cell_id} (--require-device refuses instead)",
                file=sys.stderr,
            )
        launcher = make_launcher(backend, cell.path, manifest.cell_id)
        stack.callback(launcher.close)
        with sigterm_as_exception():
            return _run(opts, backend, cell, launcher, manifest, env_probe)


def _new_cell(
    opts: RunOptions,
    backend: Backend,
    mode: str,
    *,
    torch: str | None = None,
    variant: str | None = None,
    variant_reason: str | None = None,
    python: PythonKey | None = None,
) -> tuple[CellDir, Manifest]:
    """A new cell dir with its manifest written (before anything runs), put in place atomically."""
    features = load_features(opts.suites_dir, opts.features_file)
    cell_id = resolve_cell_id(opts, backend, torch, variant, python)
    manifest = new_manifest(
        cell_id=cell_id,
        backend=backend.id,
        mode=mode,
        suite_sha=suite_sha(opts.suites_dir),
        runner=runner_info(),
        features=features,
        planned=RunRequest(
            workers=opts.workers,
            test_timeout=opts.test_timeout,
            cell_timeout=opts.cell_timeout,
            pytest_args=opts.pytest_args,
            tests=opts.tests,
            suites=None if opts.suites_dir == Path("suites") else str(opts.suites_dir),
            features=str(opts.features_file) if opts.features_file else None,
            python=opts.python_key.label if opts.python_key else None,
        ),
    )
    selection = Selection.of(opts.tests, opts.pytest_args)
    if selection is not None:  # a partial run: the merge lays it over the cell id's complete run
        manifest = dataclasses.replace(manifest, selection=selection)
    if variant:
        manifest = dataclasses.replace(manifest, variant=variant, variant_reason=variant_reason)
    with building_cell(opts.results_dir, cell_id) as cell:
        cell.write_manifest(manifest)
    return cell, manifest


def refuse_cell(opts: RunOptions, backend: Backend, mode: str, reason: str) -> CellOutcome:
    """A cell that cannot run here (no device, no image): NO DATA with the reason, and nothing run."""
    cell, manifest = _new_cell(opts, backend, mode)
    with cell.output_log.open("ab") as log:
        log.write(f"health gate: {reason}\n".encode())
    return _finish(cell, manifest, CellStatus.INFRA_ERROR, error=reason)


def _finish(cell: CellDir, manifest: Manifest, status: CellStatus, **fields: Any) -> CellOutcome:
    manifest = dataclasses.replace(manifest, status=status, finished_at=utc_now(), **fields)
    cell.write_manifest(manifest)
    return CellOutcome(cell.path, manifest)


def _update(cell: CellDir, manifest: Manifest, **fields: Any) -> Manifest:
    manifest = dataclasses.replace(manifest, **fields)
    cell.write_manifest(manifest)
    return manifest


def _gate(
    backend: Backend, launcher: Launcher, manifest: Manifest, env_probe: Probe, base_env: dict[str, str]
) -> list[str]:
    """Why this runner cannot produce the cell (empty: healthy). Natively the probe is cheap, so it
    runs even when a device is missing: both facts are told."""
    cpu_only = manifest.variant == CPU_ONLY
    host = preflight(backend, container=False) if launcher.mode == "native" and not cpu_only else None
    problems = health_problems(
        backend, env_probe, container=launcher.mode != "native", host_problem=host, cpu_only=cpu_only
    )
    if not problems and not cpu_only:
        check = health_check_problem(launcher, backend, base_env)
        problems += [check] if check else []
    return problems


def _channel(opts: RunOptions, env_probe: Probe | None) -> str | None:
    """The channel the column records: the one asked for, else what its torch version implies."""
    if opts.channel:
        return opts.channel
    version = env_probe.torch_version if env_probe else None
    return load_registry().channel_of(version) if version else None


def _run(
    opts: RunOptions,
    backend: Backend,
    cell: CellDir,
    launcher: Launcher,
    manifest: Manifest,
    env_probe: Probe | None,
) -> CellOutcome:
    image = launcher.describe()
    manifest = _update(cell, manifest, image=ImageInfo.from_json(image) if image else None)
    with cell.output_log.open("ab") as log:
        settings = {"test_timeout": opts.test_timeout, "hard_timeout_grace": opts.hard_timeout_grace}
        base_env = run_env(launcher, backend, extra_env=opts.env, workers=1, env_probe=None, **settings)
        fresh, problem = probe(launcher, base_env, backend)
        env_probe = fresh or env_probe
        manifest = _update(cell, manifest, environment=env_probe, channel=_channel(opts, env_probe))
        if fresh is None:
            log.write(f"health gate: {problem}\n".encode())
            return _finish(cell, manifest, CellStatus.INFRA_ERROR, error=problem)
        problems = _gate(backend, launcher, manifest, fresh, base_env)
        wrong_python = interpreter_problem(opts.python_key, fresh, container=launcher.mode != "native")
        problems += [wrong_python] if wrong_python else []
        if problems:
            message = "; ".join(problems)
            log.write(f"health gate: {message}\n".encode())
            return _finish(cell, manifest, CellStatus.INFRA_ERROR, error=message)
        workers = resolve_workers(opts.workers, backend, fresh)
        cpu_only = manifest.variant == CPU_ONLY
        env = run_env(
            launcher, backend, extra_env=opts.env, workers=workers, env_probe=fresh, cpu_only=cpu_only, **settings
        )
        argv = pytest_argv(launcher, workers, opts.pytest_args, opts.tests)
        planned = dataclasses.replace(manifest.planned or RunRequest(), workers=workers, command=tuple(argv))
        manifest = _update(cell, manifest, planned=planned)
        log.write(("$ " + " ".join(argv) + "\n").encode())
        log.flush()
        return _watch(opts, cell, manifest, launcher.start(argv, env, log))


def _watch(opts: RunOptions, cell: CellDir, manifest: Manifest, process: Any) -> CellOutcome:
    """Wait for pytest, with the progress lines and the cell's deadline; Ctrl-C and SIGTERM stop it."""
    reporter = ProgressReporter(cell.events, cell.collected, enabled=opts.progress)
    deadline = time.monotonic() + opts.cell_timeout
    try:
        code: int | None = None
        while code is None:
            code = process.wait(timeout=1.0)
            reporter.poll()
            if code is None and time.monotonic() > deadline:
                process.stop()
                reporter.done()
                return _finish(
                    cell,
                    manifest,
                    CellStatus.TIMEOUT,
                    exit=exit_info(None, process),
                    error=f"the cell ran past its {opts.cell_timeout:.0f} s limit and was stopped",
                )
        reporter.done()
    except (KeyboardInterrupt, Terminated) as stop:
        process.stop()
        why = "Ctrl-C" if isinstance(stop, KeyboardInterrupt) else "SIGTERM"
        error = f"stopped by {why}; partial results kept"
        _finish(cell, manifest, CellStatus.INTERRUPTED, exit=exit_info(None, process), error=error)
        raise InterruptedRunError(f"run stopped by {why}; partial results in {cell.path}") from None
    status = status_for(code)
    info: ExitInfo = exit_info(code, process)
    error = None if status is CellStatus.COMPLETED else f"pytest ended with {info.meaning} (exit {code})"
    if status is CellStatus.NOT_STARTED:
        said = refusal(cell.output_log)
        error = "pytest selected no test" if code == 5 else "pytest refused its arguments"
        error += f" (exit {code})" + (f": {said}" if said else "")
    return _finish(cell, manifest, status, exit=info, error=error)


def refusal(output_log: Path) -> str | None:
    """pytest's own line saying why it ran nothing (`ERROR: not found: ...`, `ERROR: Wrong expression
    passed to '-k'...`), from the end of the cell's log."""
    try:
        with output_log.open("rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - 65536))
            lines = log.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    # argparse's own line first (`__main__.py: error: unrecognized arguments: --x`), then pytest's
    usage = [line.split(": error: ", 1)[1] for line in lines if ": error: " in line]
    errors = [line[len("ERROR:") :].strip() for line in lines if line.startswith("ERROR:") and "usage:" not in line]
    found = (usage or errors or [None])[-1]
    return found[:300] if found else None
