"""Which build is this torch, and is it the backend's build? The one place that decides both.

A build is recognised, not looked up in a list: its *variant* (cpu, cu126, cu132, rocm7.14, xpu,
...) comes from the wheel's local version tag, or, without one, from `torch.version.cuda/hip/xpu`
(`variant_of`). Three callers ask whether it is a backend's build: the image verifier (inside an
image, on facts read from `torch.version`), the health gate (on the suites' probe, before any test
runs) and the native run. They all use `mismatches`. Torch version strings are parsed here only
(`parse_version`).

Stdlib only and no harness imports: `harness build` copies this file into every image beside
verify_torch.py, where no harness is installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

BUILD_KINDS = ("cpu", "cuda", "rocm", "xpu")
# A variant token as PyTorch's wheel indexes and local version tags spell it: cpu, xpu, cu126,
# cu132, rocm7.2, rocm7.14, rocm10.0. The CUDA token is the version without its dot (major, then
# one minor digit); ROCm keeps its dots, so it is compared part by part, never as a string
# (pip can order +rocm7.15 above +rocm10.1 as text).
_VARIANT_RE = re.compile(r"^(?:(cpu)|(xpu)|cu(\d{2,3})|rocm(\d+(?:\.\d+){1,2}))$")
_VERSION_RE = re.compile(
    r"^\s*v?(?P<release>\d+(?:\.\d+)*)(?P<pre>(?:a|b|rc)\d+)?(?:\.post(?P<post>\d+))?(?:\.dev(?P<dev>\d+))?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[._-][a-z0-9]+)*))?\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True, order=True)
class TorchVersion:
    """A torch version, parsed once: `2.15.0+cu132`, `2.16.0.dev20261130+cpu`, `2.15.0rc1`."""

    release: tuple[int, ...]
    pre: str = ""  # a1, b2, rc1 ("" for a final release)
    post: int = -1
    dev: int = -1
    local: str = ""

    @property
    def base(self) -> str:
        """The public version without the local tag: 2.15.0, 2.16.0.dev20261130."""
        text = ".".join(map(str, self.release)) + self.pre
        if self.post >= 0:
            text += f".post{self.post}"
        if self.dev >= 0:
            text += f".dev{self.dev}"
        return text

    @property
    def minor(self) -> str:
        """The release series a version belongs to: 2.15 for 2.15.0, 2.15.1 and 2.15.0rc1."""
        return ".".join(map(str, (*self.release, 0)[:2]))

    def __str__(self) -> str:
        return f"{self.base}+{self.local}" if self.local else self.base


def parse_version(text: str | None) -> TorchVersion | None:
    """`2.15.0+cu132` -> TorchVersion((2, 15, 0), local="cu132"); None when it is not a version."""
    match = _VERSION_RE.match(text or "")
    if not match:
        return None
    return TorchVersion(
        release=tuple(int(n) for n in match["release"].split(".")),
        pre=(match["pre"] or "").lower(),
        post=int(match["post"]) if match["post"] else -1,
        dev=int(match["dev"]) if match["dev"] else -1,
        local=(match["local"] or "").lower(),
    )


def version_sort_key(text: str | None) -> tuple:
    """Orders torch versions by release, then pre/dev, then local tag; unparsable ones first."""
    version = parse_version(text)
    if version is None:
        return ((), "", str(text or ""))
    # PEP 440: 2.16.0.dev1 < 2.16.0a1 < 2.16.0rc1 < 2.16.0 < 2.16.0.post1
    if version.pre:
        stage: tuple = (0, version.pre[0], int(re.sub(r"\D", "", version.pre) or 0))
    else:
        stage = (-1,) if version.dev >= 0 and version.post < 0 else (1,)
    dev = (1, 0) if version.dev < 0 else (0, version.dev)
    return (version.release, (stage, version.post, dev), version.local)


@dataclass(frozen=True)
class Variant:
    """A build variant, parsed: family (cpu, cuda, rocm, xpu) and the runtime it targets."""

    id: str  # cu132, rocm7.14, cpu, xpu
    family: str
    runtime: str = ""  # 13.2, 7.14; "" for cpu and xpu


def parse_variant(token: str | None) -> Variant | None:
    """`cu132` -> Variant(cu132, cuda, 13.2); `rocm7.14` -> Variant(rocm7.14, rocm, 7.14); None otherwise."""
    match = _VARIANT_RE.match((token or "").strip().lower())
    if not match:
        return None
    cpu, xpu, cuda, rocm = match.groups()
    if cpu:
        return Variant("cpu", "cpu")
    if xpu:
        return Variant("xpu", "xpu")
    if cuda:
        runtime = f"{int(cuda[:-1])}.{cuda[-1]}"
        return Variant(f"cu{cuda}", "cuda", runtime)
    return Variant(f"rocm{rocm}", "rocm", rocm)


def cuda_variant(runtime: str) -> str | None:
    """torch.version.cuda `13.2` (or 13.2.1) -> cu132."""
    parts = re.findall(r"\d+", runtime or "")
    return f"cu{int(parts[0])}{int(parts[1])}" if len(parts) >= 2 and int(parts[1]) < 10 else None


def rocm_variant(hip: str) -> str | None:
    """torch.version.hip `7.2.26015-...` -> rocm7.2 (a HIP version's first two parts are ROCm's)."""
    parts = re.findall(r"\d+", hip or "")
    return f"rocm{int(parts[0])}.{int(parts[1])}" if len(parts) >= 2 else None


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

    @property
    def variant(self) -> str | None:
        """The build variant (cu132, rocm7.14, cpu, xpu): the local tag when it names one, else
        derived from what torch.version says; None for a torch that says nothing usable."""
        tagged = parse_variant(self.local_tag)
        if tagged is not None and tagged.family == self.build:
            return tagged.id
        if self.build == "cuda":
            return cuda_variant(self.cuda or "")
        if self.build == "rocm":
            return rocm_variant(self.hip or "")
        return self.build if self.build in ("cpu", "xpu") and self.version else None

    @classmethod
    def from_torch(cls, torch: Any) -> TorchFacts:
        version = getattr(torch, "version", None)
        cuda, hip, xpu = (getattr(version, name, None) for name in ("cuda", "hip", "xpu"))
        return cls(version=str(torch.__version__), build=build_of(cuda, hip, xpu), cuda=cuda, hip=hip, xpu=xpu)

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
