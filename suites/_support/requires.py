"""Requirement gates that skip with a class tag the harness understands.

Every skip reason starts with exactly one tag:

* ``[unsupported]``  this backend or torch build lacks the feature (a compatibility fact);
* ``[hardware]``     the test needs a device or capability that is absent here;
* ``[dependency]``   an optional package is missing.

Known issues are not skips: they come from ``expectations/<backend>.toml`` and are
applied by conftest as non-strict xfails tagged ``[known-issue <link>]``.

Use a :class:`Requirement` as a decorator through :func:`requires`, or imperatively
inside a test body through :func:`need` (for gates that depend on parameters)::

    @requires(api("torch.accelerator.Graph", since="2.12"), accelerator("cuda", "xpu"))
    def test_x(device): ...

    def test_y(device, backend):
        need(cusparselt_backend())
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import NoReturn

import pytest

from _support import env as _env

UNSUPPORTED = "unsupported"
HARDWARE = "hardware"
DEPENDENCY = "dependency"
TAGS = (UNSUPPORTED, HARDWARE, DEPENDENCY)
BROKEN_MARK = "compat_broken"  # an API present in the build that fails to import: never a skip


class BrokenAPI(RuntimeError):
    """An API the build has but that raises while it is imported or looked up: a regression, not an absence."""


@dataclass(frozen=True)
class Requirement:
    ok: bool
    tag: str
    reason: str
    broken: bool = False  # the API is there and broken: fail (claimed) or error (elsewhere), never skip

    @property
    def skip_reason(self) -> str:
        return f"[{self.tag}] {self.reason}"


def _fmt(v: tuple[int, ...] | None) -> str:
    return ".".join(str(p) for p in v) if v else "none"


def _here() -> str:
    e = _env.get()
    return f"backend {e.backend}, device {e.device_label}"


def skip(tag: str, reason: str) -> NoReturn:
    """Skip the running test with a class tag."""
    __tracebackhide__ = True  # report the skip at the test, not here
    if tag not in TAGS:
        raise ValueError(f"unknown skip class {tag!r}; use one of {TAGS}")
    pytest.skip(f"[{tag}] {reason}")


def skip_unsupported(reason: str) -> NoReturn:
    __tracebackhide__ = True
    skip(UNSUPPORTED, reason)


def skip_hardware(reason: str) -> NoReturn:
    __tracebackhide__ = True
    skip(HARDWARE, reason)


def skip_dependency(reason: str) -> NoReturn:
    __tracebackhide__ = True
    skip(DEPENDENCY, reason)


def requires(*reqs: Requirement) -> pytest.MarkDecorator:
    """A skipif mark carrying the first unmet requirement's tagged reason; a broken API is a
    ``compat_broken`` mark instead (conftest fails the test where it is claimed, errors it elsewhere)."""
    for r in reqs:
        if r.broken:
            return getattr(pytest.mark, BROKEN_MARK)(r.reason)
        if not r.ok:
            return pytest.mark.skipif(True, reason=r.skip_reason)
    return pytest.mark.skipif(False, reason="all requirements met")


def need(*reqs: Requirement) -> None:
    """Imperative form of :func:`requires` for use inside a test body; a broken API raises :class:`BrokenAPI`."""
    __tracebackhide__ = True
    for r in reqs:
        if r.broken:
            raise BrokenAPI(r.reason)
        if not r.ok:
            pytest.skip(r.skip_reason)


# ---------------------------------------------------------------- requirement constructors
def torch_at_least(version: str, what: str) -> Requirement:
    """``[unsupported] <what> needs torch>=2.12 (found 2.11.0)``."""
    e = _env.get()
    want = tuple(int(p) for p in version.split("."))
    have = e.torch_version[: len(want)]
    return Requirement(have >= want, UNSUPPORTED, f"{what} needs torch>={version} (found {e.torch_base})")


def accelerator(*kinds: str, what: str = "this test") -> Requirement:
    """A device of one of ``kinds`` (torch device types: ``cuda`` covers ROCm, ``xpu``)."""
    e = _env.get()
    names = " or ".join(k.upper() if k != "cuda" else "CUDA/ROCm" for k in kinds)
    return Requirement(
        e.accelerator in kinds,
        HARDWARE,
        f"{what} needs {'an' if names[0] in 'AEIOUX' else 'a'} {names} device; none is available here ({_here()})",
    )


def any_accelerator(what: str = "this test") -> Requirement:
    e = _env.get()
    return Requirement(
        e.accelerator is not None, HARDWARE, f"{what} needs an accelerator device; none is available ({_here()})"
    )


def nvidia_gpu(what: str = "this test") -> Requirement:
    """An NVIDIA CUDA device: no device is [hardware], a ROCm device is [unsupported]."""
    e = _env.get()
    if e.is_rocm:
        return Requirement(False, UNSUPPORTED, f"{what} is CUDA-only and not available on ROCm ({_here()})")
    return Requirement(e.is_nvidia, HARDWARE, f"{what} needs an NVIDIA CUDA device; none is available ({_here()})")


def cuda_runtime_at_least(version: str, what: str) -> Requirement:
    e = _env.get()
    want = tuple(int(p) for p in version.split("."))
    ok = e.cuda_runtime is not None and e.cuda_runtime[: len(want)] >= want
    return Requirement(ok, UNSUPPORTED, f"{what} needs CUDA runtime>={version} (found {_fmt(e.cuda_runtime)})")


def module(name: str, install_hint: str | None = None) -> Requirement:
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    hint = f" (install: {install_hint})" if install_hint else ""
    return Requirement(found, DEPENDENCY, f"optional package {name!r} is not installed{hint}")


def attribute(obj: object, dotted: str, what: str) -> Requirement:
    """An API attribute exists in this torch build (a missing one is [unsupported])."""
    cur: object = obj
    for part in dotted.split("."):
        if not hasattr(cur, part):
            return Requirement(False, UNSUPPORTED, f"{what}: this torch build has no {dotted}")
        cur = getattr(cur, part)
    return Requirement(True, UNSUPPORTED, "")


def resolve(dotted: str) -> object | None:
    """The object at ``dotted`` (``torch.xpu.temperature``, ``torch.distributed._symmetric_memory.empty``),
    or None when the build does not have it: attributes first, submodules imported where an attribute is
    missing. **Absent** is an attribute that is not there or a ``ModuleNotFoundError`` for that very module (or
    a parent the path names); an attribute whose value is None counts as absent. Anything else raised while
    importing or looking it up is **broken**: :class:`BrokenAPI`, never None (a crash must not read as a
    release that lacks the feature)."""
    import importlib

    parts = dotted.split(".")
    try:
        cur: object = importlib.import_module(parts[0])
    except ModuleNotFoundError as e:
        if e.name == parts[0]:
            return None
        raise BrokenAPI(f"{dotted}: importing {parts[0]} raised {type(e).__name__}: {e}") from e
    except Exception as e:
        raise BrokenAPI(f"{dotted}: importing {parts[0]} raised {type(e).__name__}: {e}") from e
    for i, part in enumerate(parts[1:], 1):
        try:
            found = hasattr(cur, part)
        except Exception as e:  # a lazy attribute (module __getattr__) that crashes
            raise BrokenAPI(f"{dotted}: reading {part} raised {type(e).__name__}: {e}") from e
        if found:
            cur = getattr(cur, part)
            if cur is None:
                return None
            continue
        name = ".".join(parts[: i + 1])
        try:
            cur = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is not None and name.startswith(e.name):  # that module (or the parent named) is not there
                return None
            raise BrokenAPI(f"{dotted}: importing {name} raised ModuleNotFoundError: {e}") from e
        except Exception as e:
            raise BrokenAPI(f"{dotted}: importing {name} raised {type(e).__name__}: {e}") from e
    return cur


def api(dotted: str, since: str | None = None) -> Requirement:
    """The build has the API ``dotted``; a build without it is ``[unsupported]``.

    Which release a test belongs to is decided by the API's presence, never by parsing versions:
    ``api("torch.xpu.list_gpu_processes", since="2.14")`` skips on 2.13 with
    ``[unsupported] torch.xpu.list_gpu_processes (new in 2.14) is absent from torch 2.13.0``. ``since``
    only words the reason.
    """
    try:
        found = resolve(dotted) is not None
    except BrokenAPI as e:
        return Requirement(False, UNSUPPORTED, str(e), broken=True)
    new = f" (new in {since})" if since else ""
    e = _env.get()
    if not found and since and _env.predicted() and e.torch_version[:2] >= tuple(int(p) for p in since.split(".")):
        found = True  # --predict: an API of a later release than the installed torch is taken as there
    return Requirement(found, UNSUPPORTED, f"{dotted}{new} is absent from torch {e.torch_base}")


def fact(ok: bool, tag: str, reason: str) -> Requirement:
    """Any other condition, with an explicit class tag (under --predict a [hardware] fact, read from this host's
    torch, is taken as met: the predicted machine has its device)."""
    if tag not in TAGS:
        raise ValueError(f"unknown skip class {tag!r}; use one of {TAGS}")
    return Requirement(bool(ok) or (tag == HARDWARE and _env.predicted()), tag, reason)
