"""The harness runs on CI boxes without torch: importing all of it must not import torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cellfactory import REPO

CHECK = """
import importlib, pkgutil, sys
import harness
failed = []
for module in pkgutil.walk_packages(harness.__path__, "harness."):
    try:
        importlib.import_module(module.name)
    except Exception as err:
        failed.append(f"{module.name}: {err!r}")
print("FAILED" if failed else "OK", failed)
print("TORCH" if "torch" in sys.modules else "NO-TORCH")
"""


@pytest.mark.slow  # imports every module in a fresh interpreter
def test_importing_every_harness_module_leaves_torch_out():
    done = subprocess.run(
        [sys.executable, "-c", CHECK], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert "NO-TORCH" in done.stdout, done.stdout
    assert done.stdout.startswith("OK"), done.stdout
