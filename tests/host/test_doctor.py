"""`harness doctor` on fake hosts: sysfs/procfs trees under a tmp root, tools as scripts on a tmp PATH,
and a fake `python` that prints what a torch would. No real torch, no GPU, no Docker."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from harness import cli
from harness.host.doctor import (
    Fit,
    Report,
    cuda_arch_fit,
    install_advice,
    make_report,
    version_key,
)
from harness.host.facts import (
    CHILD_MARK,
    ROOT_ENV,
    Host,
    detect_host,
    gfx_of,
    inspect_torch,
    normalize_bus_id,
    parse_proc_nvidia_version,
)
from tests.conftest import slow_fixture

CU13_ARCHS = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
ROCM714_ARCHS = ["gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200"]
CPU_LINE_215 = "python -m pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cpu"


class FakeHost:
    """A host as doctor reads it: files under `root`, tools in `bin` (the only PATH entry)."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "root"
        self.bin = tmp_path / "bin"
        self.root.mkdir()
        self.bin.mkdir()
        self.extra_env: dict[str, str] = {}

    @property
    def env(self) -> dict[str, str]:
        return {"PATH": str(self.bin), ROOT_ENV: str(self.root), **self.extra_env}

    def file(self, path: str, text: str) -> None:
        target = self.root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def tool(self, name: str, stdout: str, rc: int = 0, stderr: str = "") -> None:
        """An executable script that prints `stdout` (printf is a shell builtin: PATH holds nothing else)."""
        lines = " ".join(shlex.quote(line) for line in stdout.splitlines())
        script = f"#!/bin/sh\nprintf '%s\\n' {lines}\n" if lines else "#!/bin/sh\n"
        if stderr:
            script += f"printf '%s\\n' {shlex.quote(stderr)} >&2\n"
        script += f"exit {rc}\n"
        path = self.bin / name
        path.write_text(script, encoding="utf-8")
        path.chmod(0o755)

    def python(self, answer: dict[str, object]) -> str:
        """A fake interpreter named `python` that answers doctor's child code as a torch would."""
        self.tool("python", CHILD_MARK + json.dumps(answer))
        return "python"

    def pci(self, bus: str, vendor: int, device: int, pci_class: int, driver: str | None = None) -> None:
        base = f"/sys/bus/pci/devices/{bus}"
        self.file(f"{base}/vendor", f"0x{vendor:04x}\n")
        self.file(f"{base}/device", f"0x{device:04x}\n")
        self.file(f"{base}/class", f"0x{pci_class:06x}\n")
        if driver:
            os.symlink(f"../../../bus/pci/drivers/{driver}", self.root / base.lstrip("/") / "driver")

    def nvidia(self, driver: str, gpus: list[tuple[str, str, str]], *, smi: bool = True, sysfs: bool = True) -> None:
        """NVIDIA's kernel module files, and nvidia-smi when `smi`; gpus: (name, capability, bus)."""
        if sysfs:
            self.file("/sys/module/nvidia/version", f"{driver}\n")
        self.file(
            "/proc/driver/nvidia/version",
            f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {driver}  Release Build  "
            "(dvs-builder@U22)  Thu Oct  2 10:00:00 UTC 2026\nGCC version:  gcc version 12.3.0\n",
        )
        rows = []
        for index, (name, capability, bus) in enumerate(gpus):
            uuid = f"GPU-{index:08d}-aaaa-bbbb-cccc-000000000000"
            self.file(
                f"/proc/driver/nvidia/gpus/{bus}/information",
                f"Model: \t\t {name}\nIRQ:   \t\t 54\nGPU UUID: \t {uuid}\n"
                f"Bus Location: \t {bus}\nDevice Minor: \t {index}\n",
            )
            rows.append(f"{name}, {capability}, {driver}, 0000{bus.upper()}, {uuid}")
        if smi:
            self.tool("nvidia-smi", "\n".join(rows))

    def kfd(self, gfx_target_versions: list[int], products: list[str] | None = None) -> None:
        """The KFD topology: node 0 is the CPU, then one node per GPU on bus 0000:<c1+i>:00.0."""
        self.file("/sys/class/kfd/kfd/topology/nodes/0/properties", "cpu_cores_count 64\ngfx_target_version 0\n")
        for i, target in enumerate(gfx_target_versions, start=1):
            bus = 0xC0 + i
            self.file(
                f"/sys/class/kfd/kfd/topology/nodes/{i}/properties",
                f"cpu_cores_count 0\nsimd_count 1216\ngfx_target_version {target}\nlocation_id {bus << 8}\ndomain 0\n",
            )
            if products:
                self.file(f"/sys/bus/pci/devices/0000:{bus:02x}:00.0/product_name", products[i - 1] + "\n")

    def host(self) -> Host:
        return detect_host(self.root, self.env)

    def report(self, python: str | None = None, asked: str | None = None) -> Report:
        torch = inspect_torch(python, self.env) if python else None
        return make_report(self.host(), torch, python="python", asked=asked)


