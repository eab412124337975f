"""Argument types shared by the verbs: backends are named by variant (cu132) or family (cuda)."""

from __future__ import annotations

import argparse

from harness.errors import RegistryError, did_you_mean
from harness.registry import FAMILIES, Backend, get_backend, load_registry

BACKEND_HELP = (
    "a build variant (cpu, cu130, cu132, rocm7.14, xpu, ...) or a family (cuda, rocm) for its current default"
)


def _unknown_backend(text: str, err: RegistryError) -> argparse.ArgumentTypeError:
    """A near miss is named (`cdua`: did you mean cuda?); anything else gets the registry's list."""
    hint = did_you_mean(text, [*load_registry(), *FAMILIES])
    return argparse.ArgumentTypeError(f"unknown backend {text!r}{hint}" if hint else str(err))


def backend(text: str) -> Backend:
    """--backend X for one run, image or wheelhouse: a variant id; a family name means its current default
    variant. Resolved here, once: the verbs pass the Backend on (RunOptions, build_spec), never its id."""
    try:
        return get_backend(text)
    except RegistryError as err:
        raise _unknown_backend(text, err) from None


def backend_selector(text: str) -> str:
    """--backend X of a plan: a variant id or a family name, kept as given (a family expands per release)."""
    if text in FAMILIES:
        return text
    try:
        return load_registry().backend(text).id
    except RegistryError as err:
        raise _unknown_backend(text, err) from None


PYTHON_HELP = "a CPython like 3.15, or 3.14t (free-threaded)"


def python_version(text: str) -> str:
    """--python 3.15 of an image or a cell: a CPython key (3.14t: free-threaded); a typo names the valid keys."""
    from harness.errors import UsageError
    from harness.interpreters import parse_python

    try:
        return parse_python(text, valid=[k.label for k in load_registry().pythons], what="").label
    except UsageError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def python_or_path(text: str) -> str:
    """--python of `harness run`: a CPython key (3.15: natively python3.15 on PATH, in a container the
    image's), or, natively, the path of an interpreter. A word that starts with a digit is a key."""
    return python_version(text) if text[:1].isdigit() else text
