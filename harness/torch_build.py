"""Is this torch the backend's build? The one place that decides it.

Three callers ask: the image verifier (inside an image, on facts read from `torch.version`),
the health gate (on the suites' probe, before any test runs) and the native default run
(which registry backend is the local torch). They all use `mismatches`.

Stdlib only and no harness imports: `harness build` copies this file into every image beside
verify_torch.py, where no harness is installed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

BUILD_KINDS = ("cpu", "cuda", "rocm", "xpu")


@dataclass(frozen=True)
class TorchFacts:
    """What a torch build says about itself (compile-time facts: no device needed)."""

    version: str  # torch.__version__, e.g. 2.13.0+cu130
    build: str  # cpu | cuda | rocm | xpu
    cuda: str | None = None  # torch.version.cuda
    hip: str | None = None  # torch.version.hip
    xpu: str | None = None  # torch.version.xpu

    @property
    def local_tag(self) -> str:
        return self.version.partition("+")[2]

    @property
    def base_version(self) -> str:
        return self.version.partition("+")[0]

    @property
    def runtime(self) -> str | None:
        """The runtime the build targets: CUDA for cuda builds, HIP for ROCm builds."""
        return self.cuda if self.build == "cuda" else self.hip if self.build == "rocm" else None

    @classmethod
    def from_torch(cls, torch: Any) -> TorchFacts:
        version = getattr(torch, "version", None)
        cuda, hip, xpu = (getattr(version, name, None) for name in ("cuda", "hip", "xpu"))
        return cls(version=str(torch.__version__), build=build_of(cuda, hip, xpu), cuda=cuda, hip=hip, xpu=xpu)

    @classmethod
    def from_probe(cls, probe: Mapping[str, Any]) -> TorchFacts:
        """From the JSON object the suites' probe prints (suites/_support/probe.py)."""
        torch = probe.get("torch") or {}
        runtime = probe.get("runtime") or {}
        cuda, hip, xpu = (runtime.get(name) for name in ("cuda", "hip", "xpu"))
        version = str(torch.get("version") or torch.get("base_version") or "")
        if torch.get("local_tag") and "+" not in version:
            version = f"{version}+{torch['local_tag']}"
        build = probe.get("build") if probe.get("build") in BUILD_KINDS else build_of(cuda, hip, xpu)
        return cls(version=version, build=str(build), cuda=cuda, hip=hip, xpu=xpu)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "local_tag": self.local_tag,
            "build": self.build,
            "cuda": self.cuda,
            "hip": self.hip,
            "xpu": self.xpu,
        }


@dataclass(frozen=True)
class Expected:
    """What a backend of the registry expects of its torch."""

    backend: str
    local_tag: str  # "" = any
    build: str
    runtime: str = ""  # version prefix of torch.version.cuda / .hip ("" = any)
    version: str = ""  # exact base version asked for ("" = any)


def build_of(cuda: str | None, hip: str | None, xpu: str | None) -> str:
    # ROCm builds also set torch.version.cuda on some releases: HIP decides first.
    if hip:
        return "rocm"
    if cuda:
        return "cuda"
    if xpu:
        return "xpu"
    return "cpu"


def _version_prefix(have: str, want: str) -> bool:
    """'13.0' is a prefix of '13.0.2' but not of '13.01'; HIP's '7.2.26015' starts with '7.2'."""
    have_parts = re.split(r"[.+-]", have)
    want_parts = want.split(".")
    return have_parts[: len(want_parts)] == want_parts


def mismatches(facts: TorchFacts, expected: Expected) -> list[str]:
    """Every way `facts` differ from what the backend expects (empty: it is the backend's build).

    A torch without a local version tag (a source build, a vendor's wheel) is judged by its
    build kind and runtime alone; one with a tag must carry the backend's."""
    problems: list[str] = []
    have = facts.version or "(unknown version)"
    backend = expected.backend
    if facts.build != expected.build:
        problems.append(f"torch {have} is a {facts.build} build, backend {backend} needs a {expected.build} build")
    if expected.local_tag and facts.local_tag and facts.local_tag != expected.local_tag:
        problems.append(f"torch {have} carries +{facts.local_tag}, backend {backend} needs +{expected.local_tag}")
    if expected.runtime and facts.build == expected.build:
        runtime = facts.runtime
        if not runtime or not _version_prefix(str(runtime), expected.runtime):
            kind = "torch.version.hip" if expected.build == "rocm" else "torch.version.cuda"
            problems.append(f"{kind} is {runtime}, backend {expected.backend} needs {expected.runtime}.x")
    if expected.version and facts.base_version != expected.version:
        problems.append(f"torch {have} installed, {expected.version} was asked for")
    return problems
