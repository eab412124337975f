"""What this host has: its GPUs (driver, architecture), and the torch an interpreter has installed.

Detection only: nothing here knows releases or variants (harness/host/doctor.py judges). Files are read
under an injectable `root` (a fake sysfs/procfs in tests), tools run through an injectable `run`
(found on `env`'s PATH), and the environment is passed in: no global state. A missing file or tool is
an answer ("not found"), never an exception. torch is read in a child process, never imported here.

Sources, in the order they are asked:
- NVIDIA: driver from /sys/module/nvidia/version, else /proc/driver/nvidia/version, else nvidia-smi;
  GPUs from nvidia-smi (name, compute capability, bus, uuid) and /proc/driver/nvidia/gpus/*/information
  (name, bus, uuid; no capability: then the name table of harness/host/gpu_ids.py, marked as a fallback).
- AMD: the KFD topology (/sys/class/kfd/kfd/topology/nodes/*/properties, gfx_target_version), else
  rocm_agent_enumerator; the amdgpu version from /sys/module/amdgpu/version (DKMS builds only).
- Intel, and any GPU no driver claimed: the PCI bus (/sys/bus/pci/devices/*: vendor, device, class and
  the bound `driver`).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, Literal

from harness.host.gpu_ids import intel_family, nvidia_capability_from_name
from harness.torch_build import TorchFacts, build_of

Vendor = Literal["nvidia", "amd", "intel"]
VENDORS: Final[tuple[Vendor, ...]] = ("nvidia", "amd", "intel")
ROOT_ENV: Final = "HARNESS_DOCTOR_ROOT"  # testing hook: read sysfs/procfs under this folder instead of /
CHILD_MARK: Final = "HARNESS-DOCTOR-TORCH "
_PCI_VENDORS: Final[Mapping[int, Vendor]] = {0x10DE: "nvidia", 0x1002: "amd", 0x8086: "intel"}
_NVIDIA_SMI_QUERY: Final = (
    "nvidia-smi",
    "--query-gpu=name,compute_cap,driver_version,pci.bus_id,uuid",
    "--format=csv,noheader",
)


# -- results -------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class ToolRun:
    """One run of a tool: found on PATH or not, and its output or why it failed (one line)."""

    found: bool
    ok: bool = False
    stdout: str = ""
    error: str = ""


Runner = Callable[[Sequence[str], Mapping[str, str]], ToolRun]


@dataclass(frozen=True, kw_only=True)
class Gpu:
    vendor: Vendor
    index: int  # position among this vendor's GPUs: what CUDA/HIP_VISIBLE_DEVICES count (PCI order assumed)
    name: str
    bus_id: str = ""  # 0000:3b:00.0
    arch: str = ""  # sm_60, gfx942, or the Intel family key (dg2, bmg, ...); "" when unknown
    arch_source: str = ""  # where arch comes from: nvidia-smi, name table (fallback), KFD topology, ...
    driver: str = ""  # the kernel driver bound: nvidia, amdgpu, i915, xe; "" when none
    uuid: str = ""
    device_id: int = 0  # PCI device id, where the PCI bus was read
    visible: bool = True
    hidden_by: str = ""  # the variable that hides it: CUDA_VISIBLE_DEVICES=1

    @property
    def label(self) -> str:
        """GPU 0 (Tesla P100-PCIE-16GB, sm_60): how messages name it."""
        return f"GPU {self.index} ({self.name}{', ' + self.arch if self.arch else ''})"

    def to_dict(self) -> dict[str, object]:
        return {
            "vendor": self.vendor,
            "index": self.index,
            "name": self.name,
            "bus_id": self.bus_id,
            "arch": self.arch,
            "arch_source": self.arch_source,
            "driver": self.driver,
            "uuid": self.uuid,
            "device_id": f"0x{self.device_id:04x}" if self.device_id else "",
            "visible": self.visible,
            "hidden_by": self.hidden_by,
        }


@dataclass(frozen=True, kw_only=True)
class Host:
    gpus: tuple[Gpu, ...] = ()
    nvidia_driver: str = ""  # 580.95.05
    nvidia_driver_source: str = ""
    amdgpu_driver: str = ""  # the DKMS module's version; "in-kernel" when the module has none
    tools: tuple[tuple[str, str], ...] = ()  # (tool, what came of it): ("nvidia-smi", "not found")
    notes: tuple[str, ...] = ()  # one line each: unreadable files, visibility caveats

    def visible(self, vendor: Vendor) -> tuple[Gpu, ...]:
        return tuple(g for g in self.gpus if g.vendor == vendor and g.visible)

    def of(self, vendor: Vendor) -> tuple[Gpu, ...]:
        return tuple(g for g in self.gpus if g.vendor == vendor)

    def to_dict(self) -> dict[str, object]:
        return {
            "gpus": [g.to_dict() for g in self.gpus],
            "nvidia_driver": self.nvidia_driver,
            "nvidia_driver_source": self.nvidia_driver_source,
            "amdgpu_driver": self.amdgpu_driver,
            "tools": dict(self.tools),
            "notes": list(self.notes),
        }


TorchState = Literal["installed", "absent", "broken", "unknown"]


@dataclass(frozen=True, kw_only=True)
class InstalledTorch:
    """The torch of one interpreter, as a child process read it."""

    python: str
    state: TorchState  # absent: no torch; broken: torch does not import; unknown: the interpreter did not answer
    version: str = ""
    cuda: str | None = None
    hip: str | None = None
    xpu: str | None = None
    arch_list: tuple[str, ...] = ()  # what the wheel was compiled for: sm_75 ... / gfx942 ... / pvc ...
    devices: int | None = None  # the GPUs torch itself counts (None: not asked, or a CPU build)
    error: str = ""  # one line
    python_version: str = ""  # the interpreter's CPython: 3.11, or 3.14t for a free-threaded build

    @property
    def facts(self) -> TorchFacts | None:
        if self.state != "installed":
            return None
        return TorchFacts(
            version=self.version,
            build=build_of(self.cuda, self.hip, self.xpu),
            cuda=self.cuda,
            hip=self.hip,
            xpu=self.xpu,
        )

    def to_dict(self) -> dict[str, object]:
        facts = self.facts
        return {
            "python": self.python,
            "state": self.state,
            "version": self.version,
            "variant": facts.variant if facts else None,
            "cuda": self.cuda,
            "hip": self.hip,
            "xpu": self.xpu,
            "arch_list": list(self.arch_list),
            "devices": self.devices,
            "error": self.error,
            "python_version": self.python_version,
        }


# -- small readers ---------------------------------------------------------------------------------
def root_from_env(env: Mapping[str, str]) -> Path:
    """The filesystem root to read: / unless the testing hook HARNESS_DOCTOR_ROOT names a fake tree."""
    return Path(env.get(ROOT_ENV) or "/")


def _one_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def run_tool(argv: Sequence[str], env: Mapping[str, str], timeout: float = 120) -> ToolRun:
    """Run a tool found on env's PATH; not found, a failure or a timeout is an answer, never an exception."""
    exe = shutil.which(argv[0], path=env.get("PATH", os.defpath))
    if exe is None:
        return ToolRun(found=False, error="not found")
    try:
        done = subprocess.run(
            [exe, *argv[1:]], env=dict(env), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return ToolRun(found=True, error=f"timed out after {timeout:.0f} s")
    except OSError as err:
        return ToolRun(found=True, error=err.strerror or str(err))
    if done.returncode != 0:
        why = _one_line(done.stderr) or _one_line(done.stdout)
        return ToolRun(found=True, stdout=done.stdout, error=f"exit {done.returncode}" + (f": {why}" if why else ""))
    return ToolRun(found=True, ok=True, stdout=done.stdout)


def _tool_status(run: ToolRun, used: str = "used") -> str:
    if not run.found:
        return "not found"
    return used if run.ok else f"failed ({run.error})"


class _Reader:
    """Reads files under a root; collects one note per file that exists but cannot be read."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.notes: list[str] = []

    def path(self, absolute: str) -> Path:
        return self.root / absolute.lstrip("/")

    def text(self, absolute: str | Path) -> str | None:
        path = absolute if isinstance(absolute, Path) else self.path(absolute)
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return None
        except OSError as err:
            self.notes.append(f"cannot read {self._shown(path)}: {err.strerror or err}")
            return None

    def children(self, absolute: str) -> list[Path]:
        try:
            return sorted(self.path(absolute).iterdir())
        except FileNotFoundError:
            return []
        except OSError as err:
            self.notes.append(f"cannot list {absolute}: {err.strerror or err}")
            return []

    def _shown(self, path: Path) -> str:
        """The path as the host names it (/sys/..., not the fake root's)."""
        try:
            return "/" + str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def normalize_bus_id(text: str) -> str:
    """`00000000:3B:00.0` (nvidia-smi) and `0000:3b:00.0` (sysfs) -> `0000:3b:00.0`."""
    parts = text.strip().lower().split(":")
    if len(parts) != 3:
        return text.strip().lower()
    try:
        return f"{int(parts[0], 16):04x}:{parts[1]}:{parts[2]}"
    except ValueError:
        return text.strip().lower()


def _hex(text: str | None) -> int | None:
    try:
        return int((text or "").strip(), 16)
    except ValueError:
        return None


# -- PCI -------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class PciDisplay:
    bus_id: str
    vendor: Vendor
    device: int
    pci_class: int
    driver: str


def scan_pci(reader: _Reader) -> list[PciDisplay]:
    """GPU-like PCI functions of the three vendors: display class 0x03xxxx, and AMD's 0x12xxxx
    (processing accelerators, as some Instinct boards report themselves)."""
    found: list[PciDisplay] = []
    for device in reader.children("/sys/bus/pci/devices"):
        vendor_id, pci_class = _hex(reader.text(device / "vendor")), _hex(reader.text(device / "class"))
        vendor = _PCI_VENDORS.get(vendor_id or 0)
        if vendor is None or pci_class is None:
            continue
        base = pci_class >> 16
        if base != 0x03 and not (vendor == "amd" and base == 0x12):
            continue
        try:
            driver = os.path.basename(os.readlink(device / "driver"))
        except OSError:
            driver = ""  # no driver bound: the GPU is there but nothing can use it
        found.append(
            PciDisplay(
                bus_id=normalize_bus_id(device.name),
                vendor=vendor,
                device=_hex(reader.text(device / "device")) or 0,
                pci_class=pci_class,
                driver=driver,
            )
        )
    return found


def _unclaimed(pci: Iterable[PciDisplay], vendor: Vendor, known: set[str], start: int) -> list[Gpu]:
    """PCI GPUs of a vendor that its driver's own files did not list: present, but not usable as they are."""
    gpus: list[Gpu] = []
    for dev in pci:
        if dev.vendor == vendor and dev.bus_id not in known:
            name = f"{'NVIDIA' if vendor == 'nvidia' else 'AMD'} GPU (PCI device 0x{dev.device:04x})"
            gpus.append(
                Gpu(
                    vendor=vendor,
                    index=start + len(gpus),
                    name=name,
                    bus_id=dev.bus_id,
                    driver=dev.driver,
                    device_id=dev.device,
                )
            )
    return gpus


# -- NVIDIA ----------------------------------------------------------------------------------------
_PROC_VERSION_RE = re.compile(r"NVRM version:.*?Module\b.*?\s(\d+\.\d+(?:\.\d+)*)\s")


def parse_proc_nvidia_version(text: str) -> str:
    """The driver version in /proc/driver/nvidia/version's NVRM line; "" when there is none."""
    match = _PROC_VERSION_RE.search(text + " ")
    return match.group(1) if match else ""


def _parse_information(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


def _capability(text: str) -> str:
    """nvidia-smi's `6.1` -> `6.1`; `[N/A]` and friends -> ""."""
    return text.strip() if re.fullmatch(r"\d+\.\d+", text.strip()) else ""


def sm_of(capability: str) -> str:
    """Compute capability 6.1 -> sm_61, 10.0 -> sm_100."""
    major, _, minor = capability.partition(".")
    return f"sm_{major}{minor}" if major.isdigit() and minor.isdigit() else ""


def detect_nvidia(
    reader: _Reader, env: Mapping[str, str], run: Runner, pci: Sequence[PciDisplay]
) -> tuple[str, str, list[Gpu], tuple[str, str]]:
    """(driver version, where it came from, GPUs, nvidia-smi's status)."""
    driver, source = "", ""
    text = reader.text("/sys/module/nvidia/version")
    if text and text.strip():
        driver, source = text.strip(), "/sys/module/nvidia/version"
    else:
        proc = parse_proc_nvidia_version(reader.text("/proc/driver/nvidia/version") or "")
        if proc:
            driver, source = proc, "/proc/driver/nvidia/version"

    # bus id -> fields; nvidia-smi first (it knows the capability), the kernel module's files fill in
    rows: dict[str, dict[str, str]] = {}
    smi = run(_NVIDIA_SMI_QUERY, env)
    if smi.ok:
        for record in csv.reader(smi.stdout.splitlines(), skipinitialspace=True):
            if len(record) < 4:
                continue
            name, capability, version, bus = (field.strip() for field in record[:4])
            rows[normalize_bus_id(bus)] = {
                "name": name,
                "capability": _capability(capability),
                "uuid": record[4].strip() if len(record) > 4 else "",
            }
            if not driver and re.fullmatch(r"\d+(?:\.\d+)+", version):
                driver, source = version, "nvidia-smi"
    for info in reader.children("/proc/driver/nvidia/gpus"):
        fields = _parse_information(reader.text(info / "information") or "")
        bus = normalize_bus_id(fields.get("Bus Location") or info.name)
        row = rows.setdefault(bus, {"name": fields.get("Model", "NVIDIA GPU"), "capability": "", "uuid": ""})
        row["uuid"] = row["uuid"] or fields.get("GPU UUID", "")

    drivers = {dev.bus_id: dev.driver for dev in pci}
    gpus: list[Gpu] = []
    for index, bus in enumerate(sorted(rows)):
        row = rows[bus]
        capability, arch_source = row["capability"], "nvidia-smi"
        if not capability:
            capability, arch_source = nvidia_capability_from_name(row["name"]), "name table (fallback)"
        gpus.append(
            Gpu(
                vendor="nvidia",
                index=index,
                name=row["name"],
                bus_id=bus,
                arch=sm_of(capability),
                arch_source=arch_source if capability else "",
                driver=drivers.get(bus, "nvidia"),
                uuid=row["uuid"],
            )
        )
    gpus += _unclaimed(pci, "nvidia", set(rows), len(gpus))
    return driver, source, gpus, ("nvidia-smi", _tool_status(smi))


# -- AMD -------------------------------------------------------------------------------------------
def gfx_of(target_version: int) -> str:
    """KFD's gfx_target_version -> gfx name: 90402 -> gfx942, 90010 -> gfx90a, 110001 -> gfx1101."""
    major, minor, stepping = target_version // 10000, (target_version // 100) % 100, target_version % 100
    return f"gfx{major}{minor:x}{stepping:x}"


def _properties(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.strip().partition(" ")
        if key:
            fields[key] = value.strip()
    return fields


def _node_order(path: Path) -> tuple[int, str]:
    return (int(path.name), "") if path.name.isdigit() else (1 << 30, path.name)


def detect_amd(
    reader: _Reader, env: Mapping[str, str], run: Runner, pci: Sequence[PciDisplay]
) -> tuple[str, list[Gpu], tuple[str, str]]:
    """(amdgpu version, GPUs, rocm_agent_enumerator's status). The KFD topology is read first: it is
    what ROCm itself enumerates, with a bus address per GPU; the tool only when it is absent."""
    version = (reader.text("/sys/module/amdgpu/version") or "").strip()
    if not version and reader.path("/sys/module/amdgpu").is_dir():
        version = "in-kernel"
    drivers = {dev.bus_id: dev.driver for dev in pci}
    gpus: list[Gpu] = []
    nodes = sorted(reader.children("/sys/class/kfd/kfd/topology/nodes"), key=_node_order)
    for node in nodes:
        props = _properties(reader.text(node / "properties") or "")
        target = int(props.get("gfx_target_version", "0") or 0)
        if not target:
            continue  # a CPU node
        bus = ""
        if props.get("location_id", "").isdigit():
            location, domain = int(props["location_id"]), int(props.get("domain", "0") or 0)
            bus = f"{domain:04x}:{location >> 8:02x}:{(location >> 3) & 0x1F:02x}.{location & 0x7}"
        product = (reader.text(f"/sys/bus/pci/devices/{bus}/product_name") or "").strip() if bus else ""
        gpus.append(
            Gpu(
                vendor="amd",
                index=len(gpus),
                name=product or "AMD GPU",
                bus_id=bus,
                arch=gfx_of(target),
                arch_source="KFD topology",
                driver=drivers.get(bus, "amdgpu"),
            )
        )
    if gpus:
        status = ("rocm_agent_enumerator", "not run (the KFD topology answered)")
    else:
        enumerator = run(("rocm_agent_enumerator",), env)
        status = ("rocm_agent_enumerator", _tool_status(enumerator))
        for line in enumerator.stdout.splitlines() if enumerator.ok else ():
            gfx = line.strip().split(":")[0]  # gfx90a:sramecc+:xnack- -> gfx90a
            if re.fullmatch(r"gfx[0-9a-f]+", gfx) and gfx != "gfx000":  # gfx000 is the CPU agent
                gpus.append(
                    Gpu(vendor="amd", index=len(gpus), name="AMD GPU", arch=gfx, arch_source="rocm_agent_enumerator")
                )
    if not gpus:
        gpus = _unclaimed(pci, "amd", set(), 0)
    return version, gpus, status


# -- Intel -----------------------------------------------------------------------------------------
def detect_intel(pci: Sequence[PciDisplay]) -> list[Gpu]:
    """Intel display devices, named from their PCI device id (harness/host/gpu_ids.py)."""
    gpus: list[Gpu] = []
    for dev in pci:
        if dev.vendor != "intel":
            continue
        family = intel_family(dev.device)
        gpus.append(
            Gpu(
                vendor="intel",
                index=len(gpus),
                name=family.name if family else f"Intel graphics (PCI device 0x{dev.device:04x})",
                bus_id=dev.bus_id,
                arch=family.key if family else "",
                arch_source="PCI device id" if family else "",
                driver=dev.driver,
                device_id=dev.device,
            )
        )
    return gpus


# -- visibility ------------------------------------------------------------------------------------
def _select(value: str, gpus: Sequence[Gpu]) -> list[Gpu] | None:
    """The GPUs a CUDA/HIP/ROCR_VISIBLE_DEVICES value keeps, in its order, as CUDA reads it: indices or
    GPU-<uuid> prefixes, and the list ends at the first entry that names no GPU. None: cannot tell (MIG
    instances, or UUIDs where doctor read none)."""
    chosen: list[Gpu] = []
    for entry in (e.strip() for e in value.split(",")):
        if entry.isdigit() and int(entry) < len(gpus):
            match = [gpus[int(entry)]]
        elif entry.upper().startswith("MIG-"):
            return None
        elif entry.upper().startswith("GPU-"):
            if not any(g.uuid for g in gpus):
                return None
            match = [g for g in gpus if g.uuid and g.uuid.lower().startswith(entry.lower())]
        else:
            match = []
        if len(match) != 1 or match[0] in chosen:
            break
        chosen.append(match[0])
    return chosen


def _apply_visibility(gpus: list[Gpu], names: Sequence[str], env: Mapping[str, str], notes: list[str]) -> list[Gpu]:
    """Mark the GPUs the first set variable of `names` hides (each group of names applies in turn)."""
    variable = next((n for n in names if n in env), None)
    if variable is None or not gpus:
        return gpus
    shown = [g for g in gpus if g.visible]
    value = env[variable]
    kept = _select(value, shown)
    if kept is None:
        notes.append(f"{variable}={value} cannot be matched to GPUs here: every GPU is judged as if visible")
        return gpus
    hidden = f"{variable}={value}"
    return [g if (not g.visible or g in kept) else replace(g, visible=False, hidden_by=hidden) for g in gpus]


def apply_visibility(gpus: list[Gpu], env: Mapping[str, str], notes: list[str]) -> list[Gpu]:
    nvidia = [g for g in gpus if g.vendor == "nvidia"]
    amd = [g for g in gpus if g.vendor == "amd"]
    others = [g for g in gpus if g.vendor == "intel"]
    mixed = len({g.name for g in nvidia}) > 1
    if "CUDA_VISIBLE_DEVICES" in env and mixed and env.get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID":
        notes.append(
            "CUDA_VISIBLE_DEVICES counts GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; "
            "doctor assumes PCI order"
        )
    nvidia = _apply_visibility(nvidia, ("CUDA_VISIBLE_DEVICES",), env, notes)
    # ROCr filters first, then HIP (which takes CUDA_VISIBLE_DEVICES when HIP_VISIBLE_DEVICES is unset)
    amd = _apply_visibility(amd, ("ROCR_VISIBLE_DEVICES",), env, notes)
    amd = _apply_visibility(amd, ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"), env, notes)
    if "ZE_AFFINITY_MASK" in env and others:
        notes.append(f"ZE_AFFINITY_MASK={env['ZE_AFFINITY_MASK']} is not applied: every Intel GPU is listed")
    return nvidia + amd + others


# -- the host --------------------------------------------------------------------------------------
def detect_host(root: Path = Path("/"), env: Mapping[str, str] | None = None, run: Runner = run_tool) -> Host:
    """Everything this host shows about its GPUs."""
    env = dict(os.environ if env is None else env)
    reader = _Reader(root)
    pci = scan_pci(reader)
    driver, source, nvidia, smi = detect_nvidia(reader, env, run, pci)
    amdgpu, amd, enumerator = detect_amd(reader, env, run, pci)
    notes = list(reader.notes)
    gpus = apply_visibility([*nvidia, *amd, *detect_intel(pci)], env, notes)
    return Host(
        gpus=tuple(gpus),
        nvidia_driver=driver,
        nvidia_driver_source=source,
        amdgpu_driver=amdgpu,
        tools=(smi, enumerator),
        notes=tuple(notes),
    )


# -- the installed torch ---------------------------------------------------------------------------
# Runs in the interpreter asked about. Only calls that cannot raise on a CPU-only build, each guarded:
# get_arch_list() is empty when no device is usable, so the compiled flags are read directly too.
CHILD_CODE: Final = f"""
import json, sys, sysconfig
out = {{}}
python_version = "%d.%d%s" % (sys.version_info[0], sys.version_info[1],
                              "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else "")
try:
    import torch
except ModuleNotFoundError as err:
    out = {{"state": "absent"}} if err.name == "torch" else {{"state": "broken", "error": repr(err)}}
except Exception as err:
    out = {{"state": "broken", "error": type(err).__name__ + ": " + str(err)}}
else:
    v = getattr(torch, "version", None)
    out = {{"state": "installed", "version": str(getattr(torch, "__version__", "")),
           "cuda": getattr(v, "cuda", None), "hip": getattr(v, "hip", None), "xpu": getattr(v, "xpu", None)}}
    archs = []
    try:
        archs = list(torch.cuda.get_arch_list())
    except Exception:
        pass
    if not archs:
        try:
            archs = (getattr(torch._C, "_cuda_getArchFlags", lambda: None)() or "").split()
        except Exception:
            pass
    if not archs and out["xpu"]:
        try:
            archs = list(torch.xpu.get_arch_list())
        except Exception:
            pass
    out["arch_list"] = [str(a) for a in archs]
    try:
        if out["cuda"] or out["hip"]:
            out["devices"] = torch.cuda.device_count() if torch.cuda.is_available() else 0
        elif out["xpu"]:
            out["devices"] = torch.xpu.device_count() if torch.xpu.is_available() else 0
    except Exception:
        pass
out["python_version"] = python_version
print({CHILD_MARK!r} + json.dumps(out))
"""


def _optional_str(value: object) -> str | None:
    return str(value) if value not in (None, "") else None


def inspect_torch(python: str, env: Mapping[str, str] | None = None, run: Runner = run_tool) -> InstalledTorch:
    """What torch `python` has, read in a child process (never imported here)."""
    env = dict(os.environ if env is None else env)
    done = run((python, "-c", CHILD_CODE), env)
    if not done.found:
        return InstalledTorch(python=python, state="unknown", error=f"{python}: not found")
    line = next((ln for ln in reversed(done.stdout.splitlines()) if ln.startswith(CHILD_MARK)), None)
    if line is None:
        why = done.error or "printed no answer"
        return InstalledTorch(python=python, state="unknown", error=f"{python} could not be asked ({why})")
    try:
        data = json.loads(line[len(CHILD_MARK) :])
    except json.JSONDecodeError:
        return InstalledTorch(python=python, state="unknown", error=f"{python} printed an unreadable answer")
    state = data.get("state")
    if state not in ("installed", "absent", "broken"):
        return InstalledTorch(python=python, state="unknown", error=f"{python} printed an unreadable answer")
    devices = data.get("devices")
    return InstalledTorch(
        python=python,
        state=state,
        version=str(data.get("version") or ""),
        cuda=_optional_str(data.get("cuda")),
        hip=_optional_str(data.get("hip")),
        xpu=_optional_str(data.get("xpu")),
        arch_list=tuple(str(a) for a in data.get("arch_list") or ()),
        devices=devices if isinstance(devices, int) else None,
        error=_one_line(str(data.get("error") or "")),
        python_version=str(data.get("python_version") or ""),
    )
