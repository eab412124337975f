"""Loads backends.toml once into frozen dataclasses: the only place facts about PyTorch's builds are read
(and, at the end, shown as the tables and the JSON `harness backends` prints).

Three kinds of fact (see the file's header): *families* (how a kind of build runs), *variants*
(one build as upstream names it: cu132, rocm7.14) and *releases* (which variants upstream ships
for each torch release, with their status). A variant that is not listed is still a backend: it
is recognised from its name (harness/torch_build.py) and takes its family's defaults, so any
torch build gets a column.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import shlex
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, get_args

from harness.errors import RegistryError
from harness.interpreters import PythonKey, base_python, python_key
from harness.probe import Probe
from harness.text_table import aligned
from harness.torch_build import Expected, TorchFacts, parse_variant, parse_version

BuildKind = Literal["cpu", "cuda", "rocm", "xpu"]
BuildStatus = Literal["stable", "experimental", "legacy"]
# Where upstream serves a build: final releases (/whl/<variant>), release candidates (/whl/test/<variant>,
# carrying the final version number) and nightlies (/whl/nightly/<variant>, 2.16.0.devYYYYMMDD).
Channel = Literal["release", "test", "nightly"]
FAMILIES: Final[tuple[str, ...]] = get_args(BuildKind)
STATUSES: Final[tuple[str, ...]] = get_args(BuildStatus)
CHANNELS: Final[tuple[str, ...]] = get_args(Channel)
REGISTRY_PATH: Final[Path] = Path(__file__).with_name("backends.toml")
INDEX_ROOT: Final = "https://download.pytorch.org/whl"
# Backend ids of cells written before variants: the ROCm backend was `rocm` (it was ROCm 7.2).
LEGACY_IDS: Final[Mapping[str, str]] = {"rocm": "rocm7.2"}


@dataclass(frozen=True, kw_only=True)
class Backend:
    """One build variant, resolved: its family's defaults with the variant's own facts on top."""

    id: str  # the variant: cpu, cu132, rocm7.14, xpu
    display_name: str
    wheel_index: str
    local_tag: str
    build: BuildKind  # the family
    runtime_version: str
    accelerator: str
    gpus: str
    cdi_devices: tuple[str, ...]
    devices: tuple[str, ...]
    group_add: tuple[str, ...]
    security_opt: tuple[str, ...]
    shm_size: str
    runner_labels: tuple[str, ...]
    health_check: tuple[str, ...]
    visible_devices_env: str
    base_image: str
    layer: str = ""
    runtime_source: str = ""  # wheels | system | index (AMD's own wheel index: runtime_index)
    runtime_index: str = ""  # where the runtime wheels come from when it is not PyPI
    min_driver: str = ""
    archs: tuple[str, ...] = ()
    source: str = ""
    listed: bool = True  # False: recognised from its name only, with its family's defaults

    @property
    def family(self) -> str:
        return self.build

    @property
    def needs_device(self) -> bool:
        return bool(self.accelerator)

    @property
    def base_python(self) -> PythonKey | None:
        """The Python of its default image (its base image's python3): a cell on it keeps an id without a
        Python tag (harness/interpreters.py)."""
        return base_python(self.base_image)

    def index(self, channel: str = "release") -> str:
        """The wheel index of a channel: /whl/cu130, /whl/test/cu130, /whl/nightly/cu130 (a mirror
        laid out as download.pytorch.org gets the same folders)."""
        if channel == "release":
            return self.wheel_index
        if channel not in CHANNELS:
            raise RegistryError(f"unknown channel {channel!r}", hint=f"one of {', '.join(CHANNELS)}")
        root, _, token = self.wheel_index.rstrip("/").rpartition("/")
        return f"{root}/{channel}/{token}"

    def expected(self, version: str = "") -> Expected:
        """What this backend expects of its torch (see harness/torch_build.py)."""
        return Expected(
            backend=self.id, local_tag=self.local_tag, build=self.build, runtime=self.runtime_version, version=version
        )


@dataclass(frozen=True, kw_only=True)
class Release:
    """One torch release series (2.15) as upstream ships it."""

    id: str  # major.minor
    latest: str  # the newest patch release: 2.15.0
    pypi_default: str  # the variant `pip install torch` gives from PyPI
    builds: Mapping[str, BuildStatus]  # variant -> status, in the file's order
    released: str = ""  # the final release's date (PyPI's upload), YYYY-MM-DD
    channel: str = "release"  # release: final wheels exist; test: only release candidates so far
    planned: str = ""  # the planned release date of a release still on the test channel
    python: tuple[str, ...] = ()  # the CPython versions it ships wheels for: 3.11, 3.14t (free-threaded)
    no_compile_python: tuple[str, ...] = ()  # Pythons whose torch.compile it refuses
    cuda_min_arch: Mapping[str, str] = dataclasses.field(default_factory=dict)  # cuda variant -> oldest sm_XY
    sources: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()

    def ships(self, variant: str) -> bool:
        return variant in self.builds

    @property
    def final(self) -> bool:
        """A final release exists (on PyPI and the release channel), not only candidates."""
        return self.channel == "release"

    def ships_python(self, python: str | PythonKey) -> bool | None:
        """Whether it has wheels for CPython `python` (3.10, 3.14t); None when the file does not say."""
        return str(python) in self.python if self.python else None

    @property
    def pythons(self) -> tuple[PythonKey, ...]:
        """The CPythons it ships wheels for, as keys, in the file's order."""
        return tuple(key for text in self.python if (key := python_key(text)) is not None)

    def compiles_on(self, python: PythonKey) -> bool:
        """Whether its torch.compile admits this Python (no_compile_python lists the ones it refuses)."""
        return python.label not in self.no_compile_python

    def archs_of(self, backend: Backend) -> tuple[str, ...]:
        """The GPU architectures a variant's wheels of this release are compiled for: the variant's list
        from this release's oldest architecture on (cu130 of 2.15 starts at sm_75)."""
        floor = _sm_key(self.cuda_min_arch.get(backend.id, ""))
        if backend.build != "cuda" or floor is None:
            return backend.archs
        return tuple(a for a in backend.archs if (_sm_key(a) or (0, 0)) >= floor)

    def status(self, variant: str) -> BuildStatus | None:
        return self.builds.get(variant)


def _sm_key(arch: str) -> tuple[int, int] | None:
    """sm_75 -> (7, 5), sm_100 -> (10, 0); None for anything else."""
    match = re.fullmatch(r"sm_(\d+)(\d)[a-z]?", arch)
    return (int(match.group(1)), int(match.group(2))) if match else None


@dataclass(frozen=True)
class HostLibrary:
    """A library that bundled libraries link against but only a GPU host or a cluster provides."""

    pattern: str  # a glob over the soname, e.g. libcuda.so.*
    reason: str


@dataclass(frozen=True)
class Registry:
    """The release matrix: families, listed variants (in file order) and releases (oldest first)."""

    families: Mapping[str, Mapping[str, Any]]
    variants: Mapping[str, Backend]
    releases: Mapping[str, Release]
    current_release: str
    host_libraries: tuple[HostLibrary, ...]

    # -- variants ------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[str]:
        return iter(self.variants)

    def __getitem__(self, variant_id: str) -> Backend:
        return self.backend(variant_id)

    def __contains__(self, variant: object) -> bool:
        return variant in self.variants

    def values(self) -> Iterable[Backend]:
        return self.variants.values()

    def get(self, variant_id: str | None) -> Backend | None:
        """A listed or recognisable variant (old ids such as `rocm` included), else None."""
        try:
            return self.backend(variant_id or "")
        except RegistryError:
            return None

    def backend(self, variant_id: str) -> Backend:
        """The backend of a variant id: listed, or recognised from its name with its family's defaults."""
        key = LEGACY_IDS.get(variant_id, variant_id)
        listed = self.variants.get(key)
        if listed is not None:
            return listed
        parsed = parse_variant(key)
        if parsed is None or parsed.id != key:
            listed_ids = ", ".join(self.variants)
            raise RegistryError(
                f"unknown backend {variant_id!r}",
                hint=f"a build variant such as {listed_ids} (or cuXYZ / rocmX.Y), or a family: {', '.join(FAMILIES)}",
            )
        return _resolve(key, {"family": parsed.family, "runtime": parsed.runtime}, self.families, listed=False)

    def variant_order(self, variant_id: str) -> tuple[int, int, tuple[int, ...], str]:
        """Sort key: families in file order, then by runtime version (ROCm 7.14 after 7.2)."""
        backend = self.get(variant_id)
        if backend is None:
            return (len(FAMILIES), 0, (), variant_id)
        runtime = tuple(int(n) for n in backend.runtime_version.split(".")) if backend.runtime_version else ()
        return (FAMILIES.index(backend.build), 0, runtime, variant_id)

    # -- releases ------------------------------------------------------------------------------
    @property
    def current(self) -> Release:
        return self.releases[self.current_release]

    def release_of(self, version: str | None) -> Release | None:
        """The release series a torch version belongs to (2.15.0+cu132 -> 2.15), if listed."""
        parsed = parse_version(version)
        return self.releases.get(parsed.minor) if parsed else None

    def channel_of(self, version: str | None) -> Channel:
        """The channel a torch version comes from: a .devYYYYMMDD is a nightly, an rcN (or a version of
        a release that has only candidates so far) comes from the test channel, the rest are releases."""
        parsed = parse_version(version)
        if parsed is None:
            return "release"
        if parsed.dev >= 0:
            return "nightly"
        release = self.releases.get(parsed.minor)
        if parsed.pre or (release is not None and not release.final):
            return "test"
        return "release"

    @property
    def pythons(self) -> tuple[PythonKey, ...]:
        """Every CPython some listed release ships, oldest first, the free-threaded ones after the others."""
        keys = {key for release in self.releases.values() for key in release.pythons}
        return tuple(sorted(keys, key=lambda k: (k.free_threaded, k.major, k.minor)))

    @property
    def final_releases(self) -> list[Release]:
        """The releases that have a final release, oldest first."""
        return [r for r in self.releases.values() if r.final]

    def ships(self, version: str | None, variant: str) -> bool | None:
        """Whether upstream ships `variant` for the release of `version` (None: release not listed)."""
        release = self.release_of(version)
        return None if release is None else release.ships(LEGACY_IDS.get(variant, variant))

    def select(self, selectors: Iterable[str] | None, release: Release | None = None) -> list[Backend]:
        """Variants named by ids or families (`cuda` = every CUDA variant), in registry order. With a
        release, only what it ships; a family with no release means its listed variants."""
        chosen: dict[str, Backend] = {}
        pool = [self.backend(v) for v in release.builds] if release else list(self.variants.values())
        for selector in selectors or [b.id for b in pool]:
            if selector in FAMILIES:
                chosen.update((b.id, b) for b in pool if b.build == selector)
                continue
            backend = self.backend(selector)
            if release is None or release.ships(backend.id):
                chosen[backend.id] = backend
        return sorted(chosen.values(), key=lambda b: self.variant_order(b.id))

    def default_variant(self, family: str, release: Release | None = None) -> Backend:
        """A family's variant to use when only the family is named (tox -e rocm): PyPI's default
        for CUDA, else the release's first stable variant of the family, else its newest."""
        release = release or self.current
        if family == "cuda" and release.pypi_default:
            return self.backend(release.pypi_default)
        shipped = [self.backend(v) for v, status in release.builds.items() if self.backend(v).build == family]
        stable = [b for b in shipped if release.status(b.id) == "stable"]
        pick = stable or shipped
        if not pick:
            raise RegistryError(f"torch {release.id} ships no {family} build")
        return max(pick, key=lambda b: self.variant_order(b.id))

    def default_torch(self, variant: str) -> str:
        """The torch a variant's image pins by default: the newest final release that ships it (cu126 is
        not built for 2.15, so its default is 2.14.1), else the current release. A release with only
        candidates (2.16 on the test channel) is never a default: --channel test asks for it."""
        for release in reversed(self.final_releases):
            if release.ships(variant):
                return release.latest
        return self.current.latest

    def for_facts(self, facts: TorchFacts) -> Backend | None:
        """The backend of a torch build (listed or recognised), None when it says nothing usable."""
        variant = facts.variant
        return self.backend(variant) if variant else None


# -- loading and validation ----------------------------------------------------------------------
_FAMILY_FIELDS: Final = (
    "display_name", "accelerator", "gpus", "cdi_devices", "devices", "group_add", "security_opt", "shm_size",
    "runner_labels", "health_check", "visible_devices_env", "base_image", "layer",
)  # fmt: skip
_LIST_FIELDS: Final = frozenset(
    {"cdi_devices", "devices", "group_add", "security_opt", "runner_labels", "health_check", "archs"}
)
_VARIANT_OWN: Final = frozenset(
    {"family", "runtime", "wheel_index", "runtime_source", "runtime_index", "min_driver", "archs", "source"}
)
_RELEASE_KEYS: Final = frozenset(
    {"latest", "released", "channel", "planned", "python", "no_compile_python", "cuda_min_arch", "pypi_default",
     "sources", "unverified", *STATUSES}
)  # fmt: skip
_DATE_RE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TOP_KEYS: Final = frozenset({"schema", "current", "families", "variants", "releases", "host_libraries"})


def _check_list(where: str, name: str, value: object) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RegistryError(f"{where}: {name} must be a list of strings")


def _check_type(where: str, name: str, value: object) -> None:
    if name in _LIST_FIELDS:
        _check_list(where, name, value)
    elif not isinstance(value, str):
        raise RegistryError(f"{where}: {name} must be a string")


def _resolve(
    variant_id: str, table: Mapping[str, Any], families: Mapping[str, Mapping[str, Any]], *, listed: bool
) -> Backend:
    family = table["family"]
    merged = {**families[family], **{k: v for k, v in table.items() if k in _FAMILY_FIELDS}}
    runtime = str(table.get("runtime", ""))
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in merged.items()}
    values["display_name"] = str(values["display_name"]).replace("{runtime}", runtime)
    return Backend(
        id=variant_id,
        wheel_index=str(table.get("wheel_index") or f"{INDEX_ROOT}/{variant_id}"),
        local_tag=variant_id,
        build=family,
        runtime_version=runtime,
        runtime_source=str(table.get("runtime_source", "")),
        runtime_index=str(table.get("runtime_index", "")),
        min_driver=str(table.get("min_driver", "")),
        archs=tuple(table.get("archs", ())),
        source=str(table.get("source", "")),
        listed=listed,
        **values,
    )


