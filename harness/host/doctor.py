"""What this host can run: each build variant judged against its GPUs, the installed torch, and the install line.

harness/host/facts.py detects (GPUs, driver, the interpreter's torch); this module judges against the
registry (harness/backends.toml): per variant, whether it runs here and why (driver >= the variant's
min_driver, the GPU's compute capability or gfx target in the variant's compiled list, an Intel GPU
on PyTorch's XPU list), for the asked release and every listed one; then one recommendation with its
exact pip line. `harness doctor` prints the report; `install_advice` is the line harness run gives
when torch is missing.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from harness.errors import UsageError
from harness.host.facts import Gpu, Host, InstalledTorch, Vendor, detect_host, root_from_env
from harness.registry import Backend, Registry, Release, load_registry
from harness.torch_build import parse_version

# PyTorch's validated Intel GPUs (docs.pytorch.org/docs/2.15/notes/get_start_xpu.html): Data Center GPU
# Max, Arc A- and B-series, Core Ultra Meteor Lake-H, Arrow Lake-H, Lunar Lake, Panther Lake. The kernel
# groups Meteor Lake ids as -U and the rest; the rest are taken as PyTorch's Meteor Lake-H. The xpu
# wheel's AOT targets (intel/torch-xpu-ops cmake/BuildFlags.cmake) are the same list: pvc, bmg, dg2,
# arl-h, mtl-h, lnl-m, ptl-h, ptl-u; any other Intel GPU would depend on JIT and is untested upstream.
XPU_VALIDATED: Final = frozenset({"pvc", "dg2", "bmg", "mtl", "arl-h", "lnl", "ptl"})
XPU_DRIVERS: Final = frozenset({"i915", "xe"})
_FAMILY_VENDOR: Final[Mapping[str, Vendor]] = {"cuda": "nvidia", "rocm": "amd", "xpu": "intel"}
_VENDOR_NAME: Final[Mapping[Vendor, str]] = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel"}
_STATUS_RANK: Final[Mapping[str, int]] = {"stable": 0, "experimental": 1, "legacy": 2}


class Fit(StrEnum):
    YES = "runs"
    NO = "no"
    UNKNOWN = "unknown"


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """Whether one variant runs on this host's GPUs (cpu: on its CPU), why in one line, and the details."""

    variant: str
    fit: Fit
    headline: str  # the deciding reason, one line
    reasons: tuple[str, ...] = ()
    covers: int = 0  # the visible GPUs of its vendor it runs on
    of: int = 0  # the visible GPUs of its vendor
    driver_only: bool = False  # NO only because of the driver: upgrading it is the fix

    def to_dict(self) -> dict[str, object]:
        return {
            "fit": self.fit.value,
            "headline": self.headline,
            "reasons": list(self.reasons or (self.headline,)),
            "covers": self.covers,
            "of": self.of,
        }


@dataclass(frozen=True, kw_only=True)
class Recommendation:
    variant: str
    version: str  # the torch version to install: 2.15.0
    command: str  # the exact pip line
    summary: str  # why, in one line
    reasons: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()  # one line each, with its own command

    def to_dict(self) -> dict[str, object]:
        return {
            "variant": self.variant,
            "version": self.version,
            "command": self.command,
            "summary": self.summary,
            "reasons": list(self.reasons),
            "alternatives": list(self.alternatives),
        }


@dataclass(frozen=True, kw_only=True)
class TorchVerdict:
    """Can the installed torch use this host's GPU? `fit` None when there is no torch to judge."""

    summary: str
    fit: Fit | None
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"summary": self.summary, "fit": self.fit.value if self.fit else None, "reasons": list(self.reasons)}


