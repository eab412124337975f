"""Every shared library that the torch wheel and its vendor wheels bundle is present and loads.

`import torch` loads only part of what a GPU wheel bundles (cuDNN's engine libraries,
`libtorch_cuda_linalg`, NCCL plugins load later, on first use), so a broken wheel can pass an
import and fail in the middle of a test run. This check, run at image build time by
verify_torch.py, covers them all:

1. Present as the wheel's RECORD says: every shared library listed in the RECORD of torch and of
   each distribution it requires (nvidia-*, triton, the ROCm and XPU runtime wheels) exists, with
   the RECORD's size and sha256 (pip keeps the wheel's rows, so a file the wheel lacked is still
   listed).
2. Loads: each is dlopen()ed in a child process, after `import torch` as at run time. A library
   that crashes the loader (a truncated file: SIGBUS) costs that child, never the check: the
   parent names the library and goes on in a new child.

A library that does not load only because it needs a library that a GPU host or a cluster
provides (the driver's libcuda, MPI, UCX, libfabric, RDMA; harness/backends.toml
[host_libraries]) is noted, not refused.

Stdlib only: `harness build` copies this file into every image. Run as a script it is the
child that loads libraries (a JSON list of paths on stdin, one JSON line per event on stdout).
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import fnmatch
import hashlib
import importlib.metadata as metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SHARED_LIBRARY = re.compile(r"\.so(\.\d+)*$")
CHILD_TIMEOUT = 600.0  # seconds for one child to load what is left (a loader that hangs is a failure too)
# A requirement's name and the extras it asks for: `rocm[libraries,device-all]==7.14` (PEP 508).
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")
# The extras a requirement's marker names (`; extra == "libraries"`, either quote, either side).
_EXTRA_MARKER = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]|['"]([^'"]+)['"]\s*==\s*extra\b""")


@dataclass(frozen=True)
class Library:
    dist: str  # distribution name and version, e.g. "nvidia-cudnn-cu13 9.20.0.48"
    relpath: str  # as the RECORD names it, e.g. nvidia/cudnn/lib/libcudnn.so.9
    path: Path
    size: int | None  # from the RECORD
    sha256: str | None  # urlsafe base64 without padding, from the RECORD

    @property
    def label(self) -> str:
        return f"{self.dist}: {self.relpath}"


@dataclass
class Report:
    libraries: int = 0
    loaded: int = 0
    problems: list[str] = field(default_factory=list)  # each one line naming the wheel and the library
    notes: list[str] = field(default_factory=list)  # libraries left to the host, with the reason


# -- which libraries -------------------------------------------------------------------------
def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement(text: str) -> tuple[str, set[str], set[str]] | None:
    """A Requires-Dist line as (name, extras it asks of that distribution, extras its marker names):
    `rocm[libraries,device-all]==7.14` -> (rocm, {libraries, device-all}, set());
    `rocm-sdk-libraries==7.14; extra == "libraries"` -> (rocm-sdk-libraries, set(), {libraries})."""
    match = _REQUIREMENT.match(text)
    if not match:
        return None
    asked = {_key(extra) for extra in (match.group(2) or "").split(",") if extra.strip()}
    return match.group(1), asked, {_key(left or right) for left, right in _EXTRA_MARKER.findall(text)}


def dependency_closure(root: str = "torch") -> list[metadata.Distribution]:
    """The installed distribution `root` and every installed distribution it requires, recursively,
    with the extras each requirement asks for: torch's ROCm 7.14 build requires
    `rocm[libraries,device-all]`, and only those extras of the `rocm` meta package pull in the
    runtime wheels (`rocm-sdk-libraries`, `rocm-sdk-device-*`) whose `_rocm_sdk_*` packages hold
    the libraries. An extra nobody asked for is not what the wheel needs and is left out."""
    found: dict[str, metadata.Distribution] = {}
    extras: dict[str, set[str]] = {}  # the extras asked of each distribution so far
    todo: list[tuple[str, set[str]]] = [(root, set())]
    while todo:
        name, asked = todo.pop()
        key = _key(name)
        if key in found and asked <= extras[key]:
            continue
        try:
            dist = found.get(key) or metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[key] = dist
        extras[key] = extras.get(key, set()) | asked
        for text in dist.requires or []:
            requirement = _requirement(text)
            if requirement is None:
                continue
            wanted, wanted_extras, marker_extras = requirement
            if marker_extras and not marker_extras & extras[key]:
                continue
            todo.append((wanted, wanted_extras))
    return sorted(found.values(), key=lambda d: _key(d.metadata["Name"]))


