"""What the suites would do on a device this host does not have: ``--predict=<family>:<model>:<variant>:<release>``.

    python -m pytest suites --collect-only -q --predict=cuda:9.0:cu132:2.15            # an H200 (sm_90)
    python -m pytest suites --collect-only -q --predict=rocm:gfx942:rocm7.14:2.15      # an MI300X
    python -m pytest suites --collect-only -q --predict="xpu:Intel(R) Arc(TM) B580:xpu:2.15"

The session's environment becomes that device's (the probe's answers replaced: device kind, capability or gfx
arch, build variant and its runtime, the torch release), so the claims, the collection-time gates and the known
issues are judged as they would be there, and each test is told as one line: **claimed** (runs; a skip would fail
it: the backstop), **unclaimed** (runs; its refusals are ``[unsupported]`` where the table lists them), **skip**
with the reason of its gate, **known issue** (a strict xfail), **broken**, or **deselected** (another build's API).
A summary per feature follows. What only the run can tell (a refusal inside a test's body) is not predicted: an
unclaimed test may still skip there, a claimed one fails instead.

Two answers come from this host, not the device: whether an API exists is read from the installed torch, and an
API newer than it is taken as present when the predicted release is at least the ``since`` its gate names; an
optional package is as this host has it. Hardware facts a gate reads from torch directly (``torch.cuda.
is_available()``) are taken as met: the predicted machine has its device.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

OPTION = "--predict"
NAMES = {  # (family, model) -> the device's name as torch reports it
    ("cuda", "9.0"): "NVIDIA H200",
    ("cuda", "10.0"): "NVIDIA B200",
    ("cuda", "8.0"): "NVIDIA A100-SXM4-80GB",
    ("cuda", "12.0"): "NVIDIA RTX PRO 6000 Blackwell",
    ("rocm", "gfx942"): "AMD Instinct MI300X",
    ("rocm", "gfx950"): "AMD Instinct MI355X",
}


class PredictError(ValueError):
    """A --predict value that names no device: the message says what a valid one looks like."""


@dataclass(frozen=True)
class Spec:
    family: str  # cuda | rocm | xpu
    model: str  # "9.0" | "gfx942" | an XPU device name
    variant: str  # cu132 | rocm7.14 | xpu
    release: tuple[int, int]

    @property
    def name(self) -> str:
        return NAMES.get(
            (self.family, self.model), self.model if self.family == "xpu" else f"{self.family} {self.model}"
        )


def parse(text: str) -> Spec:
    """``cuda:9.0:cu132:2.15``; the XPU's model is its device name and may hold colons of its own."""
    parts = text.split(":")
    if len(parts) < 4:
        raise PredictError(f"{OPTION}={text!r}: want <family>:<model>:<variant>:<release>, e.g. cuda:9.0:cu132:2.15")
    family, model, variant, release = parts[0], ":".join(parts[1:-2]), parts[-2], parts[-1]
    if family not in ("cuda", "rocm", "xpu"):
        raise PredictError(f"{OPTION}={text!r}: family must be cuda, rocm or xpu")
    if family == "cuda" and not re.fullmatch(r"\d+\.\d+", model):
        raise PredictError(f"{OPTION}={text!r}: a CUDA model is its compute capability, e.g. 9.0")
    if family == "rocm" and not re.fullmatch(r"gfx[0-9a-f]+", model):
        raise PredictError(f"{OPTION}={text!r}: a ROCm model is its gfx arch, e.g. gfx942")
    if not re.fullmatch(r"\d+\.\d+", release):
        raise PredictError(f"{OPTION}={text!r}: the release is major.minor, e.g. 2.15")
    major, minor = (int(p) for p in release.split("."))
    return Spec(family, model, variant, (major, minor))


def _runtime(variant: str, prefix: str) -> tuple[int, ...] | None:
    if prefix == "cu":
        m = re.fullmatch(r"cu(\d+)(\d)", variant)
        return (int(m.group(1)), int(m.group(2))) if m else None
    m = re.fullmatch(r"rocm(\d+)\.(\d+)", variant)
    return (int(m.group(1)), int(m.group(2))) if m else None


