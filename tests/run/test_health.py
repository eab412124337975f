"""harness/run/health.py: what a runner lacks, said in one line with what is missing, that nothing ran,
and the fix; the probe's verdict comes from harness/torch_build.py."""

from __future__ import annotations

from pathlib import Path

from harness.probe import Probe
from harness.registry import get_backend
from harness.run import health
from harness.run.launcher import Completed

CPU_PROBE = Probe.from_json({"torch": {"version": "2.13.0+cpu", "local_tag": "cpu"}, "build": "cpu", "accelerator": {}})
CU130_NO_GPU = Probe.from_json(
    {
        "torch": {"version": "2.11.0+cu130", "local_tag": "cu130"},
        "build": "cuda",
        "runtime": {"cuda": "13.0"},
        "accelerator": {"available": False, "count": 0},
        "errors": [],
    }
)


def test_missing_devices_say_what_is_missing_that_nothing_ran_and_the_fix() -> None:
    present = {"/dev/dri"}.__contains__
    assert health.preflight(get_backend("cpu"), container=True, exists=present) is None
    assert health.preflight(get_backend("xpu"), container=True, exists=present) is None
    rocm = health.preflight(get_backend("rocm"), container=True, exists=present)
    assert rocm and "/dev/kfd is missing on this host" in rocm and "nothing ran" in rocm and "amdgpu" in rocm
    cuda = health.preflight(get_backend("cu130"), container=True, exists=present)
    assert cuda and "no NVIDIA driver" in cuda and "nothing ran" in cuda
    assert "NVIDIA Container Toolkit" in cuda and "--gpus all" in cuda and "gpu-nvidia" in cuda
    assert "\n" not in cuda
    assert health.preflight(get_backend("rocm"), container=True, cdi=True, exists=present) is None


def test_native_run_without_the_device_group_says_which_groups() -> None:
    """A native ROCm run by a user outside the render/video groups: the fix names the groups."""
    everything = lambda _node: True  # noqa: E731
    closed = health.preflight(get_backend("rocm"), container=False, exists=everything, can_open=lambda _n: False)
    assert closed and "cannot open /dev/kfd" in closed and "usermod -aG video,render" in closed
    assert "nothing ran" in closed
    assert health.preflight(get_backend("rocm"), container=True, exists=everything, can_open=lambda _n: False) is None


def test_engine_refusals_are_explained() -> None:
    cu130 = get_backend("cu130")
    no_toolkit = health.explain_refusal(cu130, 'could not select device driver "" with capabilities: [[gpu]]')
    assert "NVIDIA Container Toolkit is not installed" in no_toolkit and "nothing ran" in no_toolkit
    assert "nvidia-ctk runtime configure" in no_toolkit
    no_cdi = health.explain_refusal(get_backend("rocm"), 'could not select device driver "cdi" with capabilities: []')
    assert "CDI" in no_cdi and "nothing ran" in no_cdi
    other = health.explain_refusal(cu130, "no space left on device")
    assert other == "docker could not start the cu130 container: no space left on device; nothing ran"


class _Refusing:
    """A launcher whose engine refuses every container (what a GPU backend meets on this host)."""

    mode = "container"
    python = "/opt/venv/bin/python"
    suites_path = "/suites"

    def execute(self, argv: list[str], env: dict[str, str], timeout: float) -> Completed:
        return Completed(125, "", 'could not select device driver "" with capabilities: [[gpu]]', refused=True)


def test_a_probe_that_never_ran_does_not_claim_it_probed() -> None:
    """Issue: `harness run --backend cu130` said "cannot probe torch on this runner (exit 125)"."""
    data, why = health.probe(_Refusing(), {}, get_backend("cu130"))  # type: ignore[arg-type]
    assert data is None and why
    assert "cannot probe" not in why and "exit 125" not in why
    assert "NVIDIA Container Toolkit" in why and "nothing ran" in why


def test_health_uses_the_one_build_rule() -> None:
    assert health.health_problems(get_backend("cpu"), CPU_PROBE) == []
    wrong = health.health_problems(get_backend("cu126"), CPU_PROBE)
    assert wrong and "needs a cuda build" in wrong[0] and "whl/cu126" in wrong[-1]


def test_a_gpu_build_without_a_visible_device_is_no_data_with_the_fix() -> None:
    problems = health.health_problems(get_backend("cu130"), CU130_NO_GPU, container=True)
    assert len(problems) == 1
    assert "no CUDA 13.0 device is visible to torch in the container" in problems[0]
    assert "nothing ran" in problems[0] and "NVIDIA Container Toolkit" in problems[0]