@pytest.fixture
@slow_fixture("runs fake tools (nvidia-smi, rocm_agent_enumerator, a python printing torch's facts) as subprocesses")
def fake(tmp_path: Path) -> FakeHost:
    return FakeHost(tmp_path)


def cuda_torch(version: str, cuda: str, archs: list[str], devices: int = 1) -> dict[str, object]:
    return {"state": "installed", "version": version, "cuda": cuda, "hip": None, "xpu": None,
            "arch_list": archs, "devices": devices}  # fmt: skip


# -- NVIDIA ---------------------------------------------------------------------------------------------
def test_pascal_with_a_cuda13_wheel_is_told_the_newest_torch_for_its_gpu(fake: FakeHost) -> None:
    fake.nvidia("580.95.05", [("Tesla P100-PCIE-16GB", "6.0", "0000:3b:00.0")])
    python = fake.python(cuda_torch("2.15.0+cu132", "13.2", CU13_ARCHS))
    report = fake.report(python)

    (gpu,) = report.host.gpus
    assert (gpu.name, gpu.arch, gpu.arch_source, gpu.bus_id) == (
        "Tesla P100-PCIE-16GB",
        "sm_60",
        "nvidia-smi",
        "0000:3b:00.0",
    )
    assert (report.host.nvidia_driver, report.host.nvidia_driver_source) == ("580.95.05", "/sys/module/nvidia/version")
    verdict = report.torch_verdict
    assert verdict is not None and verdict.fit is Fit.NO
    assert verdict.summary.startswith("torch 2.15.0+cu132 cannot use this host's GPU")
    assert "GPU 0 (Tesla P100-PCIE-16GB, sm_60) is not in its archs (sm_75..sm_120)" in verdict.summary
    assert "torch itself: torch.cuda.device_count() = 1" in verdict.reasons[-1]
    cu132 = report.verdicts["2.15"]["cu132"]
    assert cu132.fit is Fit.NO and not cu132.driver_only
    assert report.verdicts["2.14"]["cu126"].fit is Fit.YES
    rec = report.recommendation
    assert (rec.variant, rec.version) == ("cu126", "2.14.1")
    assert rec.command == "python -m pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126"
    assert rec.summary.endswith("the newest torch for this GPU is 2.14.1 with cu126")
    assert f"or torch 2.15.0 without the GPU (CPU build): {CPU_LINE_215}" in rec.alternatives


def test_without_nvidia_smi_the_capability_comes_from_the_name_table_and_says_so(fake: FakeHost) -> None:
    fake.nvidia("580.95.05", [("NVIDIA GeForce GTX 1080", "", "0000:01:00.0")], smi=False, sysfs=False)
    host = fake.host()
    (gpu,) = host.gpus
    assert (gpu.arch, gpu.arch_source) == ("sm_61", "name table (fallback)")
    assert (host.nvidia_driver, host.nvidia_driver_source) == ("580.95.05", "/proc/driver/nvidia/version")
    assert dict(host.tools)["nvidia-smi"] == "not found"
    assert fake.report().recommendation.command.endswith(
        "torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126"
    )


