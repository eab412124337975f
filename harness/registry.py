"""Loads backends.toml once into frozen dataclasses; the only place backend facts are read."""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, get_args

from harness.errors import RegistryError
from harness.torch_build import Expected, TorchFacts, mismatches

BackendId = Literal["cpu", "cu126", "cu130", "rocm", "xpu"]
BuildKind = Literal["cpu", "cuda", "rocm", "xpu"]
BACKEND_IDS: Final[tuple[str, ...]] = get_args(BackendId)
REGISTRY_PATH: Final[Path] = Path(__file__).with_name("backends.toml")


@dataclass(frozen=True, kw_only=True)
class Backend:
    id: str
    display_name: str
    wheel_index: str
    local_tag: str
    build: BuildKind
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

    @property
    def index_token(self) -> str:
        """The last path part of the wheel index (cpu, cu126, rocm7.2, xpu)."""
        return self.wheel_index.rstrip("/").rsplit("/", 1)[-1]

    @property
    def needs_device(self) -> bool:
        return bool(self.accelerator)

    def expected(self, version: str = "") -> Expected:
        """What this backend expects of its torch (see harness/torch_build.py)."""
        return Expected(
            backend=self.id, local_tag=self.local_tag, build=self.build, runtime=self.runtime_version, version=version
        )


@dataclass(frozen=True)
class HostLibrary:
    """A library that bundled libraries link against but only a GPU host or a cluster provides."""

    pattern: str  # a glob over the soname, e.g. libcuda.so.*
    reason: str


_FIELDS = {f.name: f for f in dataclasses.fields(Backend) if f.name != "id"}


def _coerce(backend_id: str, name: str, value: object) -> object:
    field_type = str(_FIELDS[name].type)
    if field_type.startswith("tuple"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RegistryError(f"backend {backend_id!r}: {name} must be a list of strings")
        return tuple(value)
    if not isinstance(value, str):
        raise RegistryError(f"backend {backend_id!r}: {name} must be a string")
    return value


def parse_registry(data: dict) -> dict[str, Backend]:
    """Validate the TOML document and build one Backend per table, in file order."""
    unknown = sorted(set(data) - {"backends", "host_libraries"})
    if unknown:
        raise RegistryError(f"backends.toml: unknown top-level keys {unknown}")
    tables = data.get("backends")
    if not isinstance(tables, dict) or not tables:
        raise RegistryError("backends.toml has no [backends.<id>] tables")
    backends: dict[str, Backend] = {}
    for backend_id, table in tables.items():
        if backend_id not in BACKEND_IDS:
            raise RegistryError(
                f"unknown backend id {backend_id!r} in backends.toml",
                hint=f"known ids: {', '.join(BACKEND_IDS)}; add new ids to BackendId too",
            )
        missing = sorted(set(_FIELDS) - set(table))
        extra = sorted(set(table) - set(_FIELDS))
        if missing or extra:
            raise RegistryError(f"backend {backend_id!r}: missing fields {missing} / unknown fields {extra}")
        values = {name: _coerce(backend_id, name, table[name]) for name in _FIELDS}
        if values["build"] not in get_args(BuildKind):
            raise RegistryError(f"backend {backend_id!r}: build must be one of {get_args(BuildKind)}")
        backends[backend_id] = Backend(id=backend_id, **values)  # type: ignore[arg-type]
    return backends


@functools.cache
def load_registry(path: Path = REGISTRY_PATH) -> dict[str, Backend]:
    """The registry, read and validated once per process."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise RegistryError(f"cannot read backend registry {path}: {err}") from err
    return parse_registry(data)


def parse_host_libraries(data: dict) -> tuple[HostLibrary, ...]:
    table = data.get("host_libraries", {})
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in table.items()):
        raise RegistryError("backends.toml: [host_libraries] must map soname patterns to reasons (strings)")
    return tuple(HostLibrary(pattern, reason) for pattern, reason in table.items())


@functools.cache
def host_libraries(path: Path = REGISTRY_PATH) -> tuple[HostLibrary, ...]:
    """Libraries the image verifier does not require (they come with the GPU host or the cluster)."""
    load_registry(path)  # validates the whole file first
    return parse_host_libraries(tomllib.loads(path.read_text(encoding="utf-8")))


def get_backend(backend_id: str) -> Backend:
    backends = load_registry()
    try:
        return backends[backend_id]
    except KeyError:
        raise RegistryError(f"unknown backend {backend_id!r}", hint=f"choose one of: {', '.join(backends)}") from None


def backend_for_probe(probe: dict) -> str | None:
    """The first registry backend whose build the probed local torch is, if any."""
    facts = TorchFacts.from_probe(probe)
    for backend in load_registry().values():
        if not mismatches(facts, backend.expected()):
            return backend.id
    return None
