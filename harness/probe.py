"""The environment probe (suites/_support/probe.py's JSON object), as a type parsed once.

The suites print the probe; the run wing stores it verbatim in the manifest's `environment` (so
keys a later probe adds survive a round trip), and everything that needs a fact of it (the health
gate, the worker count, the column's environment, the rerun command, the release view's device
API coverage) reads it through this type. The probe never raises and may lack any key: so parsing
is lenient (a missing or malformed value is None), and the raw object is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.interpreters import Interpreter, PythonKey
from harness.torch_build import BUILD_KINDS, TorchFacts, build_of


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) and value != "" else None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _errors(value: Any) -> tuple[str, ...]:
    """The probe's errors: a list of strings (one string is one error; anything else, none)."""
    if isinstance(value, str):
        return (value,)
    return tuple(e for e in value if isinstance(e, str)) if isinstance(value, list) else ()


def _section(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True, kw_only=True)
class Device:
    index: int | None = None
    name: str | None = None
    capability: str | None = None  # NVIDIA compute capability, e.g. 9.0
    arch: str | None = None  # ROCm gfx arch, e.g. gfx942
    total_memory: int | None = None

    @classmethod
    def from_json(cls, data: Any) -> Device:
        data = data if isinstance(data, Mapping) else {}
        return cls(
            index=_int(data.get("index")),
            name=_text(data.get("name")),
            capability=_text(data.get("capability")),
            arch=_text(data.get("arch")),
            total_memory=_int(data.get("total_memory")),
        )


@dataclass(frozen=True, kw_only=True)
class Probe:
    """What the suites saw of the torch that ran them (or, for an import, what the user stated)."""

    torch_version: str | None = None  # torch.__version__, e.g. 2.15.0+cu132
    torch_git: str | None = None
    python: str | None = None
    # The interpreter the suites ran on (harness/interpreters.py); None: a probe from before it was
    # recorded ("Python not recorded": the `python` version string alone is never read as one).
    interpreter: Interpreter | None = None
    build: str | None = None  # cpu | cuda | rocm | xpu
    backend: str | None = None  # the backend id the suites applied (COMPAT_BACKEND or derived)
    variant: str | None = None  # the build variant the probe derived (cu132, rocm7.14, ...)
    cuda: str | None = None
    hip: str | None = None
    xpu: str | None = None
    cudnn: str | None = None
    cusparselt: str | None = None
    accelerator_available: bool = False
    accelerator_type: str | None = None
    accelerator_count: int = 0
    devices: tuple[Device, ...] = ()
    driver: str | None = None
    cpu_model: str | None = None
    cpu_cores: int | None = None
    platform: str | None = None
    errors: tuple[str, ...] = ()
    device_api: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # namespace -> public callables
    source: str | None = None  # "imported JUnit" for a cell made by `harness import`
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def has_torch(self) -> bool:
        return bool(self.torch_version)

    @property
    def facts(self) -> TorchFacts:
        """The build's compile-time facts, for harness/torch_build.py's rules: from the fields read once
        (from_json), never from the raw object again."""
        build = self.build if self.build in BUILD_KINDS else build_of(self.cuda, self.hip, self.xpu)
        return TorchFacts(version=self.torch_version or "", build=build, cuda=self.cuda, hip=self.hip, xpu=self.xpu)

    @property
    def python_key(self) -> PythonKey | None:
        """The column's Python (3.15, 3.14t), from the recorded interpreter only."""
        return self.interpreter.key if self.interpreter else None

    @property
    def device(self) -> Device | None:
        return self.devices[0] if self.devices else None

    def import_errors(self) -> list[str]:
        """The probe's own errors about importing torch (why it is not there)."""
        return [e for e in self.errors if e.startswith("import torch")]

    def accelerator_errors(self) -> list[str]:
        return [e for e in self.errors if "accelerator" in e or "devices" in e]

    def to_json(self) -> dict[str, Any]:
        """The object as the probe printed it (written back unchanged)."""
        return dict(self.raw)

    @classmethod
    def from_json(cls, data: Any) -> Probe:
        """Lenient: the probe may lack any key, or carry keys a later version added."""
        if not isinstance(data, Mapping):
            return cls(raw={})
        torch, runtime = _section(data, "torch"), _section(data, "runtime")
        accel, cpu = _section(data, "accelerator"), _section(data, "cpu")
        version = _text(torch.get("version")) or _text(torch.get("base_version"))
        if version and "+" not in version and _text(torch.get("local_tag")):
            version = f"{version}+{torch['local_tag']}"
        devices = data.get("devices")
        api = data.get("device_api")
        return cls(
            torch_version=version,
            torch_git=_text(torch.get("git_version")),
            python=_text(data.get("python")),
            interpreter=Interpreter.from_json(data.get("interpreter")),
            build=_text(data.get("build")),
            backend=_text(data.get("backend")),
            variant=_text(data.get("variant")),
            cuda=_text(runtime.get("cuda")),
            hip=_text(runtime.get("hip")),
            xpu=_text(runtime.get("xpu")),
            cudnn=_text(runtime.get("cudnn")),
            cusparselt=_text(runtime.get("cusparselt")),
            accelerator_available=accel.get("available") is True,
            accelerator_type=_text(accel.get("type")),
            accelerator_count=_int(accel.get("count")) or 0,
            devices=tuple(Device.from_json(d) for d in devices) if isinstance(devices, list) else (),
            driver=_text(data.get("driver")),
            cpu_model=_text(cpu.get("model")),
            cpu_cores=_int(cpu.get("cores")),
            platform=_text(data.get("platform")),
            errors=_errors(data.get("errors")),
            device_api={
                str(ns): tuple(str(n) for n in names if isinstance(n, str))
                for ns, names in (api.items() if isinstance(api, Mapping) else ())
                if isinstance(names, list)
            },
            source=_text(data.get("source")),
            raw=dict(data),
        )