def bundled_libraries(dists: Iterable[metadata.Distribution]) -> list[Library]:
    libraries = []
    for dist in dists:
        label = f"{dist.metadata['Name']} {dist.version}"
        for item in dist.files or []:
            if not SHARED_LIBRARY.search(item.name):
                continue
            digest = item.hash.value if item.hash and item.hash.mode == "sha256" else None
            libraries.append(Library(label, str(item), Path(str(dist.locate_file(item))), item.size, digest))
    return libraries


# -- 1. present as the RECORD says -------------------------------------------------------------
def _sha256(path: Path) -> str:
    """The file's digest as a wheel's RECORD writes it (urlsafe base64, no padding)."""
    with path.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def record_problem(library: Library) -> str | None:
    try:
        size = library.path.stat().st_size
    except FileNotFoundError:
        return f"{library.label} is missing (the wheel's RECORD lists it)"
    except OSError as err:
        return f"{library.label} cannot be read: {err.strerror}"
    if library.size is not None and size != library.size:
        return f"{library.label} is {size} bytes, the wheel's RECORD says {library.size} (truncated or replaced)"
    if library.sha256 and _sha256(library.path) != library.sha256:
        return f"{library.label} differs from the wheel's RECORD (sha256; corrupted or replaced)"
    return None


# -- 2. loads, in child processes ---------------------------------------------------------------
def _signal_name(returncode: int) -> str:
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return signal.Signals(-returncode).name
    return f"exit {returncode}"


def host_reason(name: str, host: Sequence[tuple[str, str]]) -> str | None:
    return next((reason for pattern, reason in host if fnmatch.fnmatch(name, pattern)), None)


def _run_child(paths: list[str], import_torch: bool) -> tuple[list[dict], int]:
    """Load `paths` in one child; its events (one dict per line) and its exit code."""
    argv = [sys.executable, os.path.abspath(__file__)] + (["--import-torch"] if import_torch else [])
    try:
        done = subprocess.run(
            argv, input=json.dumps(paths), capture_output=True, text=True, timeout=CHILD_TIMEOUT, check=False
        )
        out, code = done.stdout, done.returncode
    except subprocess.TimeoutExpired as err:
        out = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        code = -int(signal.SIGKILL)
        out += "\n" + json.dumps({"timeout": True})
    events = []
    for line in out.splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                events.append(event)
    return events, code


def load_problems(libraries: Sequence[Library], host: Sequence[tuple[str, str]], report: Report) -> None:
    """Load every library in child processes; a crash costs one child and names its library."""
    todo = list(libraries)
    import_torch = True
    while todo:
        events, code = _run_child([str(lib.path) for lib in todo], import_torch)
        imported = not import_torch
        current: int | None = None  # the library being loaded when the child stopped
        done = 0
        for event in events:
            if "import_torch" in event:
                imported = True
                if event["import_torch"] != "ok":
                    report.notes.append(f"import torch failed, libraries loaded without it: {event['import_torch']}")
            elif "begin" in event:
                current = int(event["begin"])
            elif "done" in event:
                current, done = None, int(event["done"]) + 1
                _judge(todo[int(event["done"])], event, host, report)
        if done == len(todo):
            return
        if not imported:
            # `import torch` itself killed the child: load each library without it, so the culprit is named.
            report.notes.append(f"import torch crashed the loading child ({_signal_name(code)}); loaded without it")
            import_torch = False
            continue
        culprit = done if current is None else current
        if any(event.get("timeout") for event in events):
            report.problems.append(f"{todo[culprit].label} hung the loader (no answer within {CHILD_TIMEOUT:.0f} s)")
        else:
            report.problems.append(f"{todo[culprit].label} crashed the loader ({_signal_name(code)})")
        todo = todo[culprit + 1 :]