def _parse_families(data: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(data, dict) or set(data) != set(FAMILIES):
        raise RegistryError(f"backends.toml: [families] must have exactly {', '.join(FAMILIES)}")
    for family, table in data.items():
        where = f"family {family!r}"
        missing = sorted(set(_FAMILY_FIELDS) - set(table))
        extra = sorted(set(table) - set(_FAMILY_FIELDS))
        if missing or extra:
            raise RegistryError(f"{where}: missing fields {missing} / unknown fields {extra}")
        for name, value in table.items():
            _check_type(where, name, value)
    return data


def _parse_variants(data: Any, families: Mapping[str, Mapping[str, Any]]) -> dict[str, Backend]:
    if not isinstance(data, dict) or not data:
        raise RegistryError("backends.toml has no [variants.<id>] tables")
    variants: dict[str, Backend] = {}
    for variant_id, table in data.items():
        where = f"variant {variant_id!r}"
        parsed = parse_variant(variant_id)
        if parsed is None or parsed.id != variant_id:
            raise RegistryError(f"{where}: not a variant name (cpu, xpu, cuXYZ, rocmX.Y)")
        if not isinstance(table, dict):
            raise RegistryError(f"{where}: must be a table")
        extra = sorted(set(table) - _VARIANT_OWN - set(_FAMILY_FIELDS))
        if extra:
            raise RegistryError(f"{where}: unknown fields {extra}")
        if table.get("family") != parsed.family:
            raise RegistryError(f"{where}: family must be {parsed.family!r} (its name says so)")
        if parsed.runtime and str(table.get("runtime")) != parsed.runtime:
            raise RegistryError(f"{where}: runtime must be {parsed.runtime!r} (its name says so)")
        for name, value in table.items():
            if name != "family":
                _check_type(where, name, value)
        if table.get("runtime_source", "") not in ("", "wheels", "system", "index"):
            raise RegistryError(f"{where}: runtime_source must be 'wheels', 'system' or 'index'")
        if table.get("runtime_index") and table.get("runtime_source") != "index":
            raise RegistryError(f"{where}: runtime_index goes with runtime_source = 'index'")
        variants[variant_id] = _resolve(variant_id, table, families, listed=True)
    return variants


def _parse_releases(data: Any, variants: Mapping[str, Backend]) -> dict[str, Release]:
    if not isinstance(data, dict) or not data:
        raise RegistryError('backends.toml has no [releases."<major.minor>"] tables')
    releases: list[Release] = []
    for release_id, table in data.items():
        where = f"release {release_id!r}"
        version = parse_version(release_id)
        if version is None or version.minor != release_id:
            raise RegistryError(f'{where}: the key must be a release series like "2.15"')
        if not isinstance(table, dict):
            raise RegistryError(f"{where}: must be a table")
        extra = sorted(set(table) - _RELEASE_KEYS)
        if extra:
            raise RegistryError(f"{where}: unknown fields {extra}")
        latest = table.get("latest")
        parsed_latest = parse_version(latest if isinstance(latest, str) else None)
        if parsed_latest is None or parsed_latest.minor != release_id or parsed_latest.local:
            raise RegistryError(f"{where}: latest must be a {release_id}.x version without a local tag")
        builds: dict[str, BuildStatus] = {}
        for status in STATUSES:
            listed = table.get(status, [])
            _check_list(where, status, listed)
            for variant in listed:
                if variant not in variants:
                    raise RegistryError(f"{where}: {status} names {variant!r}, which is not a listed variant")
                if variant in builds:
                    raise RegistryError(f"{where}: {variant!r} is both {builds[variant]} and {status}")
                builds[variant] = status  # type: ignore[assignment]
        default = table.get("pypi_default", "")
        if not isinstance(default, str) or (default and default not in builds):
            raise RegistryError(f"{where}: pypi_default must be one of the variants it ships")
        for name in ("sources", "unverified", "python", "no_compile_python"):
            _check_list(where, name, table.get(name, []))
        dates = _release_dates(where, table)
        pythons = [p for name in ("python", "no_compile_python") for p in table.get(name, [])]
        if any((key := python_key(p)) is None or key.label != p for p in pythons):
            raise RegistryError(f"{where}: python versions are written 3.11 or 3.14t (free-threaded)")
        min_arch = table.get("cuda_min_arch", {})
        if not isinstance(min_arch, dict) or not all(
            builds.get(k) and variants[k].build == "cuda" and isinstance(v, str) and _sm_key(v)
            for k, v in min_arch.items()
        ):
            raise RegistryError(f"{where}: cuda_min_arch maps CUDA variants it ships to an arch like sm_75")
        releases.append(
            Release(
                id=release_id,
                latest=str(latest),
                pypi_default=default,
                builds=builds,
                python=tuple(table.get("python", ())),
                no_compile_python=tuple(table.get("no_compile_python", ())),
                cuda_min_arch=dict(min_arch),
                **dates,
                sources=tuple(table.get("sources", ())),
                unverified=tuple(table.get("unverified", ())),
            )
        )
    releases.sort(key=lambda r: parse_version(r.id).release)  # type: ignore[union-attr]
    return {r.id: r for r in releases}


def _release_dates(where: str, table: Mapping[str, Any]) -> dict[str, str]:
    """channel, released, planned: a final release has its date; one on the test channel its plan."""
    channel = table.get("channel", "release")
    if channel not in ("release", "test"):
        raise RegistryError(f"{where}: channel must be 'release' or 'test' (only candidates so far)")
    dates = {"released": table.get("released", ""), "planned": table.get("planned", "")}
    for name, value in dates.items():
        if not isinstance(value, str) or (value and not _DATE_RE.match(value)):
            raise RegistryError(f"{where}: {name} must be a date like 2026-10-28")
    if channel == "release" and not dates["released"]:
        raise RegistryError(f"{where}: a final release needs its released date (PyPI's upload)")
    if channel == "test" and (dates["released"] or not dates["planned"]):
        raise RegistryError(f"{where}: a release on the test channel has a planned date and no released one")
    return {"channel": channel, **dates}


def parse_host_libraries(data: dict) -> tuple[HostLibrary, ...]:
    table = data.get("host_libraries", {})
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in table.items()):
        raise RegistryError("backends.toml: [host_libraries] must map soname patterns to reasons (strings)")
    return tuple(HostLibrary(pattern, reason) for pattern, reason in table.items())


