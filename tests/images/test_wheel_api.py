"""Reading a wheel's public API from its sources: small wheels built here from snippets of torch's own
files (the idioms the reader must follow), and the recorded slim wheels of PyPI's 2.14.1 and 2.15.0
(tests/data/api-wheels, made by tools/slim_wheel.py)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from harness.api_changes import WheelApi
from harness.errors import InputError
from harness.images.wheel_api import public_modules, read_wheel_api
from harness.images.wheel_cache import default_cache

API_WHEELS = Path(__file__).resolve().parents[1] / "data" / "api-wheels"

# Shaped like torch 2.15.0's files (torch/__init__.py, torch/_C/*.pyi, torch/nn/functional.py,
# torch/accelerator/__init__.py, torch/optim/__init__.py), cut down to the statements that matter.
TORCH_INIT = """
import builtins
from typing import Any as Any
from torch._utils import _import_dotted_name
__all__ = [
    "Tensor",
    "compile",
]
from torch import _C as _C
__name, __obj = "", None
for __name in dir(_C):
    if __name[0] != "_" and not __name.endswith("Base"):
        __all__.append(__name)
for __name in dir(_C._VariableFunctions):
    if __name.startswith("__"):
        continue
    if not __name.startswith("_"):
        __all__.append(__name)
del __name, __obj
__all__.extend(["e", "pi"])
__all__.extend(name for name in dir(torch) if name.startswith("float"))
def compile(model=None): ...
class Tensor: ...
from torch import nn as nn, accelerator as accelerator
"""
C_INIT = """
from torch._C import _VariableFunctions as _VariableFunctions
class Generator: ...
class _Private: ...
def set_num_threads(n: int) -> None: ...
"""
VARIABLE_FUNCTIONS = """
from torch import Tensor
__all__ = ["_scaled_addmm", "addmm", "scaled_mm_v2_helper"]
def addmm(*a): ...
"""
FUNCTIONAL = '''"""Functional interface."""
import math
from typing import Callable
import torch
from torch import Tensor
from torch._C import _infer_size
from torch.nn.modules.utils import _pair, _single
from ._reduction import legacy_get_enum
from .grad import conv1d_input as conv1d_input
conv1d = torch.conv1d
def scaled_mm(mat_a, mat_b): ...
def scaled_addmm(input, mat1, mat2): ...
def _expand_single_value(x): ...
class ScalingType: ...
if True:
    def linear_cross_entropy(input, weight, target): ...
try:
    from torch.nn._varlen import varlen_helper
except ImportError:
    pass
'''
ACCELERATOR = """
from .random import *
from .graphs import Graph
from ._utils import _get_device_index
__all__ = ["Graph", "current_stream"] + random.__all__
from . import random
def current_stream(): ...
"""
RANDOM = '__all__ = ["initial_seed", "get_rng_state", "get_rng_state_all"]\ndef initial_seed(): ...\n'
OPTIM = """
from . import functional as functional, lr_scheduler
from .adam import Adam
from .sgd import *
__all__ = ["Adam", "SGD", "functional", "lr_scheduler"]
"""
SGD = "__all__ = ['SGD', 'sgd']\nclass SGD: ...\ndef sgd(): ...\n"
OPTIM_FUNCTIONAL = """
from torch.optim.adam import adam
from torch.optim.sgd import sgd
__all__ = ["adam", "sgd"]
"""

SNIPPETS = {
    "torch/__init__.py": TORCH_INIT,
    "torch/_C/__init__.pyi": C_INIT,
    "torch/_C/_VariableFunctions.pyi": VARIABLE_FUNCTIONS,
    "torch/_utils.py": "def _import_dotted_name(name): ...\n",
    "torch/nn/__init__.py": "from .modules import *\nfrom torch.nn import functional as functional\n",
    "torch/nn/modules/__init__.py": "from .linear import Linear\n__all__ = ['Linear']\n",
    "torch/nn/modules/linear.py": "class Linear: ...\n",
    "torch/nn/modules/utils.py": "def _pair(x): ...\ndef _single(x): ...\n",
    "torch/nn/functional.py": FUNCTIONAL,
    "torch/nn/functional.pyi": "def conv2d(input, weight): ...\n",
    "torch/nn/grad.py": "def conv1d_input(): ...\n",
    "torch/nn/_reduction.py": "def legacy_get_enum(): ...\n",
    "torch/accelerator/__init__.py": ACCELERATOR,
    "torch/accelerator/random.py": RANDOM,
    "torch/accelerator/graphs.py": "class Graph: ...\n",
    "torch/accelerator/_utils.py": "def _get_device_index(): ...\n",
    "torch/optim/__init__.py": OPTIM,
    "torch/optim/adam.py": "__all__ = ['Adam', 'adam']\nclass Adam: ...\ndef adam(): ...\n",
    "torch/optim/sgd.py": SGD,
    "torch/optim/lr_scheduler.py": "class StepLR: ...\n",
    "torch/optim/functional.py": OPTIM_FUNCTIONAL,
    "torch/testing/_internal/common_cuda.py": "TEST_CUDA = False\n",
    "torch/utils/bad_syntax.py": "def broken(:\n",
    "torch/utils/__init__.py": "",
    "torch/_vendor/foo-bar.py": "x = 1\n",
    "torch/lib/libtorch_cpu.so": "\x7fELF",
}


def make_wheel(directory: Path, files: dict[str, str], version: str = "2.15.0", name: str = "torch") -> Path:
    """A wheel of these files with the metadata pip checks (a real zip: pip can download it from a folder)."""
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        tags = "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        archive.writestr(f"{info}/WHEEL", tags)
        archive.writestr(f"{info}/RECORD", "")
    return wheel


@pytest.fixture
def api(tmp_path: Path) -> WheelApi:
    return read_wheel_api(make_wheel(tmp_path, SNIPPETS))


def test_version_from_metadata(api: WheelApi) -> None:
    assert (api.package, api.version) == ("torch", "2.15.0")


def test_dunder_all_with_literal_extensions_and_dir_loops(api: WheelApi) -> None:
    names = set(api.modules["torch"])
    # the literal list, .extend of a literal, and the two `for n in dir(M): __all__.append(n)` loops:
    # dir(_C) is torch/_C/__init__.pyi's public names, dir(_C._VariableFunctions) its stub's __all__
    assert {"Tensor", "compile", "e", "pi", "Generator", "set_num_threads", "addmm", "scaled_mm_v2_helper"} <= names
    assert not {n for n in names if n.startswith("_")}, "a private name is not public API"
    assert "Any" not in names and "nn" not in names, "__all__ decides, not what the module imports"


def test_public_top_level_names_without_dunder_all(api: WheelApi) -> None:
    names = set(api.modules["torch.nn.functional"])
    assert {"conv1d", "scaled_mm", "scaled_addmm", "ScalingType", "linear_cross_entropy"} <= names
    assert "conv1d_input" in names, "a name imported from inside the package is re-exported"
    assert "conv2d" in names, "the .pyi stub's names count too when neither file has __all__"
    # what `from torch.nn.functional import *` would give: names imported from the package count (under
    # `try` too), modules and names from outside it (math, typing) and private names do not
    assert {"Tensor", "legacy_get_enum", "varlen_helper"} <= names, names
    assert not {"math", "Callable", "torch", "_infer_size", "_pair", "_expand_single_value"} & names, names


def test_star_import_and_other_modules_all(api: WheelApi) -> None:
    assert api.modules["torch.accelerator"] == (
        "Graph",
        "current_stream",
        "get_rng_state",
        "get_rng_state_all",
        "initial_seed",
    )
    assert api.modules["torch.nn"] == ("Linear", "functional"), "from .modules import * follows its __all__"
    assert api.modules["torch.optim.functional"] == ("adam", "sgd")


def test_only_public_modules_and_the_package_sources(api: WheelApi) -> None:
    assert "torch.testing._internal.common_cuda" not in api.modules
    assert "torch._C" not in api.modules and "torch.accelerator._utils" not in api.modules
    assert "torch.utils.bad_syntax" in api.modules and api.modules["torch.utils.bad_syntax"] == ()
    assert not any("foo-bar" in m for m in api.modules)
    assert "torch.accelerator.random.initial_seed" in api.names()


def test_public_modules_are_read_from_the_file_list_alone(tmp_path: Path, api: WheelApi) -> None:
    (tmp_path / "w").mkdir()
    wheel = make_wheel(tmp_path / "w", SNIPPETS)
    assert public_modules(wheel) == set(api.modules), "the modules read_wheel_api parses, nothing parsed"
    (tmp_path / "junk.whl").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not a readable wheel"):
        public_modules(tmp_path / "junk.whl")


def test_chosen_modules_only(tmp_path: Path) -> None:
    api = read_wheel_api(make_wheel(tmp_path, SNIPPETS), modules=["torch.accelerator", "torch.absent"])
    assert list(api.modules) == ["torch.accelerator"]


def test_cyclic_star_imports_end(tmp_path: Path) -> None:
    files = {
        "torch/__init__.py": "from torch.a import *\n",
        "torch/a.py": "from torch.b import *\ndef f(): ...\n",
        "torch/b.py": "from torch.a import *\ndef g(): ...\n",
    }
    api = read_wheel_api(make_wheel(tmp_path, files))
    assert set(api.modules["torch.a"]) == {"f", "g"}


def test_relative_imports_of_a_package_and_of_a_module(tmp_path: Path) -> None:
    files = {
        "torch/__init__.py": "",
        "torch/x/__init__.py": "from .y import *\nfrom .. import z as zz\n",
        "torch/x/y.py": "from ..z import helper\n__all__ = ['helper', 'Y']\n",
        "torch/z.py": "def helper(): ...\n",
    }
    api = read_wheel_api(make_wheel(tmp_path, files))
    assert api.modules["torch.x"] == ("Y", "helper", "zz"), api.modules


def test_not_a_wheel_is_an_input_error(tmp_path: Path) -> None:
    bad = tmp_path / "torch-2.15.0-py3-none-any.whl"
    bad.write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not a readable wheel"):
        read_wheel_api(bad)
    with pytest.raises(InputError, match="no torch/ package"):
        read_wheel_api(make_wheel(tmp_path, {"numpy/__init__.py": ""}, name="numpy"))


# ---------------------------------------------------------------- the recorded 2.14.1 and 2.15.0 wheels
def _slim(version: str) -> Path:
    return API_WHEELS / f"torch-{version}-py3-none-any.whl"


def test_recorded_slim_wheels_are_small_and_have_provenance() -> None:
    total = sum(p.stat().st_size for p in API_WHEELS.glob("*.whl"))
    assert total < 3 * 1024 * 1024, f"the recorded wheels take {total} bytes"
    provenance = (API_WHEELS / "PROVENANCE.md").read_text(encoding="utf-8")
    for version in ("2.14.1", "2.15.0"):
        assert f"`torch-{version}-py3-none-any.whl` <- `torch-{version}-cp311" in provenance
        assert "sha256" in provenance


def test_recorded_wheels_read_as_the_releases_public_api() -> None:
    old, new = read_wheel_api(_slim("2.14.1")), read_wheel_api(_slim("2.15.0"))
    assert (old.version, new.version) == ("2.14.1", "2.15.0")
    assert len(old.modules) > 800 and len(old.modules["torch"]) > 900, "torch's C functions come through dir()"
    for name in ("add", "matmul", "compile", "float8_e8m0fnu", "Tensor", "Generator"):
        assert name in old.modules["torch"], name
    # 2.14's device-agnostic RNG state lives in torch.accelerator.random (torch.accelerator imports the module)
    assert old.modules["torch.accelerator.random"] == ("get_rng_state", "get_rng_state_all", "initial_seed")
    assert "Graph" in old.modules["torch.accelerator"] and "initial_seed" not in old.modules["torch.accelerator"]
    assert "scaled_addmm" not in old.modules["torch.nn.functional"]
    functional = set(new.modules["torch.nn.functional"])
    assert {"scaled_addmm", "scaled_addmm_", "scaled_mm", "linear_cross_entropy"} <= functional


def _real_wheels() -> list[Path]:
    """PyPI's real 2.14.1 and 2.15.0 wheels where this machine has them (TORCH_COMPAT_API_WHEELS, else
    the api-diff cache): the slim fixture must read exactly as they do."""
    where = Path(os.environ.get("TORCH_COMPAT_API_WHEELS") or default_cache())
    found = [next(iter(sorted(where.glob(f"torch-{v}-cp*.whl"))), None) for v in ("2.14.1", "2.15.0")]
    return [p for p in found if p is not None]


@pytest.mark.slow  # reads two ~550 MB wheels (about 15 s)
@pytest.mark.skipif(len(_real_wheels()) < 2, reason="PyPI's torch 2.14.1 and 2.15.0 wheels are not on this machine")
def test_slim_wheels_read_as_the_real_ones() -> None:
    for real in _real_wheels():
        api = read_wheel_api(real)
        slim = read_wheel_api(_slim(api.version))
        assert api.modules == slim.modules, f"{real.name}: the recorded slim wheel reads differently"
