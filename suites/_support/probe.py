"""Backend probe shared by the suites and usable as a standalone script.

``python suites/_support/probe.py`` prints one JSON object describing the torch build,
the runtime libraries and the devices, and always exits 0: every failure is recorded
in ``errors`` instead of raised. Only torch and the standard library are imported, and
nothing is called that raises on a CPU-only build (``torch.cuda.get_device_capability``,
``torch.cuda.is_current_stream_capturing`` ...) unless a device of that kind exists.

conftest.py imports this module and calls :func:`collect` once per session.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import types
import warnings
from typing import Any

BACKEND_ENV = "COMPAT_BACKEND"


def _err(errors: list[str], where: str, exc: BaseException) -> None:
    first = str(exc).splitlines()[0] if str(exc) else ""
    errors.append(f"{where}: {type(exc).__name__}: {first}"[:500])


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    """``"2.13.0+cpu"`` -> ``(2, 13, 0)``; ``"12.4"`` -> ``(12, 4)``; None if unparsable."""
    if not text:
        return None
    m = re.match(r"(\d+(?:\.\d+)*)", str(text))
    if not m:
        return None
    return tuple(int(p) for p in m.group(1).split("."))


def torch_info(torch: Any) -> dict[str, Any]:
    """Version fields of the imported torch module."""
    full = str(getattr(torch, "__version__", ""))
    base, _, local = full.partition("+")
    return {
        "version": full,
        "base_version": base,
        "local_tag": local or None,
        "git_version": getattr(getattr(torch, "version", None), "git_version", None),
    }


def build_kind(torch: Any) -> str:
    """What the torch build targets: ``rocm``, ``cuda``, ``xpu`` or ``cpu``."""
    v = getattr(torch, "version", None)
    if getattr(v, "hip", None):
        return "rocm"
    if getattr(v, "cuda", None):
        return "cuda"
    if getattr(v, "xpu", None):
        return "xpu"
    return "cpu"


# Build variants: cpu, xpu, cu<major><minor> (cu126, cu132), rocm<major>.<minor> (rocm7.2, rocm7.14).
_CUDA_TAG = re.compile(r"cu\d+")
_ROCM_TAG = re.compile(r"rocm(\d+)\.(\d+)(?:\.\d+)*")
LEGACY_BACKENDS = {"rocm": "rocm7.2"}  # COMPAT_BACKEND values from before variants (one ROCm column)


def rocm_version(variant: str | None) -> tuple[int, int] | None:
    """``"rocm7.14"`` -> ``(7, 14)``: ROCm releases compare as numbers (7.14 > 7.2), never as strings."""
    m = _ROCM_TAG.fullmatch((variant or "").lower())
    return (int(m.group(1)), int(m.group(2))) if m else None


def _rocm_variant(version: str | None) -> str | None:
    parts = version_tuple(version)
    return f"rocm{parts[0]}.{parts[1]}" if parts and len(parts) >= 2 else None


def derive_backend(local_tag: str | None, build: str, cuda_version: str | None, hip_version: str | None = None) -> str:
    """The build variant: ``cpu``, ``xpu``, ``cu126`` ... ``cu134``, ``rocm7.2``, ``rocm7.14``, ``rocm10.0``.

    From the wheel's local tag (``+rocm7.14`` -> ``rocm7.14``, ``+rocm7.2.1`` -> ``rocm7.2``), else from
    ``torch.version.cuda`` (13.2 -> ``cu132``) or ``torch.version.hip`` (7.2.53211 -> ``rocm7.2``).
    """
    tag = (local_tag or "").lower()
    if tag in ("cpu", "xpu") or _CUDA_TAG.fullmatch(tag):
        return tag
    rocm = rocm_version(tag)
    if rocm:
        return f"rocm{rocm[0]}.{rocm[1]}"
    if build == "cuda" and cuda_version:
        digits = "".join(str(p) for p in (version_tuple(cuda_version) or ())[:2])
        return f"cu{digits}" if digits else "cuda"
    if build == "rocm":
        return _rocm_variant(hip_version) or "rocm"
    return build


def normalize_backend(value: str) -> str:
    """A ``COMPAT_BACKEND`` value as a variant id: ``rocm`` (the old single ROCm label) is ``rocm7.2``."""
    v = value.strip().lower()
    rocm = rocm_version(v)
    if rocm:
        return f"rocm{rocm[0]}.{rocm[1]}"
    return LEGACY_BACKENDS.get(v, v)


def backend_id(info: dict[str, Any]) -> str:
    """``COMPAT_BACKEND`` if set (the harness sets it), else the derived variant."""
    label = os.environ.get(BACKEND_ENV, "").strip()
    return normalize_backend(label) if label else (info.get("variant") or info.get("backend") or "cpu")


def runtime_info(torch: Any, errors: list[str]) -> dict[str, Any]:
    v = getattr(torch, "version", None)
    out: dict[str, Any] = {
        "cuda": getattr(v, "cuda", None),
        "hip": getattr(v, "hip", None),
        "xpu": getattr(v, "xpu", None),
        "cudnn": None,
        "cusparselt": None,
    }
    try:
        out["cudnn"] = torch.backends.cudnn.version() if out["cuda"] or out["hip"] else None
    except Exception as e:
        _err(errors, "runtime.cudnn", e)
    try:
        cslt = getattr(torch.backends, "cusparselt", None)
        out["cusparselt"] = cslt.version() if cslt is not None and cslt.is_available() else None
    except Exception as e:
        _err(errors, "runtime.cusparselt", e)
    return out


def accelerator_info(torch: Any, errors: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"available": False, "type": None, "count": 0}
    try:
        acc_mod = getattr(torch, "accelerator", None)
        if acc_mod is not None and hasattr(acc_mod, "current_accelerator"):
            acc = acc_mod.current_accelerator()
            if acc is not None:
                out["type"] = acc.type
                out["count"] = int(acc_mod.device_count())
        else:  # torch < 2.6: no torch.accelerator
            if torch.cuda.is_available():
                out["type"], out["count"] = "cuda", torch.cuda.device_count()
            elif hasattr(torch, "xpu") and torch.xpu.is_available():
                out["type"], out["count"] = "xpu", torch.xpu.device_count()
        out["available"] = out["type"] is not None and out["count"] > 0
    except Exception as e:
        _err(errors, "accelerator", e)
    return out


def devices_info(torch: Any, acc_type: str | None, build: str, errors: list[str]) -> list[dict[str, Any]]:
    devices: list[dict[str, Any]] = []
    try:
        if acc_type == "cuda":
            for i in range(torch.cuda.device_count()):
                p = torch.cuda.get_device_properties(i)
                arch = getattr(p, "gcnArchName", None) if build == "rocm" else None
                devices.append(
                    {
                        "index": i,
                        "name": p.name,
                        "capability": None if build == "rocm" else f"{p.major}.{p.minor}",
                        "arch": arch.split(":")[0] if arch else None,
                        "total_memory": int(p.total_memory),
                    }
                )
        elif acc_type == "xpu":
            for i in range(torch.xpu.device_count()):
                p = torch.xpu.get_device_properties(i)
                devices.append(
                    {
                        "index": i,
                        "name": p.name,
                        "capability": None,
                        "arch": None,
                        "total_memory": int(getattr(p, "total_memory", 0)),
                    }
                )
    except Exception as e:
        _err(errors, "devices", e)
    return devices


def driver_version(torch: Any, build: str, acc_type: str | None, errors: list[str]) -> str | None:
    """Best effort, 10 s timeout: nvidia-smi, the amdgpu module, or the XPU driver property."""
    try:
        smi = shutil.which("nvidia-smi")
        if smi and build != "rocm":
            r = subprocess.run(
                [smi, "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
            lines = [ln.strip() for ln in r.stdout.splitlines() if ln.strip()]
            if r.returncode == 0 and lines:
                return lines[0]
        amd = "/sys/module/amdgpu/version"
        if os.path.exists(amd):
            with open(amd, encoding="utf-8") as fh:
                text = fh.read().strip()
            if text:
                return text
        if acc_type == "xpu":
            drv = getattr(torch.xpu.get_device_properties(0), "driver_version", None)
            return str(drv) if drv else None
    except Exception as e:
        _err(errors, "driver", e)
    return None


# Namespaces whose public callables are listed under ``device_api`` (plus every torch.backends.<x>).
DEVICE_API_NAMESPACES = ("torch.accelerator", "torch.cuda", "torch.xpu", "torch.mps")
SYMMETRIC_MEMORY = "torch.distributed._symmetric_memory"


def public_callables(namespace: Any) -> list[str]:
    """Sorted public classes and functions that ``namespace`` defines or re-exports from torch.

    Read with dir()/getattr only, nothing is called. Names imported from elsewhere (``typing.Any``,
    ``functools.lru_cache``, ``ctypes.c_void_p``) are left out: they are not the release's device API.
    """
    names = []
    for name in dir(namespace):
        if name.startswith("_"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated aliases warn on attribute access
                obj = getattr(namespace, name)
        except Exception:
            continue
        if isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        origin = getattr(obj, "__module__", None)
        if isinstance(origin, str) and origin.startswith("torch"):
            names.append(name)
    return sorted(names)


def _import_quietly(name: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(name)


def device_api_info(torch: Any, errors: list[str]) -> dict[str, list[str]]:
    """``{namespace: [public callable names]}`` for the device namespaces of this build.

    Every ``torch.backends.<x>`` submodule that imports is listed; ``torch.distributed._symmetric_memory``
    is imported guardedly (a build without torch.distributed has none). A namespace that fails to import
    is left out and its failure recorded in ``errors``.
    """
    found: list[str] = list(DEVICE_API_NAMESPACES)
    backends = getattr(torch, "backends", None)
    for sub in pkgutil.iter_modules(getattr(backends, "__path__", []) or []):
        if not sub.name.startswith("_"):
            found.append(f"torch.backends.{sub.name}")
    found.append(SYMMETRIC_MEMORY)
    out: dict[str, list[str]] = {}
    for name in found:
        try:
            out[name] = public_callables(_import_quietly(name))
        except Exception as e:
            _err(errors, f"device_api.{name}", e)
    return out


def interpreter_info(torch_imported: bool) -> dict[str, Any]:
    """The interpreter the suites run on: version, implementation, the ABI tag of the wheels it takes
    (``cp315``, ``cp314t``), free-threaded or not, and on a free-threaded build whether the GIL is enabled
    now, after ``import torch`` (an extension that does not declare free-threading turns it back on)."""
    free = sysconfig.get_config_var("Py_GIL_DISABLED") == 1
    is_gil_enabled = getattr(sys, "_is_gil_enabled", None)
    major, minor = sys.version_info[:2]
    return {
        "version": platform.python_version(),
        "implementation": sys.implementation.name,
        "abi": f"cp{major}{minor}{'t' if free else ''}" if sys.implementation.name == "cpython" else "",
        "free_threaded": free,
        "gil_enabled": bool(is_gil_enabled()) if free and torch_imported and is_gil_enabled else None,
        "executable": sys.executable,
    }


def cpu_info() -> dict[str, Any]:
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"model": model or platform.processor() or platform.machine(), "cores": os.cpu_count() or 0}


def collect() -> dict[str, Any]:
    """Probe everything; never raises. Keys are the contract of the suites (README)."""
    errors: list[str] = []
    info: dict[str, Any] = {
        "torch": {"version": None, "base_version": None, "local_tag": None, "git_version": None},
        "python": platform.python_version(),
        "interpreter": interpreter_info(torch_imported=False),
        "build": "cpu",
        "backend": normalize_backend(os.environ.get(BACKEND_ENV) or "") or "cpu",
        "variant": "cpu",
        "runtime": {"cuda": None, "hip": None, "xpu": None, "cudnn": None, "cusparselt": None},
        "accelerator": {"available": False, "type": None, "count": 0},
        "devices": [],
        "driver": None,
        "cpu": {"model": "", "cores": 0},
        "platform": "",
        "device_api": {},
        "errors": errors,
    }
    try:
        info["platform"] = platform.platform()
        info["cpu"] = cpu_info()
    except Exception as e:
        _err(errors, "platform", e)
    try:
        import torch
    except BaseException as e:
        _err(errors, "import torch", e)
        return info
    try:
        info["torch"] = torch_info(torch)
        info["build"] = build_kind(torch)
        info["runtime"] = runtime_info(torch, errors)
        info["variant"] = derive_backend(
            info["torch"]["local_tag"], info["build"], info["runtime"]["cuda"], info["runtime"]["hip"]
        )
        info["backend"] = backend_id(info)
        info["accelerator"] = accelerator_info(torch, errors)
        info["devices"] = devices_info(torch, info["accelerator"]["type"], info["build"], errors)
        info["driver"] = driver_version(torch, info["build"], info["accelerator"]["type"], errors)
    except BaseException as e:
        _err(errors, "probe", e)
    try:
        info["device_api"] = device_api_info(torch, errors)
    except BaseException as e:
        _err(errors, "device_api", e)
    info["interpreter"] = interpreter_info(torch_imported=True)
    return info


def device_label(info: dict[str, Any]) -> str:
    """Human name of the device the suites run on: ``cpu``, ``NVIDIA H200``, ``AMD ... (gfx942)``."""
    devs = info.get("devices") or []
    if not info.get("accelerator", {}).get("available") or not devs:
        return "cpu"
    d = devs[0]
    return f"{d['name']} ({d['arch']})" if d.get("arch") else str(d["name"])


def main() -> int:
    try:
        info = collect()
    except BaseException as e:
        info = {"errors": [f"probe: {type(e).__name__}: {e}"]}
    sys.stdout.write(json.dumps(info, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