def parse_registry(data: dict) -> Registry:
    """Validate the TOML document and build the registry; every problem names its table."""
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise RegistryError(f"backends.toml: unknown top-level keys {unknown}")
    if data.get("schema") != 2:
        raise RegistryError("backends.toml: schema must be 2 (families, variants, releases)")
    families = _parse_families(data.get("families"))
    variants = _parse_variants(data.get("variants"), families)
    releases = _parse_releases(data.get("releases"), variants)
    current = data.get("current")
    if current not in releases or not releases[current].final:
        raise RegistryError(f"backends.toml: current = {current!r} is not a listed final release")
    return Registry(
        families=families,
        variants=variants,
        releases=releases,
        current_release=str(current),
        host_libraries=parse_host_libraries(data),
    )


@functools.cache
def load_registry(path: Path = REGISTRY_PATH) -> Registry:
    """The registry, read and validated once per process."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise RegistryError(f"cannot read backend registry {path}: {err}") from err
    return parse_registry(data)


def host_libraries(path: Path = REGISTRY_PATH) -> tuple[HostLibrary, ...]:
    """Libraries the image verifier does not require (they come with the GPU host or the cluster)."""
    return load_registry(path).host_libraries


def get_backend(backend_id: str) -> Backend:
    """A variant by id (listed or recognised); a family name means its default variant today."""
    registry = load_registry()
    if backend_id in FAMILIES and backend_id not in registry.variants:
        return registry.default_variant(backend_id)
    return registry.backend(backend_id)


def backend_for_probe(probe: Probe) -> Backend | None:
    """The backend of the torch the suites' probe saw (any build gets one); None without a torch."""
    facts = probe.facts
    if not facts.version:
        return None
    return load_registry().for_facts(facts)