def test_a_native_run_tells_both_the_wrong_build_and_the_missing_device() -> None:
    missing = health.no_device(get_backend("cu130"), "/dev/nvidiactl is missing on this host")
    problems = health.health_problems(get_backend("cu130"), CPU_PROBE, host_problem=missing)
    assert "is a cpu build, backend cu130 needs a cuda build" in problems[0] and problems[-1] == missing
    # with the right build, the host's reason replaces the vaguer "no device visible"
    assert health.health_problems(get_backend("cu130"), CU130_NO_GPU, host_problem=missing) == [missing]


def test_a_device_build_without_its_device_runs_cpu_only_natively_unless_named() -> None:
    cu130 = get_backend("cu130")

    def reason(probe: Probe, *, native: bool = True, asked: bool | None = None, explicit: bool = False) -> str | None:
        return health.cpu_only_reason(cu130, probe, native=native, asked=asked, explicit_backend=explicit)

    assert reason(CU130_NO_GPU) == "no CUDA 13.0 device on this host; the suites ran on the CPU"
    assert reason(CU130_NO_GPU, explicit=True) is None, "a backend named with --backend keeps its health gate"
    assert reason(CU130_NO_GPU, explicit=True, asked=True) is not None, "--cpu-only asks for it"
    assert reason(CU130_NO_GPU, asked=False) is None, "--require-device refuses it"
    assert reason(CU130_NO_GPU, native=False, asked=True) is None, "a container never runs without its device"
    assert reason(CPU_PROBE) is None, "not the backend's build at all: the gate says so"
    with_gpu = Probe.from_json({**CU130_NO_GPU.raw, "accelerator": {"available": True, "type": "cuda", "count": 1}})
    assert reason(with_gpu) is None
    assert health.health_problems(cu130, CU130_NO_GPU, cpu_only=True) == []
    assert health.health_problems(cu130, CPU_PROBE, cpu_only=True), "cpu-only still needs the backend's build"


def test_cell_ids_name_the_torch_build() -> None:
    from harness.run.execute import RunOptions, resolve_cell_id, torch_label

    cu130, rocm = get_backend("cu130"), get_backend("rocm")
    assert torch_label("2.14.1+cu130", cu130) == "2.14.1"
    assert torch_label("2.14.0.dev20261130+cu130", cu130) == "2.14.0.dev20261130"
    assert torch_label("2.13.0+rocm7.1", rocm) == "2.13.0-rocm7.1", "a tag that is not the backend's is kept"
    opts = RunOptions(suites_dir=Path("suites"))
    cell_id = resolve_cell_id(opts, cu130, "2.14.1+cu130", "cpu-only")
    assert cell_id.startswith("cu130-2.14.1-cpu-only-")
    assert resolve_cell_id(RunOptions(suites_dir=Path("suites"), cell_id="mine"), cu130, "2.14.1") == "mine"


def test_a_cell_on_another_python_than_planned_is_refused_in_one_line() -> None:
    from harness.interpreters import PythonKey
    from harness.probe import Probe
    from harness.run.health import interpreter_problem

    record = {"version": "3.11.7", "implementation": "cpython", "abi": "cp311", "free_threaded": False}
    probe = Probe.from_json({"python": "3.11.7", "interpreter": record})
    assert interpreter_problem(None, probe, container=True) is None
    assert interpreter_problem(PythonKey(3, 11), probe, container=True) is None
    assert interpreter_problem(PythonKey(3, 15), probe, container=True) == (
        "planned for Python 3.15, ran on CPython 3.11.7 (cp311); nothing ran "
        "(fix: build the image for it: harness build --python 3.15)"
    )
    native = interpreter_problem(PythonKey(3, 14, True), probe, container=False)
    assert native.startswith("planned for Python 3.14t, ran on CPython 3.11.7") and "--python 3.14t" in native
    old = interpreter_problem(PythonKey(3, 11), Probe.from_json({"python": "3.11.7"}), container=False)
    assert old.startswith("planned for Python 3.11, and the cell recorded no interpreter"), "never a guess"


def test_a_native_run_without_its_device_is_told_the_driver_never_the_container_toolkit() -> None:
    """Issue 42: `harness run --native --backend cu130` on a host without a GPU printed container advice."""
    cu130 = get_backend("cu130")
    native = health.preflight(cu130, container=False, exists=lambda node: False)
    container = health.preflight(cu130, container=True, exists=lambda node: False)
    assert native is not None and container is not None
    assert "install the NVIDIA driver" in native and "Container Toolkit" not in native and "--gpus" not in native
    assert "NVIDIA Container Toolkit" in container
    seen = health.health_problems(cu130, CU130_NO_GPU, container=False)
    assert seen and "Container Toolkit" not in seen[0] and "visible to torch on this host" in seen[0]
    rocm = health.preflight(get_backend("rocm"), container=False, exists=lambda node: False)
    assert rocm is not None and "container" not in rocm