@dataclass(frozen=True, kw_only=True)
class Report:
    host: Host
    torch: InstalledTorch | None
    torch_verdict: TorchVerdict | None
    release: str  # the release asked about: 2.15
    current: bool  # whether it is the registry's current release
    verdicts: Mapping[str, Mapping[str, Verdict]]  # release -> variant -> verdict (every listed release)
    statuses: Mapping[str, Mapping[str, str]]  # release -> variant -> stable | experimental | legacy
    recommendation: Recommendation
    notes: tuple[str, ...] = ()  # what the asked release cannot do here: this Python, this GPU generation
    pythons: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)  # release -> CPythons shipped
    python_version: str = ""  # the running interpreter's key (3.11, 3.14t); "" when unknown

    def python_verdicts(self) -> dict[str, bool | None]:
        """release -> whether it ships the running interpreter (None: the registry does not say)."""
        return {
            rid: (self.python_version in shipped if shipped else None) if self.python_version else None
            for rid, shipped in self.pythons.items()
        }

    def to_dict(self) -> dict[str, object]:
        return {
            "python_version": self.python_version,
            "pythons": {rid: list(shipped) for rid, shipped in self.pythons.items()},
            "host": self.host.to_dict(),
            "torch": self.torch.to_dict() if self.torch else None,
            "torch_verdict": self.torch_verdict.to_dict() if self.torch_verdict else None,
            "release": self.release,
            "releases": {
                rid: {v: {"status": self.statuses[rid][v], **verdict.to_dict()} for v, verdict in variants.items()}
                for rid, variants in self.verdicts.items()
            },
            "recommendation": self.recommendation.to_dict(),
            "notes": list(self.notes),
        }


# -- comparisons -------------------------------------------------------------------------------------
def version_key(text: str) -> tuple[int, ...]:
    """Driver versions compare numerically part by part: 580.65.06 -> (580, 65, 6) > (575, 57, 8)."""
    return tuple(int(n) for n in re.findall(r"\d+", text))


def _sm(arch: str) -> tuple[int, int] | None:
    """sm_61 -> (6, 1), sm_100 -> (10, 0), sm_90a -> (9, 0)."""
    match = re.fullmatch(r"sm_(\d+)(\d)[a-z]?", arch)
    return (int(match.group(1)), int(match.group(2))) if match else None


# NVIDIA's GPU generations by their first compute capability (for the line a person reads).
_GENERATIONS: Final = (
    ((5, 0), "Maxwell"), ((6, 0), "Pascal"), ((7, 0), "Volta"), ((7, 5), "Turing"), ((8, 0), "Ampere"),
    ((8, 9), "Ada"), ((9, 0), "Hopper"), ((10, 0), "Blackwell"),
)  # fmt: skip


def generation(arch: str) -> str:
    """sm_60 -> Pascal, sm_75 -> Turing; "" for what is not an sm_XY or older than Maxwell."""
    sm = _sm(arch)
    names = [name for first, name in _GENERATIONS if sm is not None and sm >= first]
    return names[-1] if names else ""


def cuda_arch_fit(gpu_arch: str, archs: Sequence[str]) -> Fit:
    """A cubin built for X.y runs on X.z with z >= y, never across majors (CUDA C++ Programming Guide,
    'Binary Compatibility'). A GPU newer than every listed arch may still run through PTX the wheel
    embeds (cu13x: PTX for 12.0): unknown, not no."""
    gpu = _sm(gpu_arch)
    built = [sm for sm in (_sm(a) for a in archs) if sm]
    if gpu is None or not built:
        return Fit.UNKNOWN
    if any(major == gpu[0] and minor <= gpu[1] for major, minor in built):
        return Fit.YES
    return Fit.UNKNOWN if gpu > max(built) else Fit.NO


def _span(archs: Sequence[str]) -> str:
    return f"{archs[0]}..{archs[-1]}" if len(archs) > 2 else ", ".join(archs)


def _gpus_label(gpus: Sequence[Gpu]) -> str:
    """GPU 0 (Tesla P100-PCIE-16GB, sm_60); GPUs 0-7 (NVIDIA H100 80GB HBM3, sm_90) when alike."""
    first = gpus[0]
    if len(gpus) == 1:
        return first.label
    indices = [g.index for g in gpus]
    run = indices == list(range(indices[0], indices[0] + len(indices)))
    numbers = f"{indices[0]}-{indices[-1]}" if run else ", ".join(map(str, indices))
    return f"GPUs {numbers} ({first.name}{', ' + first.arch if first.arch else ''})"