def environment(spec: Spec, real: Any) -> Any:
    """The session's Env as the predicted device would probe it (the host's Python kept)."""
    accelerator = "xpu" if spec.family == "xpu" else "cuda"
    device: dict[str, Any] = {"index": 0, "name": spec.name}
    if spec.family == "cuda":
        device["capability"] = spec.model
    if spec.family == "rocm":
        device["arch"] = spec.model
    info = {
        **real.info,
        "build": spec.family,
        "variant": spec.variant,
        "accelerator": {"available": True, "type": accelerator, "count": 1},
        "devices": [device],
        "torch": {**real.info["torch"], "base_version": f"{spec.release[0]}.{spec.release[1]}.0"},
        "predicted": True,
    }
    label = f"{spec.name} ({spec.model})" if spec.family == "rocm" else spec.name
    return dataclasses.replace(
        real,
        info=info,
        backend=spec.variant,
        variant=spec.variant,
        build=spec.family,
        torch_version=(*spec.release, 0),
        torch_base=f"{spec.release[0]}.{spec.release[1]}.0",
        accelerator=accelerator,
        device_type=accelerator,
        device_label=label,
        capability=tuple(int(p) for p in spec.model.split(".")) if spec.family == "cuda" else None,
        arch=spec.model if spec.family == "rocm" else None,
        cuda_runtime=_runtime(spec.variant, "cu") if spec.family == "cuda" else None,
        hip_runtime=_runtime(spec.variant, "rocm") if spec.family == "rocm" else None,
        cusparselt=800 if spec.family in ("cuda", "rocm") else None,
    )


def verdict(item: Any, deselected: bool = False, unclaimed: str = "") -> tuple[str, str]:
    """(kind, why) for one collected test, as the predicted device would run it; ``unclaimed`` is why no claim
    covers it there (``claims.unclaimed_why``), shown on an unclaimed run."""
    if deselected:
        return "deselected", "another build's API (only_builds)"
    claims = list(getattr(item, "_compat_claims", []))
    broken = item.get_closest_marker("compat_broken")
    if broken is not None:
        return "broken", str(broken.args[0])
    for mark in item.iter_markers("skipif"):
        condition = mark.args[0] if mark.args else mark.kwargs.get("condition", True)
        if condition is True:
            reason = str(mark.kwargs.get("reason", ""))
            return ("claimed-skip" if claims else "skip"), reason
    for mark in item.iter_markers("skip"):
        return ("claimed-skip" if claims else "skip"), str(mark.kwargs.get("reason", mark.args[0] if mark.args else ""))
    for mark in item.iter_markers("xfail"):
        return "known-issue", str(mark.kwargs.get("reason", ""))
    if claims:
        return "claimed", "; ".join(c.label for c in claims)
    return "unclaimed", unclaimed


WORDS = {
    "claimed": "RUN claimed",
    "unclaimed": "RUN unclaimed",
    "skip": "SKIP",
    "claimed-skip": "FAIL claimed but skipped",
    "known-issue": "XFAIL known issue",
    "broken": "FAIL broken API",
    "deselected": "DESELECTED",
}


def report(spec_text: str, spec: Spec, rows: list[tuple[str, str, str, str]]) -> str:
    """The text of a prediction: one line per test (feature, node id, kind, why), then a summary per feature."""
    lines = [
        f"# suites --predict={spec_text}: {spec.name}, {spec.variant}, torch {spec.release[0]}.{spec.release[1]}",
        "# RUN claimed: runs, a support claim covers it here (a skip would fail it); RUN unclaimed: runs, refusals",
        "# listed in _support/refusals.py are [unsupported], after it why no claim covers it (features.toml's",
        "# [[features.<id>.unclaimed]]); SKIP: a collection-time gate; XFAIL: a known issue",
        "",
    ]
    for _, node, kind, why in rows:
        lines.append(f"{node}  {WORDS[kind]}" + (f": {why}" if why else ""))
    lines += ["", "# per feature: " + ", ".join(WORDS[k] for k in WORDS)]
    per: dict[str, Counter[str]] = {}
    for feature, _, kind, _ in rows:
        per.setdefault(feature, Counter())[kind] += 1
    for feature, counts in per.items():
        lines.append(f"{feature}: " + ", ".join(f"{counts[k]} {WORDS[k]}" for k in WORDS if counts[k]))
    return "\n".join(lines) + "\n"