def test_a_gpu_the_name_table_does_not_know_is_unknown_not_guessed(fake: FakeHost) -> None:
    fake.nvidia("580.95.05", [("NVIDIA Mystery GPU", "", "0000:01:00.0")], smi=False)
    report = fake.report()
    assert report.host.gpus[0].arch == ""
    assert report.verdicts["2.15"]["cu132"].fit is Fit.UNKNOWN
    assert "compute capability unknown" in report.verdicts["2.15"]["cu132"].headline
    assert report.recommendation.variant == "cpu"  # nothing is known to run: doctor does not bet
    assert any(alt.startswith("may run, unchecked (cu132") for alt in report.recommendation.reasons)


def test_h100_with_driver_575_gets_cu126_of_2_14_or_a_driver_upgrade_for_2_15(fake: FakeHost) -> None:
    gpus = [("NVIDIA H100 80GB HBM3", "9.0", f"0000:{0x18 + i:02x}:00.0") for i in range(8)]
    fake.nvidia("575.57.08", gpus, sysfs=False)
    report = fake.report()
    cu132 = report.verdicts["2.15"]["cu132"]
    assert cu132.fit is Fit.NO and cu132.driver_only
    assert cu132.headline == "driver 575.57.08 < 580.65.06"
    assert report.verdicts["2.15"]["cu130"].driver_only
    rec = report.recommendation
    assert rec.command == "python -m pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126"
    assert rec.summary == (
        "no torch 2.15 build runs on GPUs 0-7 (NVIDIA H100 80GB HBM3, sm_90); "
        "the newest torch for this driver is 2.14.1 with cu126"
    )
    assert rec.alternatives[0] == (
        "or upgrade the NVIDIA driver to >= 580.65.06 for torch 2.15.0 (cu132): python -m pip install torch==2.15.0"
    )


def test_h100_with_driver_580_gets_pypis_default(fake: FakeHost) -> None:
    fake.nvidia("580.95.05", [("NVIDIA H100 80GB HBM3", "9.0", "0000:18:00.0")])
    rec = fake.report().recommendation
    assert (rec.variant, rec.command) == ("cu132", "python -m pip install torch==2.15.0")
    assert rec.summary.startswith("torch 2.15.0 PyPI's default build: driver 580.95.05 >= 580.65.06")
    # asked about 2.14: its PyPI default is cu130
    assert fake.report(asked="2.14").recommendation.command == "python -m pip install torch==2.14.1"


def test_cuda_visible_devices_decides_which_gpus_count(fake: FakeHost) -> None:
    fake.nvidia(
        "580.95.05", [("Tesla P100-PCIE-16GB", "6.0", "0000:3b:00.0"), ("NVIDIA A100-SXM4-80GB", "8.0", "0000:5e:00.0")]
    )
    both = fake.report()
    assert both.verdicts["2.15"]["cu132"].covers == 1 and both.verdicts["2.15"]["cu132"].of == 2
    assert "hide the others" in both.recommendation.summary

    fake.extra_env["CUDA_VISIBLE_DEVICES"] = "1"
    fake.extra_env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    only_a100 = fake.report()
    assert [g.visible for g in only_a100.host.gpus] == [False, True]
    assert only_a100.host.gpus[0].hidden_by == "CUDA_VISIBLE_DEVICES=1"
    assert only_a100.recommendation.command == "python -m pip install torch==2.15.0"

    fake.extra_env["CUDA_VISIBLE_DEVICES"] = ""
    none = fake.report().recommendation
    assert none.variant == "cpu" and none.summary.startswith("no GPU is visible (CUDA_VISIBLE_DEVICES=)")


def test_a_gpu_without_the_nvidia_driver_is_found_on_the_pci_bus(fake: FakeHost) -> None:
    fake.pci("0000:01:00.0", 0x10DE, 0x2330, 0x030200, driver="nouveau")
    report = fake.report()
    (gpu,) = report.host.gpus
    assert (gpu.vendor, gpu.driver, gpu.name) == ("nvidia", "nouveau", "NVIDIA GPU (PCI device 0x2330)")
    assert report.verdicts["2.15"]["cu132"].headline == (
        "an NVIDIA GPU is on the PCI bus but no NVIDIA driver is loaded (bound: nouveau)"
    )
    assert report.recommendation.command == CPU_LINE_215