# -- one variant on this host ------------------------------------------------------------------------
def _hidden_note(host: Host, vendor: Vendor) -> str:
    hidden = [g for g in host.of(vendor) if not g.visible]
    return f" visible ({hidden[0].hidden_by} hides {len(hidden)})" if hidden else ""


def _aggregate(variant: str, per_gpu: Sequence[tuple[Gpu, Fit, str]], extra: Sequence[str] = ()) -> Verdict:
    """A variant runs on the host when it runs on at least one visible GPU of its vendor (the others are
    named: hide them with the visible-devices variable). Alike GPUs with the same answer share a line;
    each message has a {gpus} slot."""
    groups: dict[tuple[str, str, Fit, str], list[Gpu]] = {}
    for gpu, fit, message in per_gpu:
        groups.setdefault((gpu.name, gpu.arch, fit, message), []).append(gpu)
    lines = {fit: [] for fit in Fit}  # type: dict[Fit, list[str]]
    for (_, _, fit, message), gpus in groups.items():
        lines[fit].append(message.format(gpus=_gpus_label(gpus)))
    fits = [fit for _, fit, _ in per_gpu]
    covers = fits.count(Fit.YES)
    fit = Fit.YES if covers else Fit.UNKNOWN if Fit.UNKNOWN in fits else Fit.NO
    deciding = lines[fit] + (lines[Fit.NO] + lines[Fit.UNKNOWN] if fit is Fit.YES else [])
    headline = "; ".join([*extra, *deciding] if fit is Fit.YES else deciding)
    reasons = (*extra, *lines[Fit.YES], *lines[Fit.NO], *lines[Fit.UNKNOWN])
    return Verdict(variant=variant, fit=fit, headline=headline, reasons=reasons, covers=covers, of=len(per_gpu))


def judge_cuda(backend: Backend, host: Host, archs: Sequence[str] | None = None) -> Verdict:
    gpus = host.visible("nvidia")
    if not gpus:
        return Verdict(variant=backend.id, fit=Fit.NO, headline=f"no NVIDIA GPU{_hidden_note(host, 'nvidia')}")
    archs = backend.archs if archs is None else archs
    if not host.nvidia_driver:
        bound = ", ".join(sorted({g.driver for g in gpus if g.driver})) or "none"
        why = f"an NVIDIA GPU is on the PCI bus but no NVIDIA driver is loaded (bound: {bound})"
        return Verdict(variant=backend.id, fit=Fit.NO, headline=why, of=len(gpus))
    driver_line = f"no minimum driver recorded for {backend.id}: driver {host.nvidia_driver} not checked"
    driver_ok = True
    if backend.min_driver:
        driver_ok = version_key(host.nvidia_driver) >= version_key(backend.min_driver)
        driver_line = f"driver {host.nvidia_driver} {'>=' if driver_ok else '<'} {backend.min_driver}"
    per_gpu: list[tuple[Gpu, Fit, str]] = []
    for gpu in gpus:
        if not gpu.arch:
            per_gpu.append(
                (gpu, Fit.UNKNOWN, "{gpus}: compute capability unknown (no nvidia-smi, name not in the table)")
            )
        elif not archs:
            per_gpu.append((gpu, Fit.UNKNOWN, f"{{gpus}}: no arch list recorded for {backend.id}"))
        else:
            fit = cuda_arch_fit(gpu.arch, archs)
            says = {
                Fit.YES: f"{{gpus}} is covered by its archs ({_span(archs)})",
                Fit.NO: f"{{gpus}} is not in its archs ({_span(archs)})",
                Fit.UNKNOWN: f"{{gpus}} is newer than its archs ({_span(archs)}): only PTX could run",
            }[fit]
            per_gpu.append((gpu, fit, says))
    verdict = _aggregate(backend.id, per_gpu, [driver_line])
    if driver_ok:
        return verdict
    headline = driver_line if verdict.fit is Fit.YES else f"{driver_line}; {verdict.headline}"
    return Verdict(
        variant=backend.id,
        fit=Fit.NO,
        headline=headline,
        reasons=verdict.reasons,
        of=verdict.of,
        driver_only=verdict.fit is Fit.YES,
    )


