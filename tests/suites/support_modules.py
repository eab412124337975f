"""The suites' torch-free support modules, loaded by path for the fast tests (nothing here imports torch)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SUITES = Path(__file__).resolve().parents[2] / "suites"


def load(name: str) -> ModuleType:
    """``suites/_support/<name>.py`` as a module of its own (``compat_support_<name>``); probe.py and
    expectations.py import only the standard library at module level."""
    key = f"compat_support_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, SUITES / "_support" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module
