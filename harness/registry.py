"""Loads backends.toml once into frozen dataclasses; the only place backend facts are read."""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, get_args

from harness.errors import RegistryError

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


def get_backend(backend_id: str) -> Backend:
    backends = load_registry()
    try:
        return backends[backend_id]
    except KeyError:
        raise RegistryError(f"unknown backend {backend_id!r}", hint=f"choose one of: {', '.join(backends)}") from None


def backend_for_probe(probe: dict) -> str | None:
    """The registry backend whose torch build matches a probe of the local torch, if any."""
    torch_info = probe.get("torch") or {}
    tag = torch_info.get("local_tag") or ""
    runtime = probe.get("runtime") or {}
    for backend in load_registry().values():
        if tag and tag == backend.local_tag:
            return backend.id
    for backend in load_registry().values():
        # PyPI wheels carry no local tag: match on the runtime instead.
        if not tag and backend.build == probe.get("build"):
            wanted = backend.runtime_version
            have = runtime.get("cuda") or runtime.get("hip") or ""
            if not wanted or str(have).startswith(wanted):
                return backend.id
    return None