def judge_rocm(backend: Backend, host: Host, archs: Sequence[str] | None = None) -> Verdict:
    gpus = host.visible("amd")
    if not gpus:
        return Verdict(variant=backend.id, fit=Fit.NO, headline=f"no AMD GPU{_hidden_note(host, 'amd')}")
    archs = backend.archs if archs is None else archs
    per_gpu: list[tuple[Gpu, Fit, str]] = []
    for gpu in gpus:
        if not gpu.arch:
            per_gpu.append((gpu, Fit.NO, "{gpus}: no KFD node (is amdgpu loaded?): ROCm cannot see it"))
        elif not archs:
            per_gpu.append((gpu, Fit.UNKNOWN, f"{{gpus}}: no gfx list recorded for {backend.id}"))
        elif gpu.arch in archs:
            per_gpu.append((gpu, Fit.YES, f"{{gpus}}: {gpu.arch} is one of its targets"))
        else:
            per_gpu.append((gpu, Fit.NO, f"{{gpus}}: {gpu.arch} is not in its targets ({', '.join(archs)})"))
    return _aggregate(backend.id, per_gpu)


def judge_xpu(backend: Backend, host: Host) -> Verdict:
    gpus = host.visible("intel")
    if not gpus:
        return Verdict(variant=backend.id, fit=Fit.NO, headline="no Intel GPU")
    per_gpu: list[tuple[Gpu, Fit, str]] = []
    for gpu in gpus:
        if gpu.driver not in XPU_DRIVERS:
            bound = f"bound to {gpu.driver}" if gpu.driver else "no driver bound"
            per_gpu.append((gpu, Fit.NO, f"{{gpus}}: {bound}; the xpu build needs i915 or xe"))
        elif gpu.arch in XPU_VALIDATED:
            per_gpu.append((gpu, Fit.YES, f"{{gpus}}: on PyTorch's XPU list, driver {gpu.driver}"))
        else:
            per_gpu.append((gpu, Fit.UNKNOWN, "{gpus}: not on PyTorch's XPU list (untested upstream; JIT only)"))
    return _aggregate(backend.id, per_gpu)


def judge(backend: Backend, host: Host, archs: Sequence[str] | None = None) -> Verdict:
    """Whether a variant runs on this host (archs: the wheel's own list, when it was read)."""
    if backend.build == "cuda":
        return judge_cuda(backend, host, archs)
    if backend.build == "rocm":
        return judge_rocm(backend, host, archs)
    if backend.build == "xpu":
        return judge_xpu(backend, host)
    return Verdict(variant=backend.id, fit=Fit.YES, headline="runs on the CPU")


# -- the recommendation ------------------------------------------------------------------------------
def pip_line(python: str, registry: Registry, release: Release, variant: str, version: str = "") -> str:
    """The install line: plain PyPI when the variant is the release's PyPI default, else its index (the
    test channel's for a release that has only candidates)."""
    args = [python, "-m", "pip", "install", f"torch=={version or release.latest}"]
    if not release.final:
        args += ["--index-url", registry.backend(variant).index("test")]
    elif variant != release.pypi_default:
        args += ["--index-url", registry.backend(variant).wheel_index]
    return shlex.join(args)


def _best(registry: Registry, release: Release, verdicts: Mapping[str, Verdict], family: str) -> str | None:
    """The variant of a family to install: the one that runs on the most GPUs; then PyPI's default;
    then stable before experimental before legacy; then the newest runtime."""
    fitting = [v for v, verdict in verdicts.items() if verdict.fit is Fit.YES and registry.backend(v).build == family]

    def key(variant: str) -> tuple:
        runtime = registry.variant_order(variant)[2]
        status = _STATUS_RANK.get(release.status(variant) or "", 3)
        return (-verdicts[variant].covers, variant != release.pypi_default, status, tuple(-n for n in runtime))

    return min(fitting, key=key) if fitting else None