def _judge(library: Library, event: dict, host: Sequence[tuple[str, str]], report: Report) -> None:
    error = event.get("error")
    if not error:
        report.loaded += 1
        return
    missing = [str(name) for name in event.get("missing") or []]
    reasons = [host_reason(name, host) for name in missing]
    if missing and all(reasons):
        needs = "; ".join(f"{name}: {reason}" for name, reason in zip(missing, reasons, strict=True))
        report.notes.append(f"{library.label} needs what the host provides ({needs})")
        return
    not_host = [name for name, reason in zip(missing, reasons, strict=True) if not reason]
    if not_host:
        report.problems.append(
            f"{library.label} does not load: needs {', '.join(not_host)}, which neither the wheels nor the image "
            f"provide ({error})"
        )
    else:
        report.problems.append(f"{library.label} does not load: {error}")


def check(host: Sequence[tuple[str, str]] = (), root: str = "torch") -> Report:
    """The whole check: RECORD first (a file that is not what the wheel shipped is not loaded),
    then every library loaded in child processes."""
    libraries = bundled_libraries(dependency_closure(root))
    report = Report(libraries=len(libraries))
    if not libraries:
        report.problems.append(f"no installed distribution {root!r} with shared libraries (is {root} installed?)")
        return report
    broken = [problem for problem in map(record_problem, libraries) if problem]
    if broken:
        report.problems.extend(broken)
        return report  # loading a truncated library only adds crashes of the libraries that need it
    load_problems(libraries, host, report)
    return report


# -- the child ----------------------------------------------------------------------------------
def _loaded_names() -> set[str]:
    """Basenames of the shared objects mapped into this process (Linux)."""
    try:
        text = Path("/proc/self/maps").read_text()
    except OSError:
        return set()
    return {os.path.basename(line.split()[-1]) for line in text.splitlines() if "/" in line}


def missing_dependencies(path: str, error: str) -> list[str]:
    """Every dependency of `path` the loader cannot find (ldd lists all; dlopen names only the first),
    leaving out those this process has already loaded (torch loads its own first)."""
    names: list[str] = []
    ldd = shutil.which("ldd")
    if ldd:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run([ldd, path], capture_output=True, text=True, timeout=60, check=False).stdout
            names = [line.split()[0] for line in out.splitlines() if "=> not found" in line]
    if not names:
        first = error.split(": cannot open shared object file", 1)[0].strip()
        if first and first != path and "/" not in first:
            names = [first]
    loaded = _loaded_names()
    return [name for name in names if name not in loaded]


def _emit(event: dict) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def child_main(argv: list[str]) -> int:
    if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
        del sys.path[0]  # this file's folder (the harness, or /opt/torch-compat) is not torch's business
    paths = json.loads(sys.stdin.read())
    if "--import-torch" in argv:
        try:
            import torch  # noqa: F401  (only ever in the image, or the native host under test)

            _emit({"import_torch": "ok"})
        except Exception as err:  # a torch that does not import still gets each library named
            _emit({"import_torch": f"{type(err).__name__}: {str(err)[:300]}"})
    mode = os.RTLD_LAZY | os.RTLD_LOCAL
    for index, path in enumerate(paths):
        _emit({"begin": index})
        try:
            ctypes.CDLL(path, mode=mode)
            _emit({"done": index})
        except OSError as err:
            text = str(err)[:500]
            _emit({"done": index, "error": text, "missing": missing_dependencies(path, text)})
    return 0


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
