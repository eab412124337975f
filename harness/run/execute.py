"""Run one cell: manifest first, probe and health gate, pytest with the cell plugin,
then complete the manifest however the run ended (done, failed, timeout, Ctrl-C)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cell import CellDir, CellStatus, default_cell_id, new_manifest, redact_env, utc_now
from harness.errors import (
    InfrastructureError,
    InterruptedRunError,
    UsageError,
)
from harness.registry import Backend, backend_for_probe, get_backend
from harness.run.cellplugin import PLUGIN_NAME
from harness.run.health import CPU_ONLY, cpu_only_reason, health_check_problem, health_problems, preflight, probe
from harness.run.launcher import Launcher, NativeLauncher
from harness.run.progress import ProgressReporter

HARD_TIMEOUT_GRACE = 60.0


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    suites_dir: Path
    results_dir: Path = Path("results")
    backend: str | None = None  # None: the backend of the local torch build
    cell_id: str | None = None
    python: str | None = None  # native interpreter; default: the harness's own
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


@dataclass
class CellOutcome:
    cell_dir: Path
    manifest: dict[str, Any]

    @property
    def status(self) -> str:
        return str(self.manifest["status"])


# (backend, cell dir, cell id) -> the launcher that runs the cell's commands
LauncherFactory = Callable[[Backend, Path, str], Launcher]


def native_launcher(opts: RunOptions) -> LauncherFactory:
    def make(_backend: Backend, cell_dir: Path, _cell_id: str) -> Launcher:
        return NativeLauncher(suites_dir=opts.suites_dir, cell_dir=cell_dir, python=opts.python)

    return make


def torch_label(version: str | None, backend: Backend) -> str | None:
    """The torch build as a cell id part: 2.13.0 for 2.13.0+cu130 on cu130 (the backend says the
    rest), the local tag kept only when it is not the backend's own (2.13.0-rocm7.1 on rocm)."""
    if not version:
        return None
    base, _, local = version.partition("+")
    return f"{base}-{local}" if local and local != backend.local_tag else base


def resolve_cell_id(opts: RunOptions, backend: Backend, torch: str | None = None, variant: str | None = None) -> str:
    """The cell id: the one asked for, else <backend>-<torch build>[-<variant>]-<host>. Decided here only."""
    return opts.cell_id or default_cell_id(backend.id, torch_label(torch, backend), variant)


def no_torch(python: str, env_probe: dict[str, Any]) -> InfrastructureError:
    """torch does not import in the interpreter that would run the suites: say so, and how to install it here."""
    from harness.run.doctor import install_advice  # reads this host's GPUs only when it must

    errors = [e for e in env_probe.get("errors") or [] if e.startswith("import torch")]
    why = f" ({errors[0].split(': ', 1)[-1]})" if errors else ""
    return InfrastructureError(
        f"torch is not installed for {python}{why}; no cell was written", hint=install_advice(python)
    )


# -- facts about the suites ----------------------------------------------------------------
def load_features(suites_dir: Path, path: Path | None = None) -> dict[str, Any]:
    path = path or suites_dir / "features.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        where = f"{suites_dir}: no features.toml" if path == suites_dir / "features.toml" else f"{path}: no such file"
        raise UsageError(where, hint="is this the suites/ directory? (--features names another file)") from None
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"{path}: invalid TOML: {err}") from err
    features = data.get("features")
    if not isinstance(features, dict):
        raise UsageError(f"{path}: needs [features.<id>] tables")
    return {fid: {k: v for k, v in info.items() if isinstance(v, str)} for fid, info in features.items()}