@dataclass(frozen=True, kw_only=True)
class _Ask:
    """What a recommendation needs besides the verdicts."""

    registry: Registry
    host: Host
    release: Release
    version: str
    python: str

    def line(self, variant: str, release: Release | None = None) -> str:
        if release is None or release is self.release:
            return pip_line(self.python, self.registry, self.release, variant, self.version)
        return pip_line(self.python, self.registry, release, variant)


def _driver_upgrade(ask: _Ask, verdicts: Mapping[str, Verdict]) -> str:
    """The line that names a newer NVIDIA driver as the fix, when builds fail on the driver alone."""
    candidates = {
        v: Verdict(variant=v, fit=Fit.YES, headline="", covers=c.of, of=c.of)
        for v, c in verdicts.items()
        if c.driver_only
    }
    pick = _best(ask.registry, ask.release, candidates, "cuda")
    if pick is None:
        return ""
    need = ask.registry.backend(pick).min_driver
    return f"or upgrade the NVIDIA driver to >= {need} for torch {ask.version} ({pick}): {ask.line(pick)}"


def _maybe(ask: _Ask, verdicts: Mapping[str, Verdict], family: str) -> list[str]:
    """Builds of the family that may run but could not be checked (no arch list, unvalidated GPU)."""
    return [
        f"may run, unchecked ({v}, {ask.release.status(v)}: {verdict.headline}): {ask.line(v)}"
        for v, verdict in verdicts.items()
        if verdict.fit is Fit.UNKNOWN and ask.registry.backend(v).build == family
    ]


def _for_family(
    ask: _Ask, verdicts: Mapping[str, Mapping[str, Verdict]], family: str
) -> tuple[Recommendation | None, list[str]]:
    """A build of one GPU family for this host: the asked release's, else the newest older release's.
    Without one: None, and why not (one line per build)."""
    registry, release = ask.registry, ask.release
    vendor = _FAMILY_VENDOR[family]
    here = verdicts[release.id]
    chosen = _best(registry, release, here, family)
    if chosen:
        how = "PyPI's default build" if chosen == release.pypi_default else f"from the {chosen} index"
        verdict = here[chosen]
        share = (
            f" (runs on {verdict.covers} of {verdict.of} GPUs: hide the others)" if verdict.covers < verdict.of else ""
        )
        return Recommendation(
            variant=chosen,
            version=ask.version,
            command=ask.line(chosen),
            summary=f"torch {ask.version} {how}: {verdict.headline}{share}",
            reasons=verdict.reasons,
            alternatives=tuple(_maybe(ask, here, family)),
        ), []
    shipped = [v for v in release.builds if registry.backend(v).build == family]
    why_not = [f"{v}: {here[v].headline}" for v in shipped] or [f"torch {release.id} ships no {family} build"]
    upgrade = _driver_upgrade(ask, here)
    gpus = _gpus_label(ask.host.visible(vendor))
    cause = "driver" if shipped and all(here[v].driver_only for v in shipped) else "GPU"
    for old in reversed(registry.releases.values()):
        if version_key(old.id) >= version_key(release.id):
            continue
        pick = _best(registry, old, verdicts[old.id], family)
        if pick:
            alternatives = [upgrade, *_maybe(ask, here, family)]
            alternatives.append(f"or torch {ask.version} without the GPU (CPU build): {ask.line('cpu')}")
            return Recommendation(
                variant=pick,
                version=old.latest,
                command=ask.line(pick, old),
                summary=(
                    f"no torch {release.id} build runs on {gpus}; "
                    f"the newest torch for this {cause} is {old.latest} with {pick}"
                ),
                reasons=tuple(why_not),
                alternatives=tuple(a for a in alternatives if a),
            ), []
    return None, [*why_not, *(a for a in [upgrade] if a), *_maybe(ask, here, family)]


