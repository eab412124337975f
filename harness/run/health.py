"""Can this runner produce a cell of this backend? Decided before any test runs: the host's
devices (preflight), the engine's answer to the container (refusals), the suites' probe of the
torch that would run, and the registry's health check. Every "no" is one line that says what is
missing, that nothing ran, and how to fix it; the cell is then NO DATA, never red tests.

Whether the torch is the backend's build is decided by harness/torch_build.py, the same rule the
image verifier applies at build time.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Final

from harness.interpreters import PythonKey, contradiction
from harness.probe import Probe
from harness.registry import Backend
from harness.run.launcher import Launcher
from harness.torch_build import mismatches

PROBE_SCRIPT: Final = "_support/probe.py"
PROBE_TIMEOUT: Final = 180.0
HEALTH_TIMEOUT: Final = 60.0
NOTHING_RAN: Final = "nothing ran"
NVIDIA_CONTROL: Final = "/dev/nvidiactl"

# The fix for a backend whose device is missing, by build kind: the driver (native and container
# runs), then what a container needs on top (a native run is never told about container tooling).
DEVICE_FIX: Final = {
    "cuda": "install the NVIDIA driver (nvidia-smi must list the GPU)",
    "rocm": "load the amdgpu driver with ROCm support (it makes /dev/kfd and /dev/dri/renderD*)",
    "xpu": "install Intel's GPU driver (i915 or xe: it makes /dev/dri/renderD*)",
}
CONTAINER_FIX: Final = {
    "cuda": " and, for containers, the NVIDIA Container "
    "Toolkit (`sudo nvidia-ctk runtime configure --runtime=docker`, then restart dockerd; the harness passes "
    "--gpus all, or CDI names with --cdi after `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`)",
    "rocm": "; the harness passes both to the container with the host's video and render groups",
    "xpu": "; the harness passes /dev/dri to the container with the host's video and render groups",
}
GROUP_FIX: Final = (
    "add the runner's user to the groups that own the device nodes (`sudo usermod -aG video,render $USER`, "
    "then log in again, or restart the runner service)"
)


def _runner_labels(backend: Backend) -> str:
    return ", ".join(backend.runner_labels)


def no_device(backend: Backend, what: str, *, container: bool = True) -> str:
    """One line: what is missing, that nothing ran, the fix (a native run's without container tooling)."""
    fix = DEVICE_FIX.get(backend.build, "") + (CONTAINER_FIX.get(backend.build, "") if container else "")
    where = f"; or run this cell on a runner labelled {_runner_labels(backend)}" if backend.runner_labels else ""
    return f"{backend.display_name} cannot run here: {what}; {NOTHING_RAN} (fix: {fix}{where})"


# -- 1. the host, before anything is built or started ---------------------------------------------
def preflight(
    backend: Backend,
    *,
    container: bool,
    cdi: bool = False,
    exists: Callable[[str], bool] = os.path.exists,
    can_open: Callable[[str], bool] = lambda node: os.access(node, os.R_OK | os.W_OK),
) -> str | None:
    """Why this host cannot give the backend its devices (None: nothing missing). For a container on
    a local engine, and for a native run (where the runner's own user must open the nodes)."""
    if cdi and container and backend.cdi_devices:
        return None  # the CDI specs name the nodes; the engine says if they are missing
    missing = [f"{node} is missing on this host" for node in backend.devices if not exists(node)]
    if backend.gpus and not exists(NVIDIA_CONTROL):
        missing.append(f"{NVIDIA_CONTROL} is missing on this host (no NVIDIA driver loaded)")
    if missing:
        return no_device(backend, "; ".join(missing), container=container)
    if not container:
        closed = [node for node in _device_nodes(backend) if not can_open(node)]
        if closed:
            return (
                f"{backend.display_name} cannot run here: user {_user()} cannot open {', '.join(closed)}; "
                f"{NOTHING_RAN} (fix: {GROUP_FIX})"
            )
    return None


def _device_nodes(backend: Backend) -> list[str]:
    nodes: list[str] = []
    for node in backend.devices:
        if os.path.isdir(node):
            nodes += sorted(os.path.join(node, n) for n in os.listdir(node) if n.startswith("renderD"))
        else:
            nodes.append(node)
    return nodes


def _user() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


# -- 2. the engine refused the container -------------------------------------------------------------
_REFUSALS: Final = (
    (
        re.compile(r'could not select device driver "" with capabilities: \[\[gpu\]\]'),
        "the Docker engine cannot pass NVIDIA GPUs (--gpus): the NVIDIA Container Toolkit is not installed or "
        "not configured for this engine",
        "install nvidia-container-toolkit, run `sudo nvidia-ctk runtime configure --runtime=docker` and "
        "restart dockerd; or pass --cdi after `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`",
    ),
    (
        re.compile(r'device driver "cdi"|unresolvable CDI devices|CDI device', re.IGNORECASE),
        "the Docker engine does not know the CDI devices the registry names",
        "generate CDI specs (`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`, `amd-ctk cdi generate`) "
        'and enable CDI in the engine (Docker 25+: "features": {"cdi": true} in daemon.json); or run without --cdi',
    ),
    (
        re.compile(r"error gathering device information while adding custom device \"([^\"]+)\""),
        "the Docker engine cannot find a device node the backend needs",
        "",
    ),
)


def explain_refusal(backend: Backend, reason: str) -> str:
    """The engine's refusal of a container, as what is missing, that nothing ran, and the fix."""
    for pattern, what, fix in _REFUSALS:
        match = pattern.search(reason)
        if match:
            if not fix:
                return no_device(backend, f"{what} ({match.group(1) if match.groups() else reason})")
            return f"docker could not start the {backend.id} container: {what} ({reason}); {NOTHING_RAN} (fix: {fix})"
    return f"docker could not start the {backend.id} container: {reason}; {NOTHING_RAN}"


# -- 3. the probe and the health gate --------------------------------------------------------------
def probe(launcher: Launcher, env: dict[str, str], backend: Backend) -> tuple[Probe | None, str | None]:
    """The suites' probe of the torch that would run: its JSON object, or (None, why)."""
    argv = [launcher.python, f"{launcher.suites_path}/{PROBE_SCRIPT}"]
    done = launcher.execute(argv, env, PROBE_TIMEOUT)
    if done.refused:
        return None, explain_refusal(backend, done.stderr)  # nothing was probed: say why, not "exit 125"
    if done.exit_code != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return None, f"cannot probe torch on this runner (exit {done.exit_code}): {' / '.join(tail) or 'no output'}"
    text = done.stdout
    start = text.find("{")  # tolerate noise (warnings) printed before the object
    try:
        data = json.loads(text[start:]) if start >= 0 else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return None, f"probe printed no JSON object: {text[-200:]!r}"
    return Probe.from_json(data), None


CPU_ONLY: Final = "cpu-only"


def cpu_only_reason(
    backend: Backend, env_probe: Probe, *, native: bool, asked: bool | None, explicit_backend: bool
) -> str | None:
    """Why this cell runs its suites on the CPU although its build targets a device (None: it does not).

    A CUDA, ROCm or XPU build on a host without that device still runs everywhere torch's CPU side
    works, so natively it becomes a column of its own (variant `cpu-only`), its device tests skipped
    as `[hardware]`, never the backend's verdict. It happens by default when the backend was not named
    (`harness` on a laptop with PyPI's CUDA build) or when `--cpu-only` asks; a backend named with
    `--backend` keeps its health gate, and a container never runs without its device."""
    if not native or not backend.needs_device or asked is False or (explicit_backend and not asked):
        return None
    if env_probe.accelerator_available:
        return None
    if mismatches(env_probe.facts, backend.expected()):
        return None  # not this backend's build at all: the gate says so
    return f"no {backend.display_name} device on this host; the suites ran on the CPU"


def health_problems(
    backend: Backend,
    env_probe: Probe,
    *,
    container: bool = False,
    host_problem: str | None = None,
    cpu_only: bool = False,
) -> list[str]:
    """Why this runner cannot produce a `backend` cell (empty list: healthy). `host_problem` is what
    preflight found missing on the host of a native run; it says more than "no device visible".
    A `cpu_only` cell needs the backend's build, not its device."""
    problems = mismatches(env_probe.facts, backend.expected())
    if problems:
        problems[-1] += f" (install torch from {backend.wheel_index})"
    if cpu_only:
        return problems
    if host_problem:
        return [*problems, host_problem]
    if backend.accelerator and not env_probe.accelerator_available and not problems:
        errors = env_probe.accelerator_errors()
        seen_by = "torch in the container" if container else "torch on this host"
        why = f" ({errors[0]})" if errors else ""
        what = f"no {backend.display_name} device is visible to {seen_by}{why}"
        problems.append(no_device(backend, what, container=container))
    return problems


def health_check_problem(launcher: Launcher, backend: Backend, env: dict[str, str]) -> str | None:
    """The registry's health check (nvidia-smi -L, rocminfo, sycl-ls) where it applies."""
    if launcher.mode == "native" and not backend.needs_device:
        return None
    check = launcher.execute(list(backend.health_check), env, HEALTH_TIMEOUT)
    if check.refused:
        return explain_refusal(backend, check.stderr)
    if check.exit_code == 0:
        return None
    detail = (check.stderr or check.stdout).strip().splitlines()[-1:] or ["no output"]
    return f"health check `{' '.join(backend.health_check)}` failed (exit {check.exit_code}): {detail[0]}"


def interpreter_problem(planned: PythonKey | None, env_probe: Probe, *, container: bool) -> str | None:
    """Why the interpreter the suites would run on is not the Python the cell was planned for (None: it is, or
    none was planned): one line, as a wrong device is, and the cell is NO DATA."""
    why = contradiction(planned, env_probe.interpreter)
    if why is None or planned is None:
        return None
    fix = (
        f"build the image for it: harness build --python {planned.label}"
        if container
        else f"run it with that interpreter: --python {planned.label} (python{planned.label} on PATH) or its path"
    )
    return f"{why}; {NOTHING_RAN} (fix: {fix})"