def suite_sha(suites_dir: Path) -> str:
    """The git commit of the suites (+dirty when they differ from it), else a content hash."""
    try:
        sha = subprocess.run(
            ["git", "-C", str(suites_dir), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(suites_dir), "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        digest = hashlib.sha256()
        for path in sorted(suites_dir.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(suites_dir)).encode())
                digest.update(path.read_bytes())
        return "content:" + digest.hexdigest()[:16]


def runner_info() -> dict[str, Any]:
    return {
        "host": socket.gethostname(),
        "os": sys.platform,
        "cpus": os.cpu_count(),
        "labels": [label for label in os.environ.get("RUNNER_LABELS", "").split(",") if label],
    }


# -- workers and environment ----------------------------------------------------------------
def resolve_workers(workers: str, backend: Backend, env_probe: dict[str, Any] | None) -> int:
    if workers != "auto":
        try:
            count = int(workers)
        except ValueError:
            raise UsageError(f"--workers must be a number or 'auto', not {workers!r}") from None
        if count < 1:
            raise UsageError("--workers must be at least 1")
        return count
    if backend.needs_device:
        return max(1, int(((env_probe or {}).get("accelerator") or {}).get("count") or 1))
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


def run_env(
    launcher: Launcher, backend: Backend, opts: RunOptions, workers: int, env_probe: dict[str, Any] | None
) -> dict[str, str]:
    base = redact_env(dict(os.environ)) if launcher.mode == "native" else {}
    env = {
        **base,
        "COMPAT_CELL_DIR": launcher.cell_path,
        "COMPAT_BACKEND": backend.id,
        "COMPAT_TEST_TIMEOUT": str(int(opts.test_timeout)),
        "COMPAT_HARD_TIMEOUT": f"{opts.test_timeout + opts.hard_timeout_grace:g}",
        "PYTHONPATH": os.pathsep.join(p for p in (launcher.plugin_path, base.get("PYTHONPATH")) if p),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        **redact_env(opts.env),
    }
    count = int(((env_probe or {}).get("accelerator") or {}).get("count") or 0)
    if backend.visible_devices_env and count > 1 and workers > 1:
        env["COMPAT_PIN_VAR"] = backend.visible_devices_env
        env["COMPAT_PIN_DEVICES"] = ",".join(str(i) for i in range(count))
    return env


# -- the run ---------------------------------------------------------------------------------
class _Terminated(Exception):
    pass


@contextlib.contextmanager
def _sigterm_as_exception() -> Iterator[None]:
    """SIGTERM (CI cancel, docker stop) ends the run the way Ctrl-C does."""

    def handler(signum: int, frame: object) -> None:
        raise _Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _signal_name(code: int | None) -> str | None:
    if code is None or code >= 0:
        return None
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _exit_info(code: int | None) -> dict[str, Any]:
    meaning = {
        0: "all tests passed",
        1: "some tests failed",
        2: "interrupted",
        3: "internal error",
        4: "usage error",
        5: "no tests collected",
        124: "timeout",
        137: "killed (SIGKILL, e.g. out of memory)",
        139: "segmentation fault",
    }
    sig = _signal_name(code)
    if code is not None and code > 128 and sig is None:
        with contextlib.suppress(ValueError):
            sig = signal.Signals(code - 128).name
    return {
        "code": code,
        "signal": sig,
        "meaning": meaning.get(code, sig or "unknown") if code is not None else "not finished",
    }


def _process_details(process: Any) -> dict[str, Any]:
    """What the launcher knows about how its process ended (a container's name, exit code, OOM kill)."""
    details = getattr(process, "exit_details", None)
    return details() if callable(details) else {}


def _status_for(code: int | None) -> CellStatus:
    if code in (0, 1, 5):
        return CellStatus.COMPLETED
    if code is not None and (code < 0 or code > 128 or code == 124):
        return CellStatus.CRASHED
    return CellStatus.INFRA_ERROR


def run_cell(
    opts: RunOptions, make_launcher: LauncherFactory | None = None, backend_id: str | None = None
) -> CellOutcome:
    """Run the suites once into a new cell dir and return how it ended (natively unless a
    launcher factory is given: container mode passes its own)."""
    native = make_launcher is None
    make_launcher = make_launcher or native_launcher(opts)
    chosen = backend_id or opts.backend
    env_probe: dict[str, Any] | None = None
    if native:
        # Natively the probe is cheap: it runs first, so the cell id can name the torch build, and a
        # build whose device is missing can be run on the CPU (or refused) before any cell exists.
        scratch = Path(tempfile.mkdtemp(prefix="compat-probe-"))
        try:
            launcher = make_launcher(get_backend(chosen or "cpu"), scratch, "probe")
            env_probe, problem = probe(launcher, dict(os.environ), get_backend(chosen or "cpu"))
            launcher.close()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if env_probe is None and chosen is None:
            raise InfrastructureError(problem or "probe failed", hint=f"is torch installed for {launcher.python}?")
        if env_probe is not None and not (env_probe.get("torch") or {}).get("version"):
            raise no_torch(launcher.python, env_probe)
    if chosen is None and env_probe is not None:
        # Native default: the backend is whatever the local torch build is. Builds are recognised
        # from their local tag or torch.version, so every torch gets a column named after its build.
        found = backend_for_probe(env_probe)
        if found is None:
            version = (env_probe.get("torch") or {}).get("version")
            raise InfrastructureError(
                f"the local torch {version} names no build (no local tag, no CUDA/HIP/XPU runtime)",
                hint="pass --backend explicitly",
            )
        chosen = found.id
    backend = get_backend(chosen or "cpu")
    variant_reason = None
    if env_probe is not None:
        variant_reason = cpu_only_reason(
            backend, env_probe, native=native, asked=opts.cpu_only, explicit_backend=opts.backend is not None
        )
    torch = ((env_probe or {}).get("torch") or {}).get("version")
    cell, manifest = _new_cell(
        opts, backend, "native" if native else "container", torch, CPU_ONLY if variant_reason else None
    )
    if variant_reason:
        manifest.update(variant=CPU_ONLY, variant_reason=variant_reason)
        cell.write_manifest(manifest)
    launcher = make_launcher(backend, cell.path, manifest["cell_id"])
    try:
        with _sigterm_as_exception():
            return _run(opts, backend, cell, launcher, manifest, env_probe)
    finally:
        launcher.close()


def _new_cell(
    opts: RunOptions, backend: Backend, mode: str, torch: str | None = None, variant: str | None = None
) -> tuple[CellDir, dict[str, Any]]:
    """A new cell dir with its manifest written (before anything runs)."""
    features = load_features(opts.suites_dir, opts.features_file)
    cell_id = resolve_cell_id(opts, backend, torch, variant)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    cell = CellDir(opts.results_dir / f"{cell_id}-{stamp}")
    cell.path.mkdir(parents=True, exist_ok=False)
    manifest = new_manifest(
        cell_id=cell_id,
        backend=backend.id,
        mode=mode,
        suite_sha=suite_sha(opts.suites_dir),
        runner=runner_info(),
        features=features,
        planned={
            "workers": opts.workers,
            "test_timeout": opts.test_timeout,
            "cell_timeout": opts.cell_timeout,
            "pytest_args": list(opts.pytest_args),
            "tests": list(opts.tests),
        },
    )
    cell.write_manifest(manifest)
    return cell, manifest


def refuse_cell(opts: RunOptions, backend: Backend, mode: str, reason: str) -> CellOutcome:
    """A cell that cannot run here (no device, no image): NO DATA with the reason, and nothing run."""
    cell, manifest = _new_cell(opts, backend, mode)
    with cell.output_log.open("ab") as log:
        log.write(f"health gate: {reason}\n".encode())
    return _finish(cell, manifest, CellStatus.INFRA_ERROR, error=reason)


def _finish(cell: CellDir, manifest: dict[str, Any], status: CellStatus, **fields: Any) -> CellOutcome:
    manifest.update(fields, status=status.value, finished_at=utc_now())
    cell.write_manifest(manifest)
    return CellOutcome(cell.path, manifest)


def _run(
    opts: RunOptions,
    backend: Backend,
    cell: CellDir,
    launcher: Launcher,
    manifest: dict[str, Any],
    env_probe: dict[str, Any] | None,
) -> CellOutcome:
    manifest["image"] = launcher.describe()
    cell.write_manifest(manifest)
    log = cell.output_log.open("ab")
    try:
        base_env = run_env(launcher, backend, opts, 1, None)
        fresh, problem = probe(launcher, base_env, backend)
        env_probe = fresh or env_probe
        manifest["environment"] = env_probe
        if fresh is None:
            log.write(f"health gate: {problem}\n".encode())
            return _finish(cell, manifest, CellStatus.INFRA_ERROR, error=problem)
        # Natively the probe is cheap, so it runs even when a device is missing: both facts are told.
        cpu_only = manifest.get("variant") == CPU_ONLY
        host = preflight(backend, container=False) if launcher.mode == "native" and not cpu_only else None
        problems = health_problems(
            backend, fresh, container=launcher.mode != "native", host_problem=host, cpu_only=cpu_only
        )
        if not problems and not cpu_only:
            check = health_check_problem(launcher, backend, base_env)
            problems += [check] if check else []
        if problems:
            message = "; ".join(problems)
            log.write(f"health gate: {message}\n".encode())
            return _finish(cell, manifest, CellStatus.INFRA_ERROR, error=message)
        workers = resolve_workers(opts.workers, backend, fresh)
        env = run_env(launcher, backend, opts, workers, fresh)
        argv = pytest_argv(launcher, workers, opts.pytest_args, opts.tests)
        manifest["planned"]["workers"] = workers
        manifest["planned"]["command"] = argv
        cell.write_manifest(manifest)
        log.write(("$ " + " ".join(argv) + "\n").encode())
        log.flush()
        process = launcher.start(argv, env, log)
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
                        exit={**_exit_info(None), **_process_details(process)},
                        error=f"the cell ran past its {opts.cell_timeout:.0f} s limit and was stopped",
                    )
            reporter.done()
        except (KeyboardInterrupt, _Terminated) as stop:
            process.stop()
            why = "Ctrl-C" if isinstance(stop, KeyboardInterrupt) else "SIGTERM"
            _finish(
                cell,
                manifest,
                CellStatus.INTERRUPTED,
                exit={**_exit_info(None), **_process_details(process)},
                error=f"stopped by {why}; partial results kept",
            )
            raise InterruptedRunError(f"run stopped by {why}; partial results in {cell.path}") from None
        status = _status_for(code)
        info = {**_exit_info(code), **_process_details(process)}
        error = None if status is CellStatus.COMPLETED else f"pytest ended with {info['meaning']} (exit {code})"
        return _finish(cell, manifest, status, exit=info, error=error)
    finally:
        log.close()