def recommend(
    registry: Registry,
    host: Host,
    release: Release,
    verdicts: Mapping[str, Mapping[str, Verdict]],
    *,
    python: str,
    version: str = "",
) -> Recommendation:
    """The build to install: a GPU build of the asked release when one runs here, NVIDIA before AMD
    before Intel (as uv orders them); else the newest older release with one; else the CPU build."""
    ask = _Ask(registry=registry, host=host, release=release, version=version or release.latest, python=python)
    cpu = ask.line("cpu")
    families = [f for f in ("cuda", "rocm", "xpu") if host.visible(_FAMILY_VENDOR[f])]
    if not families:
        hidden = [g for g in host.gpus if not g.visible]
        why = f"no GPU is visible ({hidden[0].hidden_by})" if hidden else "this host has no GPU"
        heavy = registry.backend(release.pypi_default).display_name
        return Recommendation(
            variant="cpu",
            version=ask.version,
            command=cpu,
            summary=f"{why}: the CPU build; PyPI's default carries {heavy} libraries, several GB",
        )
    why_not: list[str] = []
    for family in families:
        found, reasons = _for_family(ask, verdicts, family)
        if found:
            return found
        why_not += reasons
    gpus = "; ".join(_gpus_label(ask.host.visible(_FAMILY_VENDOR[f])) for f in families)
    return Recommendation(
        variant="cpu",
        version=ask.version,
        command=cpu,
        summary=f"no torch build is known to run on {gpus}: the CPU build",
        reasons=tuple(why_not),
    )


# -- the installed torch ----------------------------------------------------------------------------
def judge_torch(registry: Registry, host: Host, torch: InstalledTorch) -> TorchVerdict:
    """Whether the interpreter's torch can use this host's GPU, in one line, with the reasons."""
    if torch.state == "absent":
        return TorchVerdict(summary=f"torch is not installed for {torch.python}", fit=None)
    if torch.state != "installed":
        what = "torch does not import" if torch.state == "broken" else "could not ask"
        return TorchVerdict(summary=f"{what} for {torch.python}: {torch.error or 'no answer'}", fit=None)
    facts = torch.facts
    backend = registry.get(facts.variant if facts else None)
    if backend is None:
        return TorchVerdict(summary=f"torch {torch.version}: a build doctor cannot name", fit=Fit.UNKNOWN)
    gpus = [g for g in host.gpus if g.visible]
    if backend.build == "cpu":
        if gpus:
            names = _gpus_label(gpus) if len({g.name for g in gpus}) == 1 else f"{len(gpus)} GPUs"
            return TorchVerdict(summary=f"torch {torch.version} is a CPU build: it cannot use {names}", fit=Fit.NO)
        return TorchVerdict(summary=f"torch {torch.version} is a CPU build (this host has no GPU)", fit=Fit.YES)
    archs = torch.arch_list or None  # the wheel's own list wins over the registry's
    verdict = judge(backend, host, archs)
    compiled = _span(archs or backend.archs) or "an arch list nobody recorded"
    source = "read from the wheel" if archs else "the registry's list"
    reasons = [f"{backend.display_name} build ({backend.id}), compiled for {compiled} ({source})", *verdict.reasons]
    if torch.devices is not None:
        api = "torch.xpu" if backend.build == "xpu" else "torch.cuda"
        reasons.append(f"torch itself: {api}.device_count() = {torch.devices} (it counts GPUs it cannot run on too)")
    says = {
        Fit.YES: "can use this host's GPU",
        Fit.NO: "cannot use this host's GPU",
        Fit.UNKNOWN: "may not use this host's GPU (unchecked)",
    }[verdict.fit]
    return TorchVerdict(
        summary=f"torch {torch.version} {says}: {verdict.headline}", fit=verdict.fit, reasons=tuple(reasons)
    )


# -- the report -------------------------------------------------------------------------------------
def resolve_release(registry: Registry, asked: str | None) -> tuple[Release, str]:
    """--torch 2.14 or 2.14.0 -> (the 2.14 release, the version to install)."""
    if not asked:
        return registry.current, registry.current.latest
    parsed = parse_version(asked)
    release = registry.releases.get(parsed.minor) if parsed else None
    if release is None or parsed is None:
        known = ", ".join(registry.releases)
        raise UsageError(f"--torch {asked}: not a listed release", hint=f"one of {known}, or a version such as 2.14.1")
    return release, (parsed.base if len(parsed.release) >= 3 else release.latest)