# -- AMD ------------------------------------------------------------------------------------------------
def test_mi300x_from_sysfs_alone(fake: FakeHost) -> None:
    fake.kfd([90402], products=["AMD Instinct MI300X"])
    fake.file("/sys/module/amdgpu/version", "6.12.12\n")
    report = fake.report()
    (gpu,) = report.host.gpus
    assert (gpu.name, gpu.arch, gpu.arch_source, gpu.bus_id) == (
        "AMD Instinct MI300X",
        "gfx942",
        "KFD topology",
        "0000:c1:00.0",
    )
    assert report.host.amdgpu_driver == "6.12.12"
    assert dict(report.host.tools)["rocm_agent_enumerator"] == "not run (the KFD topology answered)"
    rec = report.recommendation
    assert rec.command == "python -m pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/rocm7.14"
    assert (
        rec.summary
        == "torch 2.15.0 from the rocm7.14 index: GPU 0 (AMD Instinct MI300X, gfx942): gfx942 is one of its targets"
    )
    # rocm10.0 targets gfx942 too (gfx900/gfx906 are gone), but stable rocm7.14 is recommended before it
    assert report.verdicts["2.15"]["rocm10.0"].fit is Fit.YES
    assert not any("rocm10.0" in alt for alt in rec.alternatives)


def test_visible_devices_doctor_cannot_resolve_hide_nothing(fake: FakeHost) -> None:
    fake.kfd([90402, 90402])
    fake.extra_env["ROCR_VISIBLE_DEVICES"] = "GPU-4b2c8a1f3e5d7a90"  # AMD UUIDs: doctor reads none
    fake.extra_env["HIP_VISIBLE_DEVICES"] = "1"
    host = fake.host()
    assert [(g.visible, g.hidden_by) for g in host.gpus] == [(False, "HIP_VISIBLE_DEVICES=1"), (True, "")]
    assert host.notes == (
        "ROCR_VISIBLE_DEVICES=GPU-4b2c8a1f3e5d7a90 cannot be matched to GPUs here: every GPU is judged as if visible",
    )


def test_mi300x_from_rocm_agent_enumerator(fake: FakeHost) -> None:
    fake.tool("rocm_agent_enumerator", "gfx000\ngfx942\ngfx942\n")
    report = fake.report()
    assert [(g.arch, g.arch_source) for g in report.host.gpus] == [("gfx942", "rocm_agent_enumerator")] * 2
    assert dict(report.host.tools)["rocm_agent_enumerator"] == "used"
    assert report.recommendation.variant == "rocm7.14"
    assert report.verdicts["2.15"]["rocm7.14"].headline == "GPUs 0-1 (AMD GPU, gfx942): gfx942 is one of its targets"


def test_gfx906_with_rocm7_14_installed_is_missing_its_arch(fake: FakeHost) -> None:
    fake.kfd([90006], products=["AMD Instinct MI50"])
    answer = {"state": "installed", "version": "2.15.0+rocm7.14", "cuda": None, "hip": "7.14.60100",
              "xpu": None, "arch_list": ROCM714_ARCHS, "devices": 1}  # fmt: skip
    report = fake.report(fake.python(answer))
    assert report.host.gpus[0].arch == "gfx906"
    verdict = report.torch_verdict
    assert verdict is not None and verdict.fit is Fit.NO
    assert "GPU 0 (AMD Instinct MI50, gfx906): gfx906 is not in its targets (gfx908, gfx90a" in verdict.summary
    rec = report.recommendation
    assert rec.command == "python -m pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/rocm7.2"
    assert rec.summary.endswith("the newest torch for this GPU is 2.14.1 with rocm7.2")


# -- Intel ----------------------------------------------------------------------------------------------
def test_arc_a770_with_i915_gets_the_xpu_build(fake: FakeHost) -> None:
    fake.pci("0000:03:00.0", 0x8086, 0x56A0, 0x030000, driver="i915")
    report = fake.report()
    (gpu,) = report.host.gpus
    assert (gpu.name, gpu.arch, gpu.driver) == ("Intel Arc A-series (Alchemist, DG2)", "dg2", "i915")
    rec = report.recommendation
    assert rec.command == "python -m pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/xpu"
    assert "on PyTorch's XPU list, driver i915" in rec.summary