# -- the registry as `harness backends` shows it ------------------------------------------------------
STATUS_MARK: Final = {"stable": "stable", "experimental": "experimental", "legacy": "legacy", None: "-"}


def variants_table(registry: Registry) -> list[str]:
    rows = [("ID", "NAME", "WHEEL INDEX", "EXPECTS", "DEVICE FLAGS", "RUNNER LABELS", "HEALTH CHECK")]
    for b in registry.values():
        expects = f"+{b.local_tag}" + (f", {b.build} {b.runtime_version}" if b.runtime_version else "")
        if b.min_driver:
            expects += f", driver >= {b.min_driver}"
        flags = [f"--gpus {b.gpus}"] if b.gpus else []
        flags += [f"--device {d}" for d in b.devices]
        flags += [f"--group-add {g}" for g in b.group_add]
        flags += [f"--security-opt {s}" for s in b.security_opt]
        rows.append(
            (
                b.id,
                b.display_name,
                b.wheel_index,
                expects,
                " ".join(flags) or "-",
                ",".join(b.runner_labels),
                shlex.join(b.health_check),
            )
        )
    return aligned(rows)


def releases_table(registry: Registry) -> list[str]:
    """Release x variant: stable / experimental / legacy, `-` where upstream does not ship the build."""
    variants = list(registry)
    rows = [("RELEASE", "LATEST", "CHANNEL", "RELEASED", "PYTHON", "PYPI DEFAULT", *variants)]
    for release in registry.releases.values():
        marks = tuple(STATUS_MARK[release.status(v)] for v in variants)
        current = " (current)" if release.id == registry.current_release else ""
        date = release.released or f"planned {release.planned}"
        rows.append(
            (
                release.id + current,
                release.latest,
                release.channel,
                date,
                python_span(release.python),
                release.pypi_default or "?",
                *marks,
            )
        )
    return aligned(rows)


def python_span(pythons: tuple[str, ...]) -> str:
    """3.11-3.15+3.14t,3.15t: the CPython versions a release has wheels for, short ('?' unknown)."""
    plain = [p for p in pythons if not p.endswith("t")]
    free = [p for p in pythons if p.endswith("t")]
    text = f"{plain[0]}-{plain[-1]}" if len(plain) > 1 else "".join(plain)
    return (text + ("+" + ",".join(free) if free else "")) or "?"


def registry_json(registry: Registry) -> dict[str, Any]:
    """The registry as data (`harness backends --format json`): the current release, every variant, every release."""
    return {
        "current": registry.current_release,
        "variants": {k: dataclasses.asdict(v) for k, v in registry.variants.items()},
        "releases": {
            r.id: {**dataclasses.asdict(r), "builds": dict(r.builds), "cuda_min_arch": dict(r.cuda_min_arch)}
            for r in registry.releases.values()
        },
    }