def newest_for_python(registry: Registry, python_version: str) -> Release | None:
    """The newest final release with wheels for this CPython (3.10 -> 2.14), if the registry says."""
    fits = [r for r in registry.final_releases if r.ships_python(python_version)]
    return fits[-1] if fits else None


def release_notes(registry: Registry, host: Host, release: Release, python_version: str = "") -> list[str]:
    """What the release cannot do on this host, in a person's words: no wheel for this Python, no
    torch.compile on it, a GPU generation none of its CUDA wheels is compiled for."""
    notes: list[str] = []
    if python_version and release.ships_python(python_version) is False:
        shipped = ", ".join(release.python)
        older = newest_for_python(registry, python_version)
        then = f"; the newest torch for it is {older.latest}" if older else ""
        notes.append(f"this Python {python_version} has no torch {release.id} wheel (it ships {shipped}){then}")
    if python_version in release.no_compile_python:
        notes.append(f"torch {release.id} refuses torch.compile on this Python {python_version}")
    archs = [release.archs_of(registry.backend(v)) for v in release.builds if registry.backend(v).build == "cuda"]
    floors = [a[0] for a in archs if a and _sm(a[0])]
    if floors:
        floor = min(floors, key=lambda a: _sm(a) or (0, 0))
        for gpu in host.visible("nvidia"):
            sm = _sm(gpu.arch)
            if sm is not None and sm < (_sm(floor) or sm):
                name = generation(gpu.arch) or gpu.arch
                notes.append(
                    f"{name} is not supported by any {release.id} CUDA wheel: GPU {gpu.index} ({gpu.name}, "
                    f"{gpu.arch}); they start at {floor} ({generation(floor)})"
                )
    return list(dict.fromkeys(notes))


def _verdicts(registry: Registry, host: Host, release: Release) -> dict[str, Verdict]:
    """Each variant of a release judged; a CUDA variant on the architectures of this release's wheels."""
    out = {}
    for variant in release.builds:
        backend = registry.backend(variant)
        out[variant] = judge(backend, host, release.archs_of(backend) if backend.build == "cuda" else None)
    return out


def make_report(
    host: Host,
    torch: InstalledTorch | None,
    *,
    python: str,
    registry: Registry | None = None,
    asked: str | None = None,
    python_version: str = "",
) -> Report:
    """Every listed release's variants judged on this host, the installed torch judged, one recommendation.
    Without --torch, an interpreter the current release has no wheel for is given the newest release
    that has one (and a note says why)."""
    registry = registry or load_registry()
    python_version = python_version or (torch.python_version if torch else "")
    release, version = resolve_release(registry, asked)
    notes = release_notes(registry, host, release, python_version)
    older = newest_for_python(registry, python_version) if python_version else None
    if not asked and release.ships_python(python_version) is False and older is not None:
        release, version = older, older.latest
        notes += release_notes(registry, host, release, python_version)
    verdicts = {rid: _verdicts(registry, host, rel) for rid, rel in registry.releases.items()}
    return Report(
        host=host,
        torch=torch,
        torch_verdict=judge_torch(registry, host, torch) if torch else None,
        release=release.id,
        current=release.id == registry.current_release,
        verdicts=verdicts,
        statuses={rid: dict(rel.builds) for rid, rel in registry.releases.items()},
        recommendation=recommend(registry, host, release, verdicts, python=python, version=version),
        notes=tuple(dict.fromkeys(notes)),
        pythons={rid: rel.python for rid, rel in registry.releases.items()},
        python_version=python_version,
    )


def install_advice(python: str) -> str:
    """The pip command that installs torch for this host (the current release where a build of it runs
    here), with why in one line. Reads this host's GPUs: call it only when the advice is needed."""
    env = dict(os.environ)
    rec = make_report(detect_host(root_from_env(env), env), None, python=python).recommendation
    return f"install it with `{rec.command}`: {rec.summary}"