def test_an_older_intel_igpu_alone_is_not_taken_for_an_xpu(fake: FakeHost) -> None:
    fake.pci("0000:00:02.0", 0x8086, 0x46A6, 0x030000, driver="i915")  # Alder Lake-P Iris Xe
    fake.pci("0000:00:1f.6", 0x8086, 0x1A1E, 0x020000, driver="e1000e")  # Intel NIC: not a display device
    report = fake.report()
    (gpu,) = report.host.gpus
    assert (gpu.name, gpu.arch) == ("Intel Iris Xe / UHD graphics (Alder Lake-P)", "adl-p")
    assert report.verdicts["2.15"]["xpu"].fit is Fit.UNKNOWN
    rec = report.recommendation
    assert rec.command == CPU_LINE_215
    assert rec.summary == (
        "no torch build is known to run on GPU 0 (Intel Iris Xe / UHD graphics (Alder Lake-P), adl-p): the CPU build"
    )
    assert any(r.startswith("may run, unchecked (xpu, stable") for r in rec.reasons)


def test_a_lunar_lake_igpu_with_xe_runs_the_xpu_build(fake: FakeHost) -> None:
    fake.pci("0000:00:02.0", 0x8086, 0x64A0, 0x030000, driver="xe")
    rec = fake.report().recommendation
    assert rec.variant == "xpu" and "Lunar Lake" in rec.summary and "driver xe" in rec.summary


def test_an_intel_gpu_without_a_driver_cannot_run_anything(fake: FakeHost) -> None:
    fake.pci("0000:03:00.0", 0x8086, 0xE20B, 0x030000)  # Battlemage, no driver bound
    report = fake.report()
    assert report.verdicts["2.15"]["xpu"].headline.endswith("no driver bound; the xpu build needs i915 or xe")
    assert report.recommendation.variant == "cpu"


# -- no GPU, and the interpreter ------------------------------------------------------------------------
def test_no_gpu_recommends_the_cpu_index(fake: FakeHost) -> None:
    fake.pci("0000:00:00.0", 0x8086, 0x3E0F, 0x060000)  # a host bridge
    report = fake.report(fake.python({"state": "absent"}))
    assert report.host.gpus == ()
    assert dict(report.host.tools) == {"nvidia-smi": "not found", "rocm_agent_enumerator": "not found"}
    assert report.torch_verdict is not None and report.torch_verdict.summary == "torch is not installed for python"
    rec = report.recommendation
    assert (rec.variant, rec.command) == ("cpu", CPU_LINE_215)
    assert rec.summary.startswith("this host has no GPU: the CPU build")


def test_the_interpreter_that_is_not_there_is_one_line(fake: FakeHost) -> None:
    torch = inspect_torch(str(fake.root / "no-such-python"), fake.env)
    assert (torch.state, torch.error) == ("unknown", f"{fake.root / 'no-such-python'}: not found")


def _fake_torch(tmp_path: Path, init: str) -> Path:
    pkg = tmp_path / "site" / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(init, encoding="utf-8")
    return pkg.parent


@pytest.mark.slow  # runs a python child that imports a stand-in torch
def test_the_child_reads_a_torch_without_a_usable_gpu(tmp_path: Path) -> None:
    """The real child code on a stand-in torch: get_arch_list() is [] without a device (as torch's is),
    so the compiled flags are read instead."""
    site = _fake_torch(
        tmp_path,
        "import types\n__version__ = '2.15.0+cu132'\n"
        "version = types.SimpleNamespace(cuda='13.2', hip=None)\n"
        "cuda = types.SimpleNamespace(get_arch_list=lambda: [], is_available=lambda: False, device_count=lambda: 0)\n"
        "_C = types.SimpleNamespace(_cuda_getArchFlags=lambda: 'sm_75 sm_80 sm_86 sm_90 sm_100 sm_120')\n",
    )
    torch = inspect_torch(sys.executable, {"PATH": os.defpath, "PYTHONPATH": str(site)})
    assert (torch.state, torch.version, torch.cuda, torch.xpu) == ("installed", "2.15.0+cu132", "13.2", None)
    assert torch.arch_list == tuple(CU13_ARCHS)
    assert torch.devices == 0
    assert torch.facts is not None and torch.facts.variant == "cu132"


