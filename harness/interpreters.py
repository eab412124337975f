"""CPython interpreters as data: a column's Python key, and what a cell recorded of the interpreter it ran on.

A key is written as the registry writes it (`3.15`, `3.14t`: free-threaded) and tagged as cibuildwheel's
build identifiers and the wheels' ABI tags are (`cp315`, `cp314t`). Versions are read with `packaging`,
never split by hand; the one free-threaded marker, a trailing `t`, is the only thing taken off first.

A column is backend + torch build + Python. The suites' probe records the interpreter (version,
implementation, ABI tag, free-threaded or not, and on a free-threaded build whether the GIL stayed
disabled after `import torch`); a cell written before it did reads as "Python not recorded", never as a
guess from its version string.

The id rule: a cell id carries its Python's tag (`cu132-cp315`) unless the Python is the one the build's
default image has (Debian bookworm's 3.11 for CPU and CUDA, Ubuntu 24.04's 3.12 for ROCm and XPU), so
every column id from before columns had Pythons keeps its meaning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from packaging.version import InvalidVersion, Version

from harness.errors import UsageError

FREE_THREADED_MARK: Final = "t"
NOT_RECORDED: Final = "Python not recorded"
# The Python (python3) of the base images the registry names, and of the local bases made from them
# (tools/make-base-image.sh): a base image's name holds its distribution's codename or tag.
BASE_PYTHONS: Final = (
    ("bookworm", "3.11"),
    ("trixie", "3.13"),
    ("forky", "3.14"),
    ("ubuntu:24.04", "3.12"),
    ("noble", "3.12"),
    ("ubuntu:22.04", "3.10"),
    ("jammy", "3.10"),
)


@dataclass(frozen=True, order=True)
class PythonKey:
    """One CPython as a column names it: 3.15, or 3.14t for the free-threaded build."""

    major: int
    minor: int
    free_threaded: bool = False

    @property
    def version(self) -> str:
        """3.15 (without the free-threaded mark)."""
        return f"{self.major}.{self.minor}"

    @property
    def label(self) -> str:
        """3.15, 3.14t: as the registry and `--python` write it."""
        return self.version + (FREE_THREADED_MARK if self.free_threaded else "")

    @property
    def tag(self) -> str:
        """cp315, cp314t: the ABI tag of its wheels, and the part of a cell id that names it."""
        return f"cp{self.major}{self.minor}" + (FREE_THREADED_MARK if self.free_threaded else "")

    @property
    def display(self) -> str:
        """'Python 3.15', 'Python 3.14t': a column's head says it so."""
        return f"Python {self.label}"

    @property
    def program(self) -> str:
        """python3.15, python3.14t: the interpreter's name on PATH (Debian's packages, uv, the official images)."""
        return f"python{self.label}"

    def __str__(self) -> str:
        return self.label


def _parse(text: str) -> PythonKey | None:
    raw = text.strip()
    free = raw.endswith(FREE_THREADED_MARK)
    number = raw[:-1] if free else raw
    try:
        version = Version(number)
    except InvalidVersion:
        return None
    if version.major != 3 or len(version.release) != 2 or version.is_prerelease or version.is_postrelease:
        return None
    if version.local or version.epoch or str(version) != number:
        return None
    return PythonKey(version.major, version.minor, free)


def parse_python(text: str | None, *, valid: Iterable[str] = (), what: str = "--python") -> PythonKey:
    """`3.15` -> PythonKey(3, 15), `3.14t` -> free-threaded; anything else a UsageError naming the valid keys."""
    key = _parse(text or "")
    if key is None:
        known = ", ".join(valid) or "3.11, 3.14t"
        named = f"{what} {text!r}".strip()
        raise UsageError(f"{named} is not a Python like 3.15 or 3.14t (free-threaded)", hint=f"valid keys: {known}")
    return key


def python_key(text: str | None) -> PythonKey | None:
    """A key the registry or a cell wrote (3.15, 3.14t), or None when it is not one."""
    return _parse(text) if isinstance(text, str) else None


def base_python(base_image: str) -> PythonKey | None:
    """The python3 of a base image (bookworm: 3.11), when the name says which distribution it is;
    an official image (python:3.15-slim) says its own."""
    name = base_image.rsplit("/", 1)[-1]
    if name.startswith("python:"):
        version = name.partition(":")[2].split("-", 1)[0]
        return python_key(version)
    found = next((py for key, py in BASE_PYTHONS if key in base_image), None)
    return python_key(found)


def id_tag(python: PythonKey | None, default: PythonKey | None) -> str | None:
    """The part of a cell id that names its Python: its tag, unless it is the default image's Python
    (or unknown), which keeps the id it had before columns had Pythons."""
    if python is None or python == default:
        return None
    return python.tag


@dataclass(frozen=True, kw_only=True)
class Interpreter:
    """The interpreter a cell ran on, as the suites' probe recorded it (`environment.interpreter`)."""

    version: str  # 3.15.0, as platform.python_version() says it
    implementation: str  # cpython (sys.implementation.name)
    abi: str  # cp315, cp314t: the ABI tag of the wheels it takes
    free_threaded: bool  # built with the GIL disabled (Py_GIL_DISABLED)
    # A free-threaded build: whether the GIL was enabled after `import torch` (an extension that does not
    # declare free-threading support turns it back on); None on a GIL build, or when torch did not import.
    gil_enabled: bool | None = None
    executable: str | None = None

    @property
    def key(self) -> PythonKey | None:
        """The column's Python: the version's major.minor and the free-threaded mark, for CPython."""
        if self.implementation != "cpython":
            return None
        try:
            version = Version(self.version)
        except InvalidVersion:
            return None
        return PythonKey(version.major, version.minor, self.free_threaded) if len(version.release) >= 2 else None

    @property
    def gil_state(self) -> str | None:
        """'GIL disabled', 'GIL re-enabled by import torch' on a free-threaded build; None otherwise."""
        if not self.free_threaded or self.gil_enabled is None:
            return None
        return "GIL re-enabled after import torch" if self.gil_enabled else "GIL disabled after import torch"

    def describe(self) -> str:
        """'CPython 3.14.2 (cp314t, free-threaded, GIL disabled after import torch)'."""
        parts = [self.abi] + (["free-threaded"] if self.free_threaded else [])
        parts += [self.gil_state] if self.gil_state else []
        name = "CPython" if self.implementation == "cpython" else self.implementation
        return f"{name} {self.version} ({', '.join(parts)})"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "version": self.version,
            "implementation": self.implementation,
            "abi": self.abi,
            "free_threaded": self.free_threaded,
            "gil_enabled": self.gil_enabled,
        }
        if self.executable:
            data["executable"] = self.executable
        return data

    @classmethod
    def from_json(cls, data: Any) -> Interpreter | None:
        """None unless the object names at least a version, an implementation and an ABI tag (a record
        that says less is not one: the column reads "Python not recorded")."""
        if not isinstance(data, Mapping):
            return None
        version, implementation, abi = (data.get(k) for k in ("version", "implementation", "abi"))
        if not all(isinstance(v, str) and v for v in (version, implementation, abi)):
            return None
        gil = data.get("gil_enabled")
        executable = data.get("executable")
        return cls(
            version=str(version),
            implementation=str(implementation),
            abi=str(abi),
            free_threaded=data.get("free_threaded") is True,
            gil_enabled=gil if isinstance(gil, bool) else None,
            executable=executable if isinstance(executable, str) and executable else None,
        )


def contradiction(planned: PythonKey | None, ran: Interpreter | None) -> str | None:
    """Why a cell's interpreter is not the Python its column was planned for (None: it is, or nothing
    was planned). A cell that recorded no interpreter cannot prove its Python: that is a contradiction too."""
    if planned is None:
        return None
    if ran is None:
        return f"planned for {planned.display}, and the cell recorded no interpreter"
    if ran.key != planned:
        return f"planned for {planned.display}, ran on {ran.describe()}"
    return None