@pytest.mark.slow  # runs a python child that imports a stand-in torch
def test_a_torch_that_does_not_import_is_said_in_one_line(tmp_path: Path) -> None:
    site = _fake_torch(tmp_path, "raise ImportError('libcudart.so.13: cannot open shared object file')\n")
    torch = inspect_torch(sys.executable, {"PATH": os.defpath, "PYTHONPATH": str(site)})
    assert torch.state == "broken"
    assert torch.error == "ImportError: libcudart.so.13: cannot open shared object file"


def test_failing_tools_and_unreadable_files_are_notes_not_tracebacks(fake: FakeHost) -> None:
    (fake.root / "sys/module/nvidia/version").mkdir(parents=True)  # a directory: reading it fails
    fake.tool(
        "nvidia-smi", "", rc=9, stderr="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
    )
    fake.tool("rocm_agent_enumerator", "", rc=1)
    host = fake.host()
    assert host.gpus == ()
    assert dict(host.tools)["nvidia-smi"] == (
        "failed (exit 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver)"
    )
    assert dict(host.tools)["rocm_agent_enumerator"] == "failed (exit 1)"
    assert host.notes == ("cannot read /sys/module/nvidia/version: Is a directory",)


# -- pieces ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("target", "gfx"),
    [(90402, "gfx942"), (90010, "gfx90a"), (90006, "gfx906"), (100300, "gfx1030"), (110501, "gfx1151")],
)
def test_kfd_target_versions_name_the_gfx(target: int, gfx: str) -> None:
    assert gfx_of(target) == gfx


@pytest.mark.parametrize(
    ("gpu", "fit"),
    [("sm_61", Fit.NO), ("sm_70", Fit.NO), ("sm_75", Fit.YES), ("sm_89", Fit.YES), ("sm_103", Fit.YES),
     ("sm_121", Fit.YES), ("sm_110", Fit.NO), ("sm_130", Fit.UNKNOWN)],
)  # fmt: skip
def test_a_cubin_runs_on_its_major_at_the_same_or_a_higher_minor(gpu: str, fit: Fit) -> None:
    assert cuda_arch_fit(gpu, CU13_ARCHS) is fit


def test_driver_versions_compare_part_by_part() -> None:
    assert version_key("580.95.05") > version_key("580.65.06") > version_key("575.57.08")
    assert version_key("1000.1") > version_key("580.95.05")  # numbers, not text


def test_both_nvrm_line_shapes_parse() -> None:
    assert (
        parse_proc_nvidia_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May  2 2024\n")
        == "470.256.02"
    )
    assert (
        parse_proc_nvidia_version(
            "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build\n"
        )
        == "580.95.05"
    )
    assert parse_proc_nvidia_version("garbage") == ""
    assert normalize_bus_id("00000000:3B:00.0") == normalize_bus_id("0000:3b:00.0") == "0000:3b:00.0"


# -- the verb and the advice ----------------------------------------------------------------------------
def test_install_advice_names_this_hosts_build(fake: FakeHost, monkeypatch: pytest.MonkeyPatch) -> None:
    fake.nvidia("580.95.05", [("Tesla P100-PCIE-16GB", "6.0", "0000:3b:00.0")])
    for key, value in fake.env.items():
        monkeypatch.setenv(key, value)
    assert install_advice("python3") == (
        "install it with `python3 -m pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126`: "
        "no torch 2.15 build runs on GPU 0 (Tesla P100-PCIE-16GB, sm_60); "
        "the newest torch for this GPU is 2.14.1 with cu126"
    )


def _cli(
    fake: FakeHost, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, *args: str
) -> tuple[int, str, str]:
    for key, value in fake.env.items():
        monkeypatch.setenv(key, value)
    code = cli.main(["doctor", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_text_for_pascal_with_cu132(fake, monkeypatch, capsys, golden) -> None:
    fake.nvidia("580.95.05", [("Tesla P100-PCIE-16GB", "6.0", "0000:3b:00.0")])
    python = fake.python(cuda_torch("2.15.0+cu132", "13.2", CU13_ARCHS))
    code, out, err = _cli(fake, monkeypatch, capsys, "--python", python)
    assert (code, err) == (0, "")
    assert "  torch 2.15.0+cu132 cannot use this host's GPU: driver" not in out  # the driver is fine: not the reason
    assert "  torch 2.15.0+cu132 cannot use this host's GPU: GPU 0 (Tesla P100-PCIE-16GB, sm_60)" in out
    assert "\n  python -m pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126\n" in out
    golden("doctor_pascal_cu132.txt", out)


def test_cli_text_for_no_gpu(fake, monkeypatch, capsys, golden) -> None:
    code, out, _ = _cli(fake, monkeypatch, capsys, "--python", fake.python({"state": "absent"}))
    assert code == 0
    assert "  no GPU found\n" in out and "  torch is not installed for python\n" in out
    assert f"\n  {CPU_LINE_215}\n" in out
    golden("doctor_no_gpu.txt", out)


def test_cli_json_and_another_release(fake, monkeypatch, capsys) -> None:
    fake.kfd([90402])
    code, out, _ = _cli(
        fake, monkeypatch, capsys, "--python", fake.python({"state": "absent"}), "--format", "json", "--torch", "2.14"
    )
    data = json.loads(out)
    assert code == 0 and data["release"] == "2.14"
    assert data["recommendation"]["command"] == (
        "python -m pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/rocm7.14"
    )
    assert data["releases"]["2.14"]["rocm7.2"]["fit"] == "runs"  # gfx942 is in both; 7.14 is the stable one
    assert data["host"]["gpus"][0]["arch"] == "gfx942"
    assert data["torch"]["state"] == "absent"


def test_cli_refuses_an_unknown_release_in_one_line(fake, monkeypatch, capsys) -> None:
    code, out, err = _cli(fake, monkeypatch, capsys, "--torch", "2.9")
    assert (code, out) == (2, "")
    assert err == (
        "harness: error: --torch 2.9: not a listed release "
        "(one of 2.12, 2.13, 2.14, 2.15, 2.16, or a version such as 2.14.1)\n"
    )


def test_a_python_the_current_release_has_no_wheel_for_gets_the_newest_release_that_has(fake: FakeHost) -> None:
    fake.nvidia("580.95.05", [("NVIDIA H100 80GB HBM3", "9.0", "0000:18:00.0")])
    report = fake.report(fake.python({"state": "absent", "python_version": "3.10"}))
    assert report.torch is not None and report.torch.python_version == "3.10"
    assert report.notes[0] == (
        "this Python 3.10 has no torch 2.15 wheel (it ships 3.11, 3.12, 3.13, 3.14, 3.15, 3.14t, 3.15t); "
        "the newest torch for it is 2.14.1"
    )
    assert report.release == "2.14" and report.recommendation.command == "python -m pip install torch==2.14.1"
    asked = fake.report(fake.python({"state": "absent", "python_version": "3.10"}), asked="2.15")
    assert asked.release == "2.15" and "this Python 3.10 has no torch 2.15 wheel" in asked.notes[0]
    fine = fake.report(fake.python({"state": "absent", "python_version": "3.11"}))
    assert fine.release == "2.15" and not fine.notes


def test_torch_compile_on_python_3_15_is_refused_before_2_15_and_free_threading_counts(fake: FakeHost) -> None:
    report = fake.report(fake.python({"state": "absent", "python_version": "3.15"}), asked="2.14")
    assert "torch 2.14 refuses torch.compile on this Python 3.15" in report.notes
    assert "this Python 3.15 has no torch 2.14 wheel" in report.notes[0]
    free = fake.report(fake.python({"state": "absent", "python_version": "3.15t"}))
    assert free.release == "2.15" and not free.notes  # 2.15 ships cp315t and compiles on 3.15


def test_pascal_is_told_no_cuda_wheel_of_the_release_supports_it(fake: FakeHost) -> None:
    fake.nvidia("580.95.05", [("Tesla P100-PCIE-16GB", "6.0", "0000:3b:00.0")])
    assert fake.report().notes == (
        "Pascal is not supported by any 2.15 CUDA wheel: GPU 0 (Tesla P100-PCIE-16GB, sm_60); "
        "they start at sm_75 (Turing)",
    )
    assert fake.report(asked="2.14").notes == ()  # 2.14's cu126 still covers sm_60
    fake.nvidia("580.95.05", [("Tesla T4", "7.5", "0000:3b:00.0")])
    assert fake.report().notes == ()
